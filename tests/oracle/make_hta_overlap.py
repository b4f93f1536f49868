#!/usr/bin/env python3
"""Expected values for `neuron-stats overlap` and the step table of
`neuron-stats stragglers`, from HTA itself (test-only: needs HTA's source and
Debian's python3-pandas and python3-networkx; CI does not run it; its output
is checked in).

    HTA_SRC=DIR HTA_COMMIT=HASH /usr/bin/python3 tests/oracle/make_hta_overlap.py OUT.json TRACE...

loads the TRACEs (the ranks of one job) into one HTA TraceAnalysis, as HTA
reads a folder, and writes:

  overlap: per rank, HTA's get_comm_comp_overlap (comp_comm_overlap_pctg, as
    HTA rounds it) and its unrounded ratio; and per rank and iteration the
    same function run on the events HTA gives that iteration (its
    `iteration` column: a kernel has the step of its launch). The
    communication time (HTA's merge_kernel_intervals of the communication
    kernels, µs) is written beside each.
  steps: HTA's extract_iteration_info (the ProfilerStep#N of each rank that
    HTA keeps: ts, dur, end), with ts and end back on the trace's clock
    (HTA subtracts the earliest timestamp of all ranks, t.min_ts).
"""
import json
import os
import shutil
import sys
import tempfile


def overlap_rows(ta):
    """[rank, iteration or None, communication_us, pctg, ratio]."""
    from hta.analyzers import communication_analysis as ca
    from hta.utils.utils import get_kernel_type, KernelType, merge_kernel_intervals

    sym = ta.t.symbol_table.get_sym_table()

    def comm_us(df):
        k = df[df["stream"].ne(-1)].copy()
        k = k[k["name"].apply(lambda n: get_kernel_type(sym[n]) == KernelType.COMMUNICATION.name)]
        m = merge_kernel_intervals(k)
        return float((m["end"] - m["ts"]).sum())

    class View:  # what get_comm_comp_overlap reads of a Trace
        def __init__(self, traces):
            self.traces, self.symbol_table = traces, ta.t.symbol_table

    def run(traces):
        pctg = ca.CommunicationAnalysis.get_comm_comp_overlap(View(traces), visualize=False)
        ca.round = lambda x, n: x  # the same again, unrounded
        try:
            ratio = ca.CommunicationAnalysis.get_comm_comp_overlap(View(traces), visualize=False)
        finally:
            del ca.round
        return [(int(r), float(p), float(q) / 100) for r, p, q in
                zip(pctg["rank"], pctg["comp_comm_overlap_pctg"], ratio["comp_comm_overlap_pctg"])]

    rows = []
    for rank, pctg, ratio in run(ta.t.traces):
        rows.append([rank, None, comm_us(ta.t.traces[rank]), pctg, ratio])
    for rank, df in sorted(ta.t.traces.items()):
        for it in sorted(i for i in df["iteration"].unique() if i >= 0):
            sub = df[df["iteration"].eq(it)]
            for _, pctg, ratio in run({rank: sub}):
                rows.append([rank, int(it), comm_us(sub), pctg, ratio])
    return [[r[0], r[1], r[2], None if r[3] != r[3] else r[3], None if r[4] != r[4] else r[4]] for r in rows]


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, traces = sys.argv[1], sys.argv[2:]
    sys.path.insert(0, os.environ["HTA_SRC"])
    from hta.analyzers.straggler import extract_iteration_info  # noqa: E402
    from hta.trace_analysis import TraceAnalysis  # noqa: E402
    with tempfile.TemporaryDirectory() as tmp:
        for t in traces:
            shutil.copy(t, tmp)
        ta = TraceAnalysis(trace_dir=tmp)
    steps = extract_iteration_info(ta.t)
    base = int(ta.t.min_ts)
    step_rows = sorted([int(r.rank), int(r.iter), int(r.ts) + base, float(r.dur), float(r.end) + base]
                       for r in steps.itertuples() if r.iter >= 0)
    with open(out, "w") as f:
        json.dump({"hta_commit": os.environ.get("HTA_COMMIT", "(unknown)"),
                   "traces": [os.path.basename(t) for t in traces],
                   "overlap_columns": ["rank", "iteration", "communication_us", "comp_comm_overlap_pctg",
                                       "comp_comm_overlap_ratio"],
                   "overlap": overlap_rows(ta),
                   "steps_columns": ["rank", "iteration", "ts", "dur", "end"], "steps": step_rows},
                  f, indent=0)
        f.write("\n")


if __name__ == "__main__":
    main()
