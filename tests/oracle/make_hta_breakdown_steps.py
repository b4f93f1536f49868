#!/usr/bin/env python3
"""Expected values for `neuron-stats breakdown --per-step`, from HTA itself
(test-only: needs HTA's source and Debian's python3-pandas and
python3-networkx; CI does not run it; its output is checked in,
tests/oracle/hta/breakdown_steps_*.json).

    HTA_SRC=DIR HTA_COMMIT=HASH /usr/bin/python3 tests/oracle/make_hta_breakdown_steps.py OUT.json TRACE...

loads the TRACEs (the ranks of one job) into one HTA TraceAnalysis, as HTA
reads a folder, and writes per rank HTA's get_temporal_breakdown, and per
rank and iteration the same function run on the events HTA gives that
iteration (its `iteration` column: a kernel has the step of its launch), as
make_hta_overlap.py does for get_comm_comp_overlap. HTA's function has no
communication column; beside its four the union of the communication
kernels' intervals (HTA's merge_kernel_intervals, µs) is written.
"""
import json
import os
import shutil
import sys
import tempfile


def rows(ta):
    """[rank, iteration or None, idle, compute, non_compute, kernel_time, communication] (µs)."""
    from hta.analyzers.breakdown_analysis import BreakdownAnalysis
    from hta.utils.utils import get_kernel_type, KernelType, merge_kernel_intervals

    sym = ta.t.symbol_table.get_sym_table()

    def comm_us(df):
        k = df[df["stream"].ne(-1)].copy()
        k = k[k["name"].apply(lambda n: get_kernel_type(sym[n]) == KernelType.COMMUNICATION.name)]
        m = merge_kernel_intervals(k)
        return float((m["end"] - m["ts"]).sum())

    class View:  # what get_temporal_breakdown reads of a Trace
        def __init__(self, traces):
            self.traces, self.symbol_table = traces, ta.t.symbol_table

    def run(rank, iteration, df):
        t = BreakdownAnalysis.get_temporal_breakdown(View({rank: df}), visualize=False)
        r = t.iloc[0]
        return [rank, iteration, float(r["idle_time(us)"]), float(r["compute_time(us)"]),
                float(r["non_compute_time(us)"]), float(r["kernel_time(us)"]), comm_us(df)]

    out = []
    for rank, df in sorted(ta.t.traces.items()):
        out.append(run(int(rank), None, df))
        for it in sorted(i for i in df["iteration"].unique() if i >= 0):
            sub = df[df["iteration"].eq(it)]
            if sub["stream"].ne(-1).any():  # HTA divides by a zero span otherwise
                out.append(run(int(rank), int(it), sub))
    return out


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, traces = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, os.environ["HTA_SRC"])
    from hta.trace_analysis import TraceAnalysis  # noqa: E402
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            shutil.copy(t, tmp)
        ta = TraceAnalysis(trace_dir=tmp)
    with open(out, "w") as f:
        json.dump({"hta_commit": os.environ.get("HTA_COMMIT", "(unknown)"),
                   "traces": [os.path.basename(t) for t in traces],
                   "columns": ["rank", "iteration", "idle_time", "compute_time", "non_compute_time", "kernel_time",
                               "communication_time"],
                   "rows": rows(ta)},
                  f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
