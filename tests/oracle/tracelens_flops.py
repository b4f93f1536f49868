#!/usr/bin/env python3
"""`report --flops` on fused attention ops against TraceLens's own numbers
(tests/oracle/meson.build).

    tracelens_flops.py NEURON_STATS TRACE

The expected values, tests/oracle/tracelens/sdpa_flops.json, were read by
make_tracelens_flops.py from the perf reports TraceLens checks in beside
its test traces (its SDPA model: GFLOPS per call and the number of calls,
per op and argument set). `neuron-stats report TRACE --flops --group-by
shape` must give, for the aten::_scaled_dot_product_*_attention ops, exactly
TraceLens's rows: the same (op, Input Dims) keys with FLOPs, the same calls,
the same FLOPs to the unit, each computed from the shapes.

TRACE may start with @CORPUS@ as in run_one.py; a missing one is a skip (77).
"""
import sys

import oracle_check as oc

PREFIX = "aten::_scaled_dot_product_"


def main():
    binary, trace = sys.argv[1], sys.argv[2]
    want = oc.expected("tests/oracle/tracelens/sdpa_flops.json")["traces"][trace]["rows"]
    path = oc.trace_or_skip(binary, trace)
    if path is None:
        return 77
    report = oc.run_json(binary, ["report", path, "--flops", "--group-by", "shape", "--row-limit", "-1"])
    got = {(r["name"], r["input_shapes"]): r for r in report["rows"]
           if r["name"].startswith(PREFIX) and r["flops"] > 0}
    ck = oc.Check(source="TraceLens")
    if sorted(got) != sorted((name, dims) for name, dims, _, _ in want):
        ck.fail("rows with FLOPs: neuron-stats %s, TraceLens %s" % (sorted(got), [w[:2] for w in want]))
    for name, dims, calls, flops in want:
        g = got.get((name, dims))
        if g is None:
            continue
        ck.eq("%s %s calls" % (name, dims), calls, g["calls"])
        ck.eq("%s %s FLOPs" % (name, dims), flops, g["flops"])
        if g["flops_from"] != "shapes":
            ck.fail("%s %s: FLOPs from %r, not the shapes" % (name, dims, g["flops_from"]))
    return ck.finish("%d values equal TraceLens's (%d attention rows)" % (ck.n, len(want)))


if __name__ == "__main__":
    sys.exit(main())
