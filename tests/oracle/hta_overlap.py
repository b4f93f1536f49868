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
import decimal
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402

D = decimal.Decimal


def run(binary, *args):
    c = subprocess.run([binary, *args, "--no-cache", "-q", "-f", "json"], capture_output=True)
    if c.returncode != 0:
        sys.exit("neuron-stats %s failed (exit %d): %s" % (args[0], c.returncode, c.stderr.decode(errors="replace")))
    return json.loads(c.stdout, parse_float=D)


def compare_overlap(got_rows, want_rows):
    got = {(r["rank"], r["step"]): r for r in got_rows}
    bad = []
    if sorted(got, key=str) != sorted(((r[0], r[1]) for r in want_rows), key=str):
        bad.append("rows: neuron-stats %s, HTA %s" % (sorted(got, key=str),
                                                      sorted(((r[0], r[1]) for r in want_rows), key=str)))
        return bad
    for rank, step, comm_us, pctg, ratio in want_rows:
        g = got[(rank, step)]
        if D(str(comm_us)) != g["communication_us"]:
            bad.append("rank %s step %s: communication %s us, HTA %s" % (rank, step, g["communication_us"], comm_us))
        if ratio is None or g["comp_comm_overlap_pct"] is None:
            if not (ratio is None and g["comp_comm_overlap_pct"] is None):
                bad.append("rank %s step %s: ratio %s, HTA %s" % (rank, step, g["comp_comm_overlap_pct"], ratio))
            continue
        ours = float(g["overlap_us"]) / float(g["communication_us"])
        if abs(ours - ratio) > 1e-12 or round(100 * ours, 2) != pctg:
            bad.append("rank %s step %s: ratio %r (%s %%), HTA %r (%s %%)" % (rank, step, ours, round(100 * ours, 2),
                                                                             ratio, pctg))
    return bad


def compare_steps(got_rows, want_rows):
    first = {}
    for rank, it, ts, dur, end in want_rows:
        first[it] = min(first.get(it, ts), ts)
    want = sorted((it, rank, D(ts - first[it]), D(str(end)) - first[it], D(str(dur)))
                  for rank, it, ts, dur, end in want_rows)
    got = sorted((r["step"], r["rank"], r["start_us"], r["end_us"], r["duration_us"]) for r in got_rows)
    if got == want:
        return []
    return ["steps: neuron-stats %s, HTA %s" % (g, w) for g, w in zip(got, want) if g != w][:20] + \
        ["steps: neuron-stats %d rows, HTA %d" % (len(got), len(want))]


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, path, expected = sys.argv[1:4]
    path = corpus.resolve(path, binary)
    if not os.path.exists(path):
        print(corpus.skip_reason(path))
        return 77
    with open(os.path.join(SRC, expected)) as f:
        want = json.load(f)
    bad = compare_overlap(run(binary, "overlap", "--steps", path), want["overlap"])
    bad += compare_steps(run(binary, "stragglers", "--ranks", path), want["steps"])
    if not bad:
        print("ok: %d overlap rows and %d rank steps equal HTA's (%s)"
              % (len(want["overlap"]), len(want["steps"]), expected))
        return 0
    print("\n".join(bad))
    print("FAIL: neuron-stats and HTA disagree")
    return 1


if __name__ == "__main__":
    sys.exit(main())
