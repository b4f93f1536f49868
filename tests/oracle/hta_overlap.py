#!/usr/bin/env python3
"""`neuron-stats overlap --steps` and the step ends of `neuron-stats stragglers
--ranks` against HTA's own results (tests/oracle/meson.build).

    hta_overlap.py NEURON_STATS PATH EXPECTED.json

EXPECTED.json was written by make_hta_overlap.py from HTA on the traces of
PATH (a trace, or a folder of the ranks of one job):

  * overlap, per rank (whole trace) and per rank and profiler step: the
    communication time equals HTA's (µs, exactly); the overlap ratio
    (overlap_us / communication_us) is HTA's comp_comm_overlap_ratio within
    1e-12 (HTA divides floats; the µs are the same integers), and rounded
    as HTA rounds it (to 0.01 %) equals HTA's comp_comm_overlap_pctg
    exactly; no communication kernel: HTA's NaN, our missing percentage;
  * steps: each rank's ProfilerStep#N that HTA keeps (extract_iteration_info),
    its duration exactly, and its start and end from the step's first start
    over the ranks exactly.

PATH may start with @CORPUS@ as in run_one.py; a missing one is a skip (77).
"""
import sys

import oracle_check as oc

D = oc.D


def compare_overlap(ck, got_rows, want_rows):
    got = {(r["rank"], r["step"]): r for r in got_rows}
    want_keys = sorted(((r[0], r[1]) for r in want_rows), key=str)
    if sorted(got, key=str) != want_keys:
        ck.fail("rows: neuron-stats %s, HTA %s" % (sorted(got, key=str), want_keys))
        return
    for rank, step, comm_us, pctg, ratio in want_rows:
        g = got[(rank, step)]
        what = "rank %s step %s" % (rank, step)
        ck.eq(what + " communication us", comm_us, g["communication_us"])
        if ratio is None or g["comp_comm_overlap_pct"] is None:
            ck.eq(what + " ratio (HTA NaN: none)", ratio, g["comp_comm_overlap_pct"])
            continue
        ours = float(g["overlap_us"]) / float(g["communication_us"])
        ck.eq(what + " ratio", ratio, ours, D("1e-12"))
        ck.eq(what + " rounded %", pctg, round(100 * ours, 2))


def compare_steps(ck, got_rows, want_rows):
    first = {}
    for rank, it, ts, dur, end in want_rows:
        first[it] = min(first.get(it, ts), ts)
    got = {(r["step"], r["rank"]): r for r in got_rows}
    if sorted(got) != sorted((it, rank) for rank, it, _, _, _ in want_rows):
        ck.fail("steps: neuron-stats %s, HTA %s" % (sorted(got), sorted((it, rank) for rank, it, _, _, _ in want_rows)))
        return
    for rank, it, ts, dur, end in want_rows:
        g = got[(it, rank)]
        what = "step %s rank %s" % (it, rank)
        ck.eq(what + " start", D(ts - first[it]), g["start_us"])
        ck.eq(what + " end", D(str(end)) - first[it], g["end_us"])
        ck.eq(what + " duration", D(str(dur)), g["duration_us"])


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, path, expected = sys.argv[1:4]
    path = oc.trace_or_skip(binary, path)
    if path is None:
        return 77
    want = oc.expected(expected)
    ck = oc.Check(source="HTA")
    compare_overlap(ck, oc.run_json(binary, ["overlap", "--steps", path]), want["overlap"])
    compare_steps(ck, oc.run_json(binary, ["stragglers", "--ranks", path]), want["steps"])
    return ck.finish("%d overlap rows and %d rank steps equal HTA's (%s)"
                     % (len(want["overlap"]), len(want["steps"]), expected))


if __name__ == "__main__":
    sys.exit(main())
