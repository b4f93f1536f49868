#!/usr/bin/env python3
"""`neuron-stats breakdown --per-step` against HTA's own results
(tests/oracle/meson.build).

    hta_breakdown_steps.py NEURON_STATS PATH EXPECTED.json

EXPECTED.json was written by make_hta_breakdown_steps.py: HTA's
get_temporal_breakdown per rank, and per rank and iteration run on the
events HTA gives that iteration, with the union of the communication
kernels beside it. The same rows (rank, step; the whole trace's with no
step) must be here, each with the same span, idle, compute, non-compute
and communication time, exactly (µs). PATH may start with @CORPUS@ as in
run_one.py; a missing one is a skip (77).
"""
import sys

import oracle_check as oc


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, path, name = sys.argv[1:4]
    path = oc.trace_or_skip(binary, path)
    if path is None:
        return 77
    want = oc.expected(name)
    got = {(r["rank"], r["step"]): r for r in oc.run_json(binary, ["breakdown", "--per-step", path])}
    ck = oc.Check(source="HTA")
    for rank, step, idle, compute, non_compute, span, comm in want["rows"]:
        r = got.pop((rank, step), None)
        if r is None:
            ck.fail("rank %s step %s: no row" % (rank, step))
            continue
        for what, w, key in (("span", span, "kernel_time_us"), ("idle", idle, "idle_time_us"),
                             ("compute", compute, "compute_time_us"),
                             ("non-compute", non_compute, "non_compute_time_us"),
                             ("communication", comm, "communication_time_us")):
            ck.eq("rank %s step %s %s" % (rank, step, what), w, r[key])
    for rank, step in got:
        ck.fail("rank %s step %s: a row HTA does not have" % (rank, step))
    return ck.finish("%d values of %d rows equal HTA's (%s)" % (ck.n, len(want["rows"]), name))


if __name__ == "__main__":
    sys.exit(main())
