#!/usr/bin/env python3
"""Expected values for `neuron-stats counters`, from HTA itself (test-only:
needs HTA's source and Debian's python3-pandas and python3-networkx; CI
does not run it; its output is checked in).

    HTA_SRC=/path/to/HolisticTraceAnalysis /usr/bin/python3 \\
        tests/oracle/make_hta_counters.py TRACE OUT.json

runs HTA's TraceAnalysis(...).get_cupti_counter_data_with_operators() on a
folder holding only TRACE and writes, per range in HTA's order, the kernel
name, top- and bottom-level op, op stack and every counter column.
"""
import json
import os
import shutil
import subprocess
import sys
import tempfile


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trace, out = sys.argv[1], sys.argv[2]
    src = os.environ["HTA_SRC"]
    sys.path.insert(0, src)
    from hta.trace_analysis import TraceAnalysis  # noqa: E402
    # (a `git archive` copy has no .git: HTA_COMMIT names its commit)
    commit = os.environ.get("HTA_COMMIT") or subprocess.run(["git", "-C", src, "rev-parse", "HEAD"],
                                                            capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(trace, tmp)
        df = TraceAnalysis(trace_dir=tmp).get_cupti_counter_data_with_operators()[0]
    counters = [c for c in df.columns if c.startswith(("smsp__", "sm__", "dram__", "l1tex__", "lts__"))]
    rows = []
    for _, r in df.iterrows():
        row = {"name": r["name"], "top_level_op": r["top_level_op"], "bottom_level_op": r["bottom_level_op"],
               "op_stack": list(r["op_stack"])}
        for c in counters:
            row[c] = int(r[c])
        rows.append(row)
    with open(out, "w") as f:
        json.dump({"hta_commit": commit or "(unknown: %s)" % src, "trace": os.path.basename(trace), "rows": rows},
                  f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main()
