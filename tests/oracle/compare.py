#!/usr/bin/env python3
"""Diff the C tool's key_averages table against the Python oracle.

    python3 tests/oracle/compare.py BIN [--corpus DIR] [--only SUBSTR] [--keep DIR] [-v]

For every case (trace + options) it runs

    BIN TRACE --row-limit -1 [OPTIONS]
    python3 tests/oracle/key_averages.py TRACE --row-limit -1 [OPTIONS]

and prints one line per case:

    ok    LABEL
    DIFF  LABEL  line N: first differing line (C / oracle), plus a count
    ERR   LABEL  the C tool exited non-zero (its stderr tail)
    skip  LABEL  trace not present (e.g. no corpus on this machine)

The cases are the three synthetic Neuron fixtures (with a few option variants),
two derived inputs built on the fly (legacy top-level-array form, gzip), and
about fifteen real traces from the corpus. Together they cover:

* CPU-only, CUDA, ROCm, MTIA;
* legacy categories;
* .gz, memory events, python_function;
* multi-rank, mangled names, unfinished ops.

The exit status is 0 when every case that ran is "ok", and 1 otherwise. With -v
the first differing lines are shown as a unified diff. With --keep DIR both
outputs are kept as DIR/<label>.c.txt and DIR/<label>.oracle.txt.
"""

import argparse
import difflib
import gzip
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
ORACLE = os.path.join(HERE, "key_averages.py")
def default_corpus():
    for cand in (os.environ.get("NS_CORPUS"), os.environ.get("NEURON_STATS_CORPUS"),
                 os.path.join(ROOT, "..", "shared", "corpus"), "/work/shared/corpus"):
        if cand and os.path.isdir(cand):
            return os.path.normpath(cand)
    # the subset vendored in tests/data (tests/data/corpus.py unpacks it)
    sys.path.insert(0, os.path.join(ROOT, "tests", "data"))
    import corpus
    return corpus.corpus_root()

FIX = os.path.join(ROOT, "fixtures")

# (label, path relative to the repo root or "corpus:" + path in the corpus, options)
CASES = [
    # synthetic Neuron / PrivateUse1 fixtures
    ("fixture-naive", "fixtures/rmsnorm-naive/trace.json", []),
    ("fixture-naive-sort-device", "fixtures/rmsnorm-naive/trace.json", ["--sort", "self_device_time_total"]),
    ("fixture-naive-sort-cpu-total", "fixtures/rmsnorm-naive/trace.json", ["--sort", "cpu_time_total"]),
    ("fixture-naive-top-level", "fixtures/rmsnorm-naive/trace.json", ["--top-level-only"]),
    ("fixture-naive-shapes", "fixtures/rmsnorm-naive/trace.json", ["--group-by", "shape"]),
    ("fixture-naive-npu-ms", "fixtures/rmsnorm-naive/trace.json", ["--device-name", "npu", "--time-unit", "ms"]),
    ("fixture-naive-rowlimit5", "fixtures/rmsnorm-naive/trace.json", ["__row_limit", "5"]),
    ("fixture-fused", "fixtures/rmsnorm-fused/trace.json", []),
    ("fixture-compiled", "fixtures/rmsnorm-compiled/trace.json", []),
    ("fixture-compiled-top-level", "fixtures/rmsnorm-compiled/trace.json", ["--top-level-only"]),
    ("spec-example", "tests/oracle/spec_example.json", []),
    ("spec-example-sort-self-cuda", "tests/oracle/spec_example.json", ["--sort", "self_cuda_time_total"]),
    # derived on the fly
    ("derived-legacy-array", "derived:array:fixtures/rmsnorm-naive/trace.json", []),
    ("derived-gzip", "derived:gzip:fixtures/rmsnorm-fused/trace.json", []),
    # real traces (see /work/shared/corpus/SOURCES.md)
    ("cpu-only-windows-memory", "corpus:Gabriellanaro-dtu_mlops/trace.json", []),
    ("cpu-only-gloo-gz", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/cpu_only/"
     "rank-34.Jul_15_10_52_41.1074.pt.trace.json.gz", []),
    ("cuda-h100-bert-pyfn-memory", "corpus:AMD-AGI-TraceLens/tests/traces/h100/"
     "gaunernst_bert-small-uncased__1016001.json.gz", []),
    ("cuda-h100-bert-sort-cuda", "corpus:AMD-AGI-TraceLens/tests/traces/h100/"
     "gaunernst_bert-small-uncased__1016001.json.gz", ["--sort", "self_cuda_time_total"]),
    ("cuda-alexnet-cuda-sync", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/critical_path/alexnet/"
     "benchmark_result_2869224_1695835535_trace.json.gz", []),
    ("cuda-triton-example", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/triton_example/"
     "triton_example.json.gz", []),
    ("cuda-ns-resolution", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/ns_resolution_trace/"
     "rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz", []),
    ("cuda-runtime-no-kernels", "corpus:HazyResearch-zoology/at-0f98dfe9/trace.json", []),
    ("multirank-dlrm-rank0", "corpus:facebookresearch-param/et_replay/tests/inputs/dlrm_kineto/"
     "worker0_step_12.1694128201545.pt.trace.json", []),
    ("multirank-dlrm-rank3", "corpus:facebookresearch-param/et_replay/tests/inputs/dlrm_kineto/"
     "worker3_step_12.1694128201557.pt.trace.json", []),
    ("rocm-mi300-bert-memory", "corpus:AMD-AGI-TraceLens/tests/traces/mi300/"
     "gaunernst_bert-small-uncased__1016001.json.gz", []),
    ("rocm-mi300-bert-shapes", "corpus:AMD-AGI-TraceLens/tests/traces/mi300/"
     "gaunernst_bert-small-uncased__1016001.json.gz", ["--group-by", "shape"]),
    ("rocm-mi250-minitoy", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/amd_trace/"
     "mi250_minitoy_train_ROCm6_2_kineto.json.gz", []),
    ("rocm-sglang-mangled", "corpus:AMD-AGI-TraceLens/tests/traces/inference/sglang_decode/"
     "sglang_Qwen3-8B_decode.json.gz", []),
    ("rocm-gpu-only", "corpus:AMD-AGI-TraceLens/tests/traces/mi210/gpu_only_trace/gpu_only_trace.json.gz", []),
    ("mtia-inference-unfinished", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/mtia_inference_trace/"
     "mtia_inference_rank_0.json.gz", []),
    ("legacy-cats-gpu-metrics", "corpus:pytorch-kineto/tb_plugin/test/gpu_metrics_input.json", []),
    ("legacy-1.8-resnet50", "corpus:pytorch-kineto/at-f68ff75c/tb_plugin/samples/resnet50_num_workers_0/"
     "worker0.pt.trace.json.gz", []),
    ("legacy-1.9-memory", "corpus:pytorch-kineto/tb_plugin/samples/resnet50_num_workers_4/"
     "worker0.1623212756351.pt.trace.json.gz", []),
    ("hta-backward-thread", "corpus:facebookresearch-HolisticTraceAnalysis/tests/data/call_stack/"
     "backward_thread.json", []),
]


def derive(kind, src, tmp):
    with open(src, "rb") as f:
        raw = f.read()
    if kind == "gzip":
        out = os.path.join(tmp, os.path.basename(os.path.dirname(src)) + ".json.gz")
        with gzip.GzipFile(out, "wb", mtime=0) as g:
            g.write(raw)
        return out
    if kind == "array":
        # the legacy (pre-2021 chrome://tracing) form: the bare traceEvents array
        data = json.loads(raw)
        out = os.path.join(tmp, os.path.basename(os.path.dirname(src)) + "-array.json")
        text = raw.decode()
        start = text.index('"traceEvents": [') + len('"traceEvents": ')
        depth = 0
        end = None
        i = start
        in_str = False
        while i < len(text):
            c = text[i]
            if in_str:
                if c == "\\":
                    i += 1
                elif c == '"':
                    in_str = False
            elif c == '"':
                in_str = True
            elif c == "[":
                depth += 1
            elif c == "]":
                depth -= 1
                if depth == 0:
                    end = i + 1
                    break
            i += 1
        with open(out, "w") as f:
            f.write(text[start:end] + "\n")
        assert len(json.loads(text[start:end])) == len(data["traceEvents"])
        return out
    raise ValueError(kind)


def resolve(spec, corpus, tmp):
    if spec.startswith("corpus:"):
        return os.path.join(corpus, spec[len("corpus:"):])
    if spec.startswith("derived:"):
        _, kind, rel = spec.split(":", 2)
        src = os.path.join(ROOT, rel)
        if not os.path.exists(src):
            return src
        return derive(kind, src, tmp)
    return os.path.join(ROOT, spec)


def run(cmd, timeout, env=None):
    try:
        p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=timeout, env=env)
    except subprocess.TimeoutExpired:
        return 124, b"", b"timeout after %ds" % timeout
    except OSError as ex:   # e.g. the binary is being relinked right now
        return 126, b"", str(ex).encode()
    return p.returncode, p.stdout, p.stderr


def first_diff(a, b):
    al, bl = a.split("\n"), b.split("\n")
    for i in range(max(len(al), len(bl))):
        x = al[i] if i < len(al) else "<EOF>"
        y = bl[i] if i < len(bl) else "<EOF>"
        if x != y:
            return i + 1, x, y, sum(1 for j in range(max(len(al), len(bl)))
                                    if (al[j] if j < len(al) else None) != (bl[j] if j < len(bl) else None))
    return None


def main(argv=None):
    ap = argparse.ArgumentParser(description="compare neuron-stats tables with the Python oracle")
    ap.add_argument("bin", help="path to the neuron-stats binary")
    ap.add_argument("--corpus", default=default_corpus(),
                    help="the real-trace corpus (default: $NS_CORPUS, else ../shared/corpus beside the checkout, else the subset vendored in tests/data)")
    ap.add_argument("--only", action="append", default=[], help="run only cases whose label contains this")
    ap.add_argument("--keep", help="write both outputs of every case into this directory")
    ap.add_argument("--timeout", type=int, default=600)
    ap.add_argument("--subcommand", default="", help="e.g. 'report' to run BIN report TRACE ...")
    ap.add_argument("-v", "--verbose", action="store_true")
    a = ap.parse_args(argv)
    if not os.path.exists(a.bin):
        print("compare: no binary at %s" % a.bin, file=sys.stderr)
        return 2
    if a.keep:
        os.makedirs(a.keep, exist_ok=True)
    tmp = tempfile.mkdtemp(prefix="ns-compare-")
    bad = 0
    ran = 0
    # keep the C tool's trace cache out of $HOME and make the run hermetic
    env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
    try:
        for label, spec, opts in CASES:
            if a.only and not any(s in label for s in a.only):
                continue
            path = resolve(spec, a.corpus, tmp)
            if not os.path.exists(path):
                print("skip  %s  (%s not found)" % (label, path))
                continue
            row_limit = "-1"
            if opts[:1] == ["__row_limit"]:
                row_limit, opts = opts[1], opts[2:]
            common = ["--row-limit", row_limit] + opts
            cmd_c = [a.bin] + ([a.subcommand] if a.subcommand else []) + [path] + common
            cmd_o = [sys.executable, ORACLE, path] + common
            rc_c, out_c, err_c = run(cmd_c, a.timeout, env)
            rc_o, out_o, err_o = run(cmd_o, a.timeout)
            ran += 1
            out_c = out_c.decode("utf-8", "replace")
            out_o = out_o.decode("utf-8", "replace")
            if a.keep:
                safe = re.sub(r"[^A-Za-z0-9_.-]", "_", label)
                with open(os.path.join(a.keep, safe + ".c.txt"), "w") as f:
                    f.write(out_c)
                with open(os.path.join(a.keep, safe + ".oracle.txt"), "w") as f:
                    f.write(out_o)
            if rc_o != 0:
                print("ORACLE-ERR  %s  rc=%d: %s" % (label, rc_o, err_o.decode("utf-8", "replace").strip()[-300:]))
                bad += 1
                continue
            if rc_c != 0:
                print("ERR   %s  rc=%d: %s" % (label, rc_c, err_c.decode("utf-8", "replace").strip()[-300:]))
                bad += 1
                continue
            d = first_diff(out_c, out_o)
            if d is None:
                print("ok    %s" % label)
                continue
            bad += 1
            line, x, y, n = d
            print("DIFF  %s  %d differing line(s); first at line %d:\n        C:      %r\n        oracle: %r"
                  % (label, n, line, x[:400], y[:400]))
            if a.verbose:
                for l in list(difflib.unified_diff(out_o.split("\n"), out_c.split("\n"), "oracle", "C",
                                                   n=1, lineterm=""))[:40]:
                    print("        " + l)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("compare: %d case(s) ran, %d ok, %d not ok" % (ran, ran - bad, bad))
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
