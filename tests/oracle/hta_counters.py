#!/usr/bin/env python3
"""`neuron-stats counters` against HTA's own result (tests/oracle/meson.build).

    hta_counters.py NEURON_STATS TRACE EXPECTED.json

EXPECTED.json was written by make_hta_counters.py from HTA's
get_cupti_counter_data_with_operators on TRACE; every range's kernel name,
top- and bottom-level op, op stack and counters must be equal, in order.
TRACE may start with @CORPUS@ as in run_one.py; a missing one is a skip (77).
"""
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402


def main():
    if len(sys.argv) != 4:
        sys.exit(__doc__)
    binary, trace, expected = sys.argv[1:]
    trace = corpus.resolve(trace, binary)
    if not os.path.exists(trace):
        print(corpus.skip_reason(trace))
        return 77
    with open(os.path.join(SRC, expected)) as f:
        want = json.load(f)["rows"]
    c = subprocess.run([binary, "counters", "-f", "json", trace], capture_output=True)
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    got = json.loads(c.stdout)
    bad = ["%d ranges, HTA %d" % (len(got), len(want))] if len(got) != len(want) else []
    for i, (w, g) in enumerate(zip(want, got)):
        for key, value in w.items():
            mine = g.get(key)
            if key == "op_stack":
                mine = mine.split(";") if mine else []
            if mine != value:
                bad.append("range %d %s: HTA %r, neuron-stats %r" % (i, key, value, mine))
    for line in bad[:20]:
        print(line)
    if bad:
        print("FAIL: %d difference(s) from HTA" % len(bad))
        return 1
    print("ok: %d ranges equal HTA's (%s)" % (len(got), expected))
    return 0


if __name__ == "__main__":
    sys.exit(main())
