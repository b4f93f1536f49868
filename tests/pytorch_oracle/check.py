#!/usr/bin/env python3
"""PyTorch itself as the oracle: neuron-stats on PyTorch's exported trace
against the key_averages().table() text PyTorch printed in the same process.

    python3 tests/pytorch_oracle/check.py NEURON_STATS CASE_DIR
    python3 tests/pytorch_oracle/check.py --oracle CASE_DIR   # tests/oracle/key_averages.py instead

CASE_DIR holds trace.json.gz (prof.export_chrome_trace, gzipped), tables.json
and meta.json as written by make_cases.py (README.md says where and how). Each
variant of tables.json is one key_averages(...) / table(...) call; it maps to
neuron-stats options (VARIANT_OPTIONS) and the two texts must be equal byte for
byte, every column. Exit 0 when all are, 1 otherwise (each difference printed).
With --oracle the independent Python reference is held to PyTorch the same way
(it has no --max-name-width: those variants are skipped, and said so).
"""
import difflib
import json
import os
import subprocess
import sys

# table() / key_averages() keyword -> neuron-stats option (None: a flag)
TABLE_OPTIONS = [
    ("sort_by", "--sort"),
    ("row_limit", "--row-limit"),
    ("top_level_events_only", "--top-level-only"),
    ("time_unit", "--time-unit"),
    ("max_name_column_width", "--max-name-width"),
]
GROUPING_OPTIONS = [
    ("group_by_input_shape", lambda v: ["--group-by", "shape"] if v else []),
    ("group_by_stack_n", lambda v: ["--group-by", "stack=%d" % v] if v else []),
    ("group_by_overload_name", lambda v: ["--group-by", "overload"] if v else []),
]

def variant_options(variant):
    opts = []
    table, grouping = variant["table"], variant["key_averages"]
    for key, flag in TABLE_OPTIONS:
        if key not in table:
            continue
        value = table[key]
        if value is True:
            opts.append(flag)
        elif value is not False:
            opts += [flag, str(value)]
    for key, make in GROUPING_OPTIONS:
        opts += make(grouping.get(key))
    unknown = set(table) - {k for k, _ in TABLE_OPTIONS} | set(grouping) - {k for k, _ in GROUPING_OPTIONS}
    if unknown:
        raise SystemExit("check.py: no neuron-stats option for %s" % sorted(unknown))
    return opts


def main():
    if len(sys.argv) < 3:
        raise SystemExit(__doc__)
    binary, case = sys.argv[1], sys.argv[2]
    oracle = binary == "--oracle"
    here = os.path.dirname(os.path.abspath(__file__))
    trace = os.path.join(case, "trace.json.gz")
    with open(os.path.join(case, "tables.json")) as f:
        variants = json.load(f)
    failed = compared = 0
    for v in variants:
        if v["text"] is None:  # PyTorch raised for it: meta.json variant_errors says why
            print("%s: %s: PyTorch printed no table, skipped" % (os.path.basename(case), v["name"]))
            continue
        if oracle and "max_name_column_width" in v["table"]:
            print("%s: %s: the oracle has no --max-name-width, skipped" % (os.path.basename(case), v["name"]))
            continue
        if oracle:
            args = [sys.executable, os.path.join(here, "..", "oracle", "key_averages.py"), trace]
        else:
            args = [binary, trace, "--no-cache", "-q"]
        args += variant_options(v)
        run = subprocess.run(args, capture_output=True, text=True)
        want = v["text"].rstrip("\n") + "\n"
        got = run.stdout
        compared += 1
        if run.returncode != 0 or got != want:
            failed += 1
            print("FAIL %s: %s (exit %d) %s" % (os.path.basename(case), v["name"], run.returncode,
                                              " ".join(variant_options(v))))
            if run.stderr:
                print(run.stderr.rstrip())
            sys.stdout.writelines(difflib.unified_diff(
                want.splitlines(True), got.splitlines(True), "pytorch", "neuron-stats", n=1))
    print("%s: %d of %d variants byte-identical to PyTorch's table" %
          (os.path.basename(case), compared - failed, compared))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
