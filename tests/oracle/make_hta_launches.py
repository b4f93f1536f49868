#!/usr/bin/env python3
"""Expected values for `neuron-stats launches --each`, from HTA itself
(test-only: needs HTA's source and Debian's python3-pandas and
python3-networkx; CI does not run it; its output is checked in).

    HTA_SRC=DIR HTA_COMMIT=HASH /usr/bin/python3 tests/oracle/make_hta_launches.py TRACE OUT.json

runs HTA's get_cuda_kernel_launch_stats(visualize=False) on a folder holding
only TRACE and writes its rows (correlation, cpu_duration, gpu_duration,
launch_delay, in µs) sorted.
"""
import json
import os
import shutil
import sys
import tempfile


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    trace, out = sys.argv[1], sys.argv[2]
    sys.path.insert(0, os.environ["HTA_SRC"])
    from hta.trace_analysis import TraceAnalysis  # noqa: E402
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(trace, tmp)
        df = TraceAnalysis(trace_dir=tmp).get_cuda_kernel_launch_stats(visualize=False)[0]
    rows = sorted([int(r.correlation), repr(float(r.cpu_duration)), repr(float(r.gpu_duration)),
                   repr(float(r.launch_delay))] for r in df.itertuples())
    with open(out, "w") as f:
        json.dump({"hta_commit": os.environ.get("HTA_COMMIT", "(unknown)"), "trace": os.path.basename(trace),
                   "columns": ["correlation", "cpu_duration", "gpu_duration", "launch_delay"], "rows": rows},
                  f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
