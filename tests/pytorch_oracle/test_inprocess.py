#!/usr/bin/env python3
"""PyTorch as the oracle, in the test itself (meson suite `oracle`).

    python3 tests/pytorch_oracle/test_inprocess.py build/src/cli/neuron-stats

Debian 12's python3-torch (1.13, a build without Kineto) is imported by
/usr/bin/python3; without it the test exits 77 (skipped) and says why. It
profiles small models in this process (an MLP train step with memory and
stacks, a conv net, RMSNorm), exports each profile with
prof.export_chrome_trace() (the legacy autograd-profiler format: this torch
has no Kineto), and compares PyTorch's own key_averages(...).table(...) text
with what neuron-stats prints for the exported file, byte for byte.

Only what the export cannot carry is masked (docs/report.md "What an
exported trace cannot carry"): the memory columns and the `[memory]` rows
of a profile_memory=True profile. Variants that need what the export does
not carry (grouping by the input shapes or stacks a profile recorded,
sorting by memory) are compared on a profile that recorded none, where
PyTorch's grouping is the plain one; on the others they are not compared,
and the output says so. Nothing here computes a table: each expected text
is PyTorch's.
"""
import os
import subprocess
import sys
import tempfile

# Debian's python3-torch lives in the system Python (NS_TORCH_PYTHON: another)
TORCH_PYTHON = os.environ.get("NS_TORCH_PYTHON", "/usr/bin/python3")


def outer(binary):
    """Re-runs this file under the Python that has torch, or skips."""
    try:
        probe = subprocess.run([TORCH_PYTHON, "-c", "import torch"], capture_output=True, text=True)
        why = (probe.stderr.strip().splitlines() or ["exit %d" % probe.returncode])[-1]
    except OSError as e:
        probe, why = None, str(e)
    if probe is None or probe.returncode != 0:
        print("skip: %s cannot import torch (%s); install Debian's python3-torch (.ci/run does)" % (TORCH_PYTHON, why))
        return 77
    return subprocess.run([TORCH_PYTHON, os.path.abspath(__file__), "--inner", binary]).returncode


# (variant, key_averages kwargs, table kwargs, neuron-stats args, what it needs the trace to carry)
VARIANTS = [
    ("default", {}, {}, [], None),
    ("all-rows-self-cpu", {}, {"sort_by": "self_cpu_time_total", "row_limit": -1},
     ["--sort", "self_cpu_time_total", "--row-limit", "-1"], None),
    ("all-rows-cpu-total", {}, {"sort_by": "cpu_time_total", "row_limit": -1},
     ["--sort", "cpu_time_total", "--row-limit", "-1"], None),
    ("all-rows-cpu-avg", {}, {"sort_by": "cpu_time", "row_limit": -1},
     ["--sort", "cpu_time", "--row-limit", "-1"], None),
    ("all-rows-count", {}, {"sort_by": "count", "row_limit": -1}, ["--sort", "count", "--row-limit", "-1"], None),
    ("top-level", {}, {"sort_by": "self_cpu_time_total", "row_limit": -1, "top_level_events_only": True},
     ["--sort", "self_cpu_time_total", "--row-limit", "-1", "--top-level-only"], None),
    ("top-level-limit-5", {}, {"row_limit": 5, "top_level_events_only": True},
     ["--row-limit", "5", "--top-level-only"], None),
    ("narrow-names", {}, {"sort_by": "self_cpu_time_total", "row_limit": 15, "max_name_column_width": 20},
     ["--sort", "self_cpu_time_total", "--row-limit", "15", "--max-name-width", "20"], None),
    ("group-by-shape", {"group_by_input_shape": True}, {"sort_by": "self_cpu_time_total", "row_limit": -1},
     ["--group-by", "shape", "--sort", "self_cpu_time_total", "--row-limit", "-1"], "record_shapes"),
    ("group-by-stack-5", {"group_by_stack_n": 5}, {"sort_by": "self_cpu_time_total", "row_limit": -1},
     ["--group-by", "stack=5", "--sort", "self_cpu_time_total", "--row-limit", "-1"], "with_stack"),
    ("mem-cpu", {}, {"sort_by": "self_cpu_memory_usage", "row_limit": -1},
     ["--sort", "self_cpu_memory_usage", "--row-limit", "-1"], "profile_memory"),
]

# What the legacy export leaves out, and so what is masked in PyTorch's table
MASKED_COLUMNS = ("CPU Mem", "Self CPU Mem")
MASKED_ROWS = ("[memory]",)


def column_spans(sep_line):
    """[start, end) of each dash run of a table's separator line."""
    spans, i = [], 0
    while i < len(sep_line):
        if sep_line[i] == "-":
            j = i
            while j < len(sep_line) and sep_line[j] == "-":
                j += 1
            spans.append((i, j))
            i = j
        else:
            i += 1
    return spans


def mask(table):
    """PyTorch's table without the columns and rows the export cannot carry.
    Columns have fixed widths, each followed by two spaces, so a column is
    cut out of every line of the table body by its place."""
    lines = table.split("\n")
    first = next((i for i, line in enumerate(lines) if line.startswith("-")), None)
    if first is None or first + 1 >= len(lines):
        return table
    spans = column_spans(lines[first])
    header = lines[first + 1]
    cut = [(s, e + 2) for s, e in spans if header[s:e].strip() in MASKED_COLUMNS]
    width = len(lines[first])
    out = []
    for line in lines:
        if line and line == "=" * len(line):  # the rule above a header or the top-level note
            line = "=" * (len(line) - sum(e - s for s, e in cut))
        elif len(line) == width:
            name = line[spans[0][0]:spans[0][1]].strip()
            if name in MASKED_ROWS:
                continue
            for s, e in reversed(cut):
                line = line[:s] + line[e:]
        out.append(line)
    return "\n".join(out)


def inner(binary):
    import torch

    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import make_cases  # the same models as the Kineto/GPU cases

    print("torch %s, kineto available: %s" % (torch.__version__, torch.autograd.kineto_available()))

    def mlp_plain():
        """The MLP train step with nothing but times recorded: there PyTorch's
        shape and stack groupings are the plain one, and the export carries
        all of it."""
        torch.manual_seed(0)
        model = torch.nn.Sequential(torch.nn.Linear(64, 128), torch.nn.ReLU(), torch.nn.Linear(128, 10))
        opt = torch.optim.SGD(model.parameters(), lr=0.01)
        x, y = torch.randn(32, 64), torch.randint(0, 10, (32,))
        with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU]) as prof:
            for _ in range(3):
                opt.zero_grad()
                torch.nn.functional.cross_entropy(model(x), y).backward()
                opt.step()
                prof.step()
        return prof

    cases = [
        ("mlp-train", lambda: make_cases.mlp_train("cpu"), {"record_shapes", "profile_memory", "with_stack"}),
        ("mlp-train-plain", mlp_plain, set()),
        ("convnet", lambda: make_cases.convnet("cpu"), {"record_shapes"}),
        ("rmsnorm-naive", lambda: make_cases.rmsnorm("cpu", False), {"record_shapes"}),
    ]
    if hasattr(torch.nn.functional, "rms_norm"):
        cases.append(("rmsnorm-fused", lambda: make_cases.rmsnorm("cpu", True), {"record_shapes"}))
    else:
        print("rmsnorm-fused: not run: torch %s has no torch.nn.functional.rms_norm" % torch.__version__)

    compared = failed = 0
    with tempfile.TemporaryDirectory(prefix="ns-ptoracle-") as tmp:
        for name, run, recorded in cases:
            prof = run()
            trace = os.path.join(tmp, name + ".json")
            prof.export_chrome_trace(trace)
            for vname, ka, tk, args, needs in VARIANTS:
                if needs == "profile_memory" and needs not in recorded:
                    continue  # nothing to compare: memory is not carried
                if needs in recorded:
                    print("%s/%s: not compared: the export does not carry %s" % (name, vname, needs))
                    continue
                try:
                    want = prof.key_averages(**ka).table(**tk)
                except TypeError as e:  # an option this torch does not have
                    print("%s/%s: not compared: torch %s: %s" % (name, vname, torch.__version__, e))
                    continue
                if "profile_memory" in recorded:
                    want = mask(want)
                p = subprocess.run([binary, trace, "--no-cache"] + args, capture_output=True, text=True)
                got = p.stdout
                compared += 1
                # (table() ends its text with a newline, as neuron-stats does)
                if p.returncode != 0 or got != want:
                    failed += 1
                    print("FAIL %s/%s: exit %d, stderr %r" % (name, vname, p.returncode, p.stderr[-300:]))
                    for i, (a, b) in enumerate(zip(want.split("\n"), got.split("\n"))):
                        if a != b:
                            print("  line %d\n  pytorch:      %r\n  neuron-stats: %r" % (i + 1, a, b))
                            break
                    else:
                        print("  pytorch %d lines, neuron-stats %d" % (want.count("\n"), got.count("\n")))
                else:
                    print("ok %s/%s (%d lines)" % (name, vname, want.count("\n")))
    print("%d tables compared, %d differ" % (compared, failed))
    return 1 if failed or not compared else 0


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--inner":
        sys.exit(inner(sys.argv[2]))
    if len(sys.argv) != 2:
        sys.exit("usage: test_inprocess.py NEURON_STATS")
    sys.exit(outer(sys.argv[1]))
