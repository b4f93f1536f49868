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
import decimal
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402

D = decimal.Decimal


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
    trace = corpus.resolve(trace, binary)
    if not os.path.exists(trace):
        print(corpus.skip_reason(trace))
        return 77
    with open(os.path.join(SRC, expected)) as f:
        want = [(r[0], D(r[1]), D(r[2]), D(r[3])) for r in json.load(f)["rows"]]
    c = subprocess.run([binary, "launches", "--each", "--no-cache", "-f", "json", trace], capture_output=True)
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    got = sorted((r["correlation"], D(str(r["cpu_duration"])), D(str(r["gpu_duration"])), D(str(r["launch_delay"])))
                 for r in json.loads(c.stdout, parse_float=D))
    if sys.argv[4:] == ["--hta-drops-last-step"]:
        dropped = last_step_calls(trace)
        print("left out: %d launches of the last ProfilerStep (HTA leaves them out)"
              % sum(1 for g in got if g[0] in dropped))
        got = [g for g in got if g[0] not in dropped]
    if got == want:
        print("ok: %d launches equal HTA's (%s)" % (len(got), expected))
        return 0
    print("HTA %d launches, neuron-stats %d" % (len(want), len(got)))
    for w, g in [(w, g) for w, g in zip(want, got) if w != g][:20]:
        print("HTA %s, neuron-stats %s" % (w, g))
    print("FAIL: neuron-stats and HTA disagree")
    return 1


if __name__ == "__main__":
    sys.exit(main())
