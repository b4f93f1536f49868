"""What the oracle comparisons share (tests/oracle/meson.build): run
neuron-stats with --format json on a trace, and compare its values with the
expected ones, exactly or within a tolerance, collecting the differences.

    path = oracle_check.trace_or_skip(binary, path)   # None: print the skip
    rows = oracle_check.run_json(binary, ["breakdown", path])
    ck = oracle_check.Check(tolerance)
    ck.eq("rank 0 idle", want, got)
    return ck.finish("%d values equal HTA's" % ck.n)

Numbers are read as decimal.Decimal (the µs are exact decimals).
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


def trace_or_skip(binary, path):
    """PATH with @CORPUS@ resolved as in run_one.py; None (after printing
    why) when it is missing: the caller returns 77, a skip."""
    path = corpus.resolve(path, binary)
    if os.path.exists(path):
        return path
    print(corpus.skip_reason(path))
    return None


def expected(name):
    """The checked-in JSON of expected values, by its path in the source tree."""
    with open(os.path.join(SRC, name)) as f:
        return json.load(f)


def run_json(binary, args):
    """neuron-stats ARGS --no-cache -q -f json, parsed; exits on failure."""
    c = subprocess.run([binary] + list(args) + ["--no-cache", "-q", "-f", "json"], capture_output=True)
    if c.returncode != 0:
        sys.exit("neuron-stats %s failed (exit %d): %s"
                 % (" ".join(args), c.returncode, c.stderr.decode(errors="replace")))
    return json.loads(c.stdout, parse_float=D)


class Check:
    """Compares values one at a time. known: {what: (expected, ours)} for
    differences the docs explain; each must occur with exactly those
    figures. tolerance: how far any value may be off (0: exact)."""

    def __init__(self, tolerance=D(0), known=None, source="expected"):
        self.tolerance = D(tolerance)
        self.known = dict(known or {})
        self.source = source
        self.fails = []
        self.n = 0
        self.n_known = 0
        self.worst = D(0)

    def fail(self, message):
        self.fails.append(message)

    def eq(self, what, want, got, slack=D(0)):
        """want and got (numbers or their text) equal within slack + the
        tolerance; None equals None only."""
        self.n += 1
        if what in self.known:
            self.n_known += 1
            said = self.known.pop(what)
            if (D(str(want)), D(str(got))) != (D(said[0]), D(said[1])):
                self.fail("%s: %s %s, neuron-stats %s; the docs say %s %s, neuron-stats %s"
                          % (what, self.source, want, got, self.source, said[0], said[1]))
            return
        if want is None or got is None:
            if want is not got:
                self.fail("%s: %s %s, neuron-stats %s" % (what, self.source, want, got))
            return
        diff = abs(D(str(want)) - D(str(got)))
        self.worst = max(self.worst, diff if slack == 0 else D(0))
        if diff > slack + self.tolerance:
            self.fail("%s: %s %s, neuron-stats %s" % (what, self.source, want, got))

    def finish(self, ok_message):
        """Prints the verdict; returns the exit status (0 or 1)."""
        self.fails += ["%s: not compared (a known difference that did not occur)" % what for what in self.known]
        if not self.fails:
            print("ok: " + ok_message)
            return 0
        for f in self.fails[:30]:
            print(f)
        print("FAIL: %d of %d values differ from the %s ones" % (len(self.fails), self.n, self.source))
        return 1
