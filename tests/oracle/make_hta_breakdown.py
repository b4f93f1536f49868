#!/usr/bin/env python3
"""Expected values for `neuron-stats breakdown`, `breakdown --idle` and
`kernels`, from HTA itself (test-only: needs HTA's source and Debian's
python3-pandas, python3-networkx and python3-plotly; CI does not run it;
its output is checked in, tests/oracle/hta/breakdown_*.json).

    HTA_SRC=DIR HTA_COMMIT=HASH /usr/bin/python3 tests/oracle/make_hta_breakdown.py OUT.json TRACE...

puts the TRACEs (one per rank) in a folder of their own and runs on it
HTA's get_temporal_breakdown, get_idle_time_breakdown (every rank, every
stream, consecutive_kernel_delay 30) and get_gpu_kernel_breakdown
(include_memory_kernels, num_kernels larger than any trace's kernel count
and duration_ratio 1.0, so that no kernel is folded into "others"), all
with visualize=False, and writes their rows (µs as repr(float)).
HTA_DISABLE_NS_ROUNDING=1 in the environment keeps ns-resolution times as
float µs (HTA rounds them to whole µs otherwise).
"""
import json
import os
import shutil
import sys
import tempfile


def f(x):
    return repr(float(x))


def run(traces):
    sys.path.insert(0, os.environ["HTA_SRC"])
    from hta.trace_analysis import TraceAnalysis  # noqa: E402
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            shutil.copy(t, tmp)
        a = TraceAnalysis(trace_dir=tmp)
        ranks = sorted(int(r) for r in a.t.traces.keys())
        temporal = a.get_temporal_breakdown(visualize=False)
        idle = a.get_idle_time_breakdown(ranks=ranks, visualize=False)[0]
        ktype, kernels = a.get_gpu_kernel_breakdown(visualize=False, num_kernels=1 << 40, duration_ratio=1.0,
                                                    include_memory_kernels=True)
    return {
        "temporal": {
            "columns": ["rank", "idle_time", "compute_time", "non_compute_time", "kernel_time"],
            "rows": sorted([int(r.rank), f(r[2]), f(r[3]), f(r[4]), f(r[5])] for r in temporal.itertuples()),
        },
        "idle": {
            "columns": ["rank", "stream", "idle_category", "idle_time"],
            "rows": sorted([int(r.rank), int(r.stream), r.idle_category, f(r.idle_time)] for r in idle.itertuples()),
        },
        "kernel_type": {
            "columns": ["kernel_type", "sum"],
            "rows": sorted([r.kernel_type, f(r.sum)] for r in ktype.itertuples()),
        },
        "kernels": {
            "columns": ["rank", "kernel_type", "name", "sum", "max", "min", "mean", "std"],
            "rows": sorted([int(r.rank), r.kernel_type, r.name, f(r[2]), f(r[3]), f(r[4]), f(r[6]), f(r[5])]
                           for r in kernels.itertuples()),
        },
    }


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, traces = sys.argv[1], sys.argv[2:]
    result = {"hta_commit": os.environ.get("HTA_COMMIT", "(unknown)"),
              "ns_rounding": os.environ.get("HTA_DISABLE_NS_ROUNDING", "0") != "1",
              "traces": [os.path.basename(t) for t in traces]}
    result.update(run(traces))
    with open(out, "w") as fh:
        json.dump(result, fh, indent=0)
        fh.write("\n")


if __name__ == "__main__":
    main()
