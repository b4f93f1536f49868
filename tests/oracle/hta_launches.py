#!/usr/bin/env python3
"""`neuron-stats launches --each` against HTA's own result (tests/oracle/meson.build).

    hta_launches.py NEURON_STATS TRACE EXPECTED.json [--hta-drops-last-step]

EXPECTED.json was written by make_hta_launches.py from HTA's
get_cuda_kernel_launch_stats on TRACE: the same launches (by correlation id),
each with the same call and work durations and launch delay, exactly (µs).
With --hta-drops-last-step, launches whose call starts in the trace's last
ProfilerStep#N are left out of the comparison: HTA leaves them out (on
HTA's negative_queue_length_values_check/rank0 trace, all 1306 launches of
ProfilerStep#554 and no other). TRACE may start with @CORPUS@ as in run_one.py; a missing one is a skip (77).
"""
import gzip
import json
import sys

import oracle_check as oc


def last_step_calls(trace):
    """The correlation ids of the calls made in the last ProfilerStep#N."""
    with (gzip.open if trace.endswith(".gz") else open)(trace, "rb") as f:
        events = json.load(f)["traceEvents"]
    start = max(e["ts"] for e in events if str(e.get("name", "")).startswith("ProfilerStep#"))
    return set(e["args"]["correlation"] for e in events
               if e.get("ph") == "X" and "correlation" in e.get("args", {}) and e["ts"] >= start
               and e.get("cat") == "cuda_runtime")


def main():
    if len(sys.argv) not in (4, 5):
        sys.exit(__doc__)
    binary, trace, expected = sys.argv[1:4]
    trace = oc.trace_or_skip(binary, trace)
    if trace is None:
        return 77
    want_rows = oc.expected(expected)["rows"]
    got_rows = oc.run_json(binary, ["launches", "--each", trace])
    want = {r[0]: r[1:] for r in want_rows}
    got = {r["correlation"]: r for r in got_rows}
    if len(want) != len(want_rows) or len(got) != len(got_rows):
        sys.exit("a correlation id with two launches: compare them by more than their id")
    if sys.argv[4:] == ["--hta-drops-last-step"]:
        dropped = last_step_calls(trace)
        print("left out: %d launches of the last ProfilerStep (HTA leaves them out)" % len(set(got) & dropped))
        got = {c: r for c, r in got.items() if c not in dropped}
    ck = oc.Check(source="HTA")
    for c in sorted(set(got) ^ set(want)):
        ck.fail("launch %s: in %s only" % (c, "neuron-stats" if c in got else "HTA"))
    for c in sorted(set(got) & set(want)):
        for field, w in zip(("cpu_duration", "gpu_duration", "launch_delay"), want[c]):
            ck.eq("launch %s %s" % (c, field), w, got[c][field])
    return ck.finish("%d launches equal HTA's (%s)" % (len(got), expected))


if __name__ == "__main__":
    sys.exit(main())
