#!/usr/bin/env python3
"""Self-test of the reference implementation (tests/oracle/key_averages.py)
against the worked example of key-averages-spec.md Part D.

The expected tables below are copied verbatim from spec section D3.
Run: python3 tests/oracle/test_oracle.py   (stdlib unittest; no other deps)
"""

import copy
import gzip
import os
import subprocess
import sys
import tempfile
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

import key_averages as ka  # noqa: E402

EXAMPLE = os.path.join(HERE, "spec_example.json")

# D3: print(prof.key_averages().table())
D3_DEFAULT = "".join([
    '-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n',
    '                                                   Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg     Self CUDA   Self CUDA %    CUDA total  CUDA time avg       CPU Mem  Self CPU Mem      CUDA Mem  Self CUDA Mem    # of Calls  \n',
    '-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n',
    '                                          ProfilerStep*        74.88%     149.750us       100.00%     200.000us     200.000us       0.000us         0.00%       9.000us       9.000us           0 B           0 B           0 B      -4.00 KB             1  \n',
    '                                              aten::add        13.36%      26.725us        25.12%      50.250us      25.125us       9.000us       100.00%       9.000us       4.500us           0 B           0 B       4.00 KB           0 B             2  \n',
    '                                            aten::empty         1.56%       3.125us         1.56%       3.125us       3.125us       0.000us         0.00%       0.000us       0.000us           0 B           0 B       4.00 KB       4.00 KB             1  \n',
    '                                       cudaLaunchKernel        10.20%      20.400us        10.20%      20.400us      10.200us       0.000us         0.00%       0.000us       0.000us           0 B           0 B           0 B           0 B             2  \n',
    '                                          ProfilerStep*         0.00%       0.000us         0.00%       0.000us       0.000us      74.679us       829.77%      74.679us      74.679us           0 B           0 B           0 B           0 B             1  \n',
    'void at::native::vectorized_elementwise_kernel<4, at...         0.00%       0.000us         0.00%       0.000us       0.000us       9.000us       100.00%       9.000us       4.500us           0 B           0 B           0 B           0 B             2  \n',
    '-------------------------------------------------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n',
    'Self CPU time total: 200.000us\n',
    'Self CUDA time total: 9.000us\n',
])

# D3: table(sort_by="self_cuda_time_total", row_limit=-1). The spec prints the
# rows truncated ("  ..."), so each expected line is a prefix of the real one.
D3_SORTED_PREFIXES = [
    '                                          ProfilerStep*         0.00%       0.000us         0.00%       0.000us       0.000us      74.679us       829.77%  ...',
    '                                              aten::add        13.36%      26.725us        25.12%      50.250us      25.125us       9.000us       100.00%  ...',
    'void at::native::vectorized_elementwise_kernel<4, at...         0.00%       0.000us  ...',
    '                                          ProfilerStep*        74.88%     149.750us       100.00%  ...',
    '                                            aten::empty  ...',
    '                                       cudaLaunchKernel  ...',
]

# D3: the CPU-only variant (same CPU events, no device activity, memory on the CPU)
D3_CPU_ONLY = "".join([
    '-----------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n',
    '             Name    Self CPU %      Self CPU   CPU total %     CPU total  CPU time avg       CPU Mem  Self CPU Mem    # of Calls  \n',
    '-----------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n',
    '    ProfilerStep*        74.88%     149.750us       100.00%     200.000us     200.000us           0 B      -4.00 KB             1  \n',
    '        aten::add        23.56%      47.125us        25.12%      50.250us      25.125us       4.00 KB           0 B             2  \n',
    '      aten::empty         1.56%       3.125us         1.56%       3.125us       3.125us       4.00 KB       4.00 KB             1  \n',
    '-----------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  ------------  \n',
    'Self CPU time total: 200.000us\n',
])


def example():
    return ka.load_trace(EXAMPLE)


def cpu_only(data):
    """Spec D3 CPU-only variant: drop device activity and CUDA metadata,
    move the memory records to the CPU (Device Type 0, Device Id -1)."""
    d = copy.deepcopy(data)
    for k in ("deviceProperties", "cupti_version", "cuda_runtime_version", "cuda_driver_version"):
        d.pop(k, None)
    keep = []
    for e in d["traceEvents"]:
        if e.get("cat") in ("cuda_runtime", "kernel", "ac2g", "gpu_user_annotation"):
            continue
        if e.get("pid") == 0:
            continue
        if e.get("name") == "[memory]":
            e["args"]["Device Type"] = 0
            e["args"]["Device Id"] = -1
        keep.append(e)
    d["traceEvents"] = keep
    return d


class SpecExample(unittest.TestCase):
    maxDiff = None

    def test_default_table(self):
        self.assertEqual(ka.table_for_data(example()), D3_DEFAULT)

    def test_sort_self_cuda(self):
        out = ka.table_for_data(example(), sort_by="self_cuda_time_total", row_limit=-1)
        lines = out.split("\n")
        dflt = D3_DEFAULT.split("\n")
        # headers, separators and footers are identical to the first table
        self.assertEqual(lines[:3], dflt[:3])
        self.assertEqual(lines[-4:], dflt[-4:])
        self.assertEqual(len(lines), len(dflt))
        rows = lines[3:3 + len(D3_SORTED_PREFIXES)]
        for got, want in zip(rows, D3_SORTED_PREFIXES):
            cut = want.rfind("  ...") if want.endswith("...") else len(want)
            self.assertTrue(got.startswith(want[:cut]), "%r does not start with %r" % (got, want[:cut]))
        # the full rows are the default table's rows, reordered
        self.assertEqual(sorted(rows), sorted(dflt[3:9]))

    def test_sort_device_alias(self):
        a = ka.table_for_data(example(), sort_by="self_cuda_time_total", row_limit=-1)
        b = ka.table_for_data(example(), sort_by="self_device_time_total", row_limit=-1)
        self.assertEqual(a, b)

    def test_top_level_only(self):
        out = ka.table_for_data(example(), top_level_only=True)
        lines = out.split("\n")
        self.assertEqual(lines[0], "=" * 251)
        self.assertEqual(lines[1], "This report only display top-level ops statistics")
        dflt = D3_DEFAULT.split("\n")
        self.assertEqual(lines[2:5], dflt[:3])
        # ProfilerStep* (CPU), ProfilerStep* (CUDA) and the kernel row
        self.assertEqual(lines[5:8], [dflt[3], dflt[7], dflt[8]])
        self.assertEqual(lines[8:], dflt[9:])

    def test_cpu_only_variant(self):
        self.assertEqual(ka.table_for_data(cpu_only(example())), D3_CPU_ONLY)

    def test_cpu_only_without_memory(self):
        d = cpu_only(example())
        d.pop("profile_memory")
        d["traceEvents"] = [e for e in d["traceEvents"] if e.get("name") != "[memory]"]
        out = ka.table_for_data(d)
        self.assertNotIn("CPU Mem", out)
        self.assertIn("     47.125us", out)

    def test_legacy_array_and_gzip(self):
        want = ka.table_for_data(example())
        with open(EXAMPLE) as f:
            text = f.read()
        events = text.split('"traceEvents": ', 1)[1].rsplit("],", 1)[0] + "]"
        with tempfile.TemporaryDirectory() as tmp:
            arr = os.path.join(tmp, "array.json")
            with open(arr, "w") as f:
                f.write(events)
            # the array form has no top-level keys: memory is inferred from the
            # [memory] events, the CUDA backend from the kernels/runtime calls
            self.assertEqual(ka.table_for_file(arr), want)
            gz = os.path.join(tmp, "trace.json.gz")
            with gzip.open(gz, "wb") as f:
                f.write(text.encode())
            self.assertEqual(ka.table_for_file(gz), want)

    def test_widened_annotation_is_undone(self):
        # without the un-widening the row would read 74.681us / 829.79%
        out = ka.table_for_data(example())
        self.assertIn("74.679us", out)
        self.assertNotIn("74.681us", out)

    def test_time_unit_and_device_name(self):
        out = ka.table_for_data(example(), time_unit="ms", device_name="npu")
        self.assertIn("Self NPU %", out)
        self.assertIn("Self NPU time total: 0.009ms", out)
        self.assertIn("Self CPU time total: 0.200ms", out)
        self.assertNotIn("us ", out)

    def test_row_limit_zero(self):
        out = ka.table_for_data(example(), row_limit=0).split("\n")
        dflt = D3_DEFAULT.split("\n")
        self.assertEqual(out, dflt[:3] + dflt[-4:])

    def test_group_by_shape(self):
        out = ka.table_for_data(example(), group_by=["shape"])
        self.assertIn("Input Shapes", out)
        self.assertIn("[[1024], [1024], []]", out)

    def test_privateuse1_backend(self):
        d = example()
        for e in d["traceEvents"]:
            if e.get("cat") == "cuda_runtime":
                e["cat"] = "privateuse1_runtime"
            if e.get("name") == "[memory]":
                e["args"]["Device Type"] = 20
        for k in ("deviceProperties", "cupti_version", "cuda_runtime_version", "cuda_driver_version"):
            d.pop(k, None)
        out = ka.table_for_data(d).split("\n")
        dflt = D3_DEFAULT.split("\n")
        # the header row overflows: "NEURON time avg" is 15 characters in a
        # 12-wide column and Python's format never truncates
        self.assertIn("CPU time avg   Self NEURON  Self NEURON %  NEURON total  NEURON time avg       CPU Mem", out[1])
        self.assertEqual([len(x) for x in out[2:]], [len(x) for x in dflt[2:-2]] + [31, 0])
        self.assertEqual(out[-2], "Self NEURON time total: 9.000us")
        self.assertEqual([x[:130] for x in out[3:9]], [x[:130] for x in dflt[3:9]])

    def test_cli(self):
        exe = os.path.join(HERE, "key_averages.py")
        out = subprocess.run([sys.executable, exe, EXAMPLE], capture_output=True, text=True,
                             check=True).stdout
        self.assertEqual(out, D3_DEFAULT)


ROOT = os.path.dirname(os.path.dirname(HERE))
FIXTURES = ["rmsnorm-naive", "rmsnorm-fused", "rmsnorm-compiled"]


class Fixtures(unittest.TestCase):
    """The oracle agrees with the ground truth tools/gen_fixtures.py computed
    from its own durations (and the generator is deterministic)."""

    def rows(self, name):
        import json
        path = os.path.join(ROOT, "fixtures", name, "trace.json")
        with open(os.path.join(ROOT, "fixtures", name, "expected.json")) as f:
            exp = json.load(f)
        tr = ka.Trace(ka.load_trace(path))
        events = ka.build_tree(tr.events)
        rows = ka.key_averages(events, tr.use_device)
        return tr, rows, exp

    def test_ground_truth(self):
        for name in FIXTURES:
            with self.subTest(fixture=name):
                tr, rows, exp = self.rows(name)
                self.assertEqual(tr.use_device, "privateuse1")
                by_name = {}
                for r in rows:
                    by_name.setdefault(r.key, []).append(r)
                for op, us in exp["self_device_us_by_op"].items():
                    (r,) = [x for x in by_name[op] if x.device_type == ka.CPU]
                    self.assertAlmostEqual(r.self_device_time_total, us, places=6)
                for dev, us in exp["self_device_us_by_device_row"].items():
                    (r,) = by_name[dev]
                    self.assertEqual(r.device_type, ka.PRIVATEUSE1)
                    self.assertAlmostEqual(r.self_device_time_total, us, places=6)
                for key, n in exp["calls"].items():
                    self.assertEqual(sum(r.count for r in by_name[key]), n, key)
                table = ka.table_for_file(os.path.join(ROOT, "fixtures", name, "trace.json"), row_limit=-1)
                self.assertIn(exp["table_footer_device"] + "\n", table)

    def test_generator_is_deterministic(self):
        gen = os.path.join(ROOT, "tools", "gen_fixtures.py")
        r = subprocess.run([sys.executable, gen, "--check"], capture_output=True, text=True)
        self.assertEqual(r.returncode, 0, r.stdout + r.stderr)


class Helpers(unittest.TestCase):
    def test_ns_parsing(self):
        from decimal import Decimal
        self.assertEqual(ka.us_token_to_ns(Decimal("1020.500"), True), 1020500)
        self.assertEqual(ka.us_token_to_ns(Decimal("1712195495519695.8"), True), 1712195495519695800)
        self.assertEqual(ka.us_token_to_ns(Decimal("0.0005"), True), 0)   # half-even
        self.assertEqual(ka.us_token_to_ns(Decimal("0.0015"), True), 2)
        self.assertEqual(ka.us_token_to_ns(1610366387140599, False), 1610366387140599000)

    def test_formatters(self):
        self.assertEqual(ka.format_time(999.9995), "1000.000us")
        self.assertEqual(ka.format_time(1500.0), "1.500ms")
        self.assertEqual(ka.format_time(2.5e6), "2.500s")
        self.assertEqual(ka.format_memory(-4096), "-4.00 KB")
        self.assertEqual(ka.format_memory(1023), "1023 B")
        self.assertEqual(ka.format_memory(3 * 1024 ** 3), "3.00 GB")
        self.assertEqual(ka.format_share(0, 0), "NaN")
        self.assertEqual(ka.format_share(74.875, 100), "74.88%")
        self.assertRaises(ka.OracleError, ka.format_share, 1.0, 0)

    def test_naive_sum(self):
        self.assertEqual(ka.nsum([1e16, 1.0, -1e16]), 0.0)   # Python >= 3.12 sum() gives 1.0


if __name__ == "__main__":
    unittest.main()
