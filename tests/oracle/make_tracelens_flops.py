#!/usr/bin/env python3
"""Writes tests/oracle/tracelens/sdpa_flops.json, the expected values of
tracelens_flops.py, from TraceLens's own reference reports.

    make_tracelens_flops.py TRACELENS_GIT_DIR [--corpus DIR]

TraceLens (github.com/AMD-AGI/TraceLens) checks in, beside each of its test
traces, the perf report its code wrote for it (tests/traces/.../
*_perf_report_csvs/SDPA_fwd.csv, perf_csvs/SDPA_fwd.csv): one row per fused
attention op and argument set, with `GFLOPS_first` (its SDPA model's FLOPs
of one call / 1e9), `name_count` (the calls) and `Input Dims_first`. This
script reads those CSVs at the git directory's HEAD (a bare clone is
enough: `git show`), for each trace that is also in the corpus, checks that
the corpus trace is the very file the report was made from (the same blob
at that commit), and records per (op, Input Dims) the calls and FLOPs
(GFLOPS x 1e9, an integer, x calls), summed over TraceLens's rows of the
same op and shapes (it also splits rows by Concrete Inputs). Standard
library only; run by hand, never by the tests.
"""
import csv
import decimal
import hashlib
import io
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "tracelens", "sdpa_flops.json")
CORPUS_PREFIX = "AMD-AGI-TraceLens/"
# TraceLens trace -> its reference SDPA report, both paths in TraceLens
# (mi300's Qwen trace is left out: its SDPA rows are h100's, and the
# vendored corpus, which holds every trace a test names, is kept under
# 15 MB).
TRACES = {
    "tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz":
        "tests/traces/h100/gaunernst_bert-small-uncased__1016001_perf_report_csvs/SDPA_fwd.csv",
    "tests/traces/mi300/gaunernst_bert-small-uncased__1016001.json.gz":
        "tests/traces/mi300/gaunernst_bert-small-uncased__1016001_perf_report_csvs/SDPA_fwd.csv",
    "tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005.json.gz":
        "tests/traces/h100/Qwen_Qwen1.5-0.5B-Chat__1016005_perf_report_csvs/SDPA_fwd.csv",
    "tests/traces/inference/xdit_sd_3.5/profile_trace_rank_0.json.gz":
        "tests/traces/inference/xdit_sd_3.5/perf_csvs/SDPA_fwd.csv",
    "tests/traces/torch_compile_triton/trace.json.gz":
        "tests/traces/torch_compile_triton/trace_perf_report_csvs/SDPA_fwd.csv",
}


def git(gitdir, *args):
    return subprocess.run(["git", "--git-dir", gitdir, *args], check=True, capture_output=True).stdout


def main():
    gitdir = sys.argv[1]
    corpus = sys.argv[sys.argv.index("--corpus") + 1] if "--corpus" in sys.argv else \
        os.path.join(HERE, "..", "..", "..", "shared", "corpus")
    commit = git(gitdir, "rev-parse", "HEAD").decode().strip()
    out = {"source": "github.com/AMD-AGI/TraceLens", "commit": commit, "traces": {}}
    for trace, report in TRACES.items():
        with open(os.path.join(corpus, CORPUS_PREFIX + trace), "rb") as f:
            ours = f.read()
        if hashlib.sha256(ours).hexdigest() != hashlib.sha256(git(gitdir, "show", "HEAD:" + trace)).hexdigest():
            sys.exit("%s: the corpus file is not TraceLens's at %s" % (trace, commit))
        rows = {}
        for r in csv.DictReader(io.StringIO(git(gitdir, "show", "HEAD:" + report).decode())):
            one = int(decimal.Decimal(r["GFLOPS_first"]) * 10**9)
            if decimal.Decimal(one) != decimal.Decimal(r["GFLOPS_first"]) * 10**9:
                sys.exit("%s: GFLOPS %s is not a whole number of FLOPs" % (report, r["GFLOPS_first"]))
            key = (r["name"], r["Input Dims_first"])
            calls, flops = rows.get(key, (0, 0))
            rows[key] = (calls + int(r["name_count"]), flops + one * int(r["name_count"]))
        out["traces"]["@CORPUS@/" + CORPUS_PREFIX + trace] = {
            "reference": report,
            "rows": [[name, dims, calls, flops] for (name, dims), (calls, flops) in sorted(rows.items())],
        }
    with open(OUT, "w") as f:
        json.dump(out, f, indent=1)
        f.write("\n")
    print("wrote %s: %d traces, %d rows" % (OUT, len(out["traces"]),
                                           sum(len(t["rows"]) for t in out["traces"].values())))


if __name__ == "__main__":
    main()
