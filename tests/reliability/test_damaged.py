#!/usr/bin/env python3
"""Damaged input: every defined behaviour checked against an independent
reference (docs/testing.md "Damaged input").

The golden cases tests/golden/cases/damaged-* pin the exact output of each
damaged file of tools/gen_damaged.py; this test shows that output is *right*:
for each damaged file that loads, neuron-stats' table equals its table for a
well-formed equivalent (built here in Python: the complete events of a cut
file, the replacement characters of invalid UTF-8, dur 0 for a negative or
non-finite one, ...), and the Python oracle agrees on that equivalent. It
also covers what is too big for a golden: strings over the 8 MiB limit,
nesting at the 256-level boundary.
"""

import json
import os
import re

from common import (binary, check, cleanup, decompressed_prefix, fail, finish, oracle_table, run, salvage,
                    tmpdir)
import gen_damaged

DAMAGED = os.path.join(gen_damaged.SRC, "tests", "golden", "inputs", "damaged")


def table(bin_, path, tmp, *args):
    p = run([bin_, path, "--row-limit", "-1", "--no-cache"] + list(args), tmp)
    return p


def write(tmp, name, data):
    path = os.path.join(tmp, name)
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(name):
    with open(os.path.join(DAMAGED, name), "rb") as f:
        return f.read()


def same_as(bin_, tmp, name, equivalent, oracle=True):
    """neuron-stats on damaged/NAME prints what it prints for `equivalent`
    (bytes), and the oracle agrees on the equivalent."""
    got = table(bin_, os.path.join(DAMAGED, name), tmp)
    eq_path = write(tmp, "equiv-" + name.replace(".gz", "").replace(".zst", ""), equivalent)
    want = table(bin_, eq_path, tmp)
    check(want.returncode == 0, "%s: the equivalent does not load: %s" % (name, want.stderr[-500:]))
    check(got.stdout == want.stdout, "%s: table differs from its well-formed equivalent" % name)
    if oracle:
        o = oracle_table(eq_path)
        check(o is not None and o == want.stdout, "%s: the oracle disagrees on the equivalent" % name)
    return got


def visible(name):
    """docs/report.md "Control characters": C0, DEL and C1 controls as
    Python's repr() spells them (\\t \\n \\r, else \\xHH)."""
    return "".join(repr(c)[1:-1] if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f else c for c in name)


def main():
    bin_ = binary()
    tmp = tmpdir()
    base = gen_damaged.BASE
    try:
        # --- cut files: the complete events, and a warning that counts them ---
        for name in ("truncated-mid-event.json", "truncated-after-comma.json", "truncated-mid-string.json",
                     "truncated-after-events.json", "truncated-nul-tail.json", "truncated-legacy-array.json",
                     "truncated.json.gz", "truncated-trailer.json.gz", "truncated.json.zst"):
            data = decompressed_prefix(read(name)).rstrip(b"\0")
            equivalent, n = salvage(data)
            got = same_as(bin_, tmp, name, equivalent)
            m = re.search(rb"truncated at byte (\d+) .*; using the (\d+) complete events", got.stderr)
            check(got.returncode == 0 and m is not None, "%s: exit %d, stderr %r" % (name, got.returncode, got.stderr))
            if m:
                check(int(m.group(2)) == n, "%s: warning says %s events, %d are complete" % (name, m.group(2), n))
                check(int(m.group(1)) <= len(data), "%s: offset %s past the data" % (name, m.group(1)))

        # --- damage that must not change the table ---
        for name in ("out-of-order.json", "duplicate-keys.json", "trailing-nul-padding.json.gz",
                     "deep-nesting-ok.json", "trailing-garbage.json"):
            same_as(bin_, tmp, name, base)

        # --- durations: negative, missing, NaN, Infinity -> 0 ---
        zero = base.replace(b'"dur": 8.000', b'"dur": 0.000', 1)
        for name in ("dur-negative.json", "dur-missing.json", "dur-nan.json", "dur-infinity.json"):
            same_as(bin_, tmp, name, zero)

        # --- non-finite ids are absent ids ---
        eq = (read("nonfinite-elsewhere.json").replace(b'"External id": NaN, ', b"", 1)
              .replace(b'{"correlation": -Infinity}', b"{}", 1))
        same_as(bin_, tmp, "nonfinite-elsewhere.json", eq)

        # --- text: invalid UTF-8 -> U+FFFD (Python's errors="replace"), NUL and
        #     lone surrogates too; escaped control characters kept ---
        eq = (read("invalid-utf8.json").decode("utf-8", errors="replace").encode()
              .replace(b"\\u0000", b"\\ufffd").replace(b"\\ud800", b"\\ufffd"))
        got = same_as(bin_, tmp, "invalid-utf8.json", eq)
        check(b"\xef\xbf\xbd" in got.stdout, "invalid-utf8: no U+FFFD in the table")
        for fmt in ("csv", "json", "markdown"):
            p = table(bin_, os.path.join(DAMAGED, "invalid-utf8.json"), tmp, "--format", fmt)
            try:
                p.stdout.decode("utf-8")
            except UnicodeDecodeError as e:
                fail("invalid-utf8 --format %s: output is not UTF-8: %s" % (fmt, e))
        # control characters are printed visibly in the table (docs/report.md):
        # the table is the oracle's for the same trace with each name
        # already spelled that way (Python's repr of the character)
        eq = read("control-chars.json").replace(b"\ttab", b"\\ttab", 1)
        same_as(bin_, tmp, "control-chars.json", eq, oracle=False)
        doc = json.loads(eq)
        for ev in doc["traceEvents"]:
            if "name" in ev:
                ev["name"] = visible(ev["name"])
        visible_path = write(tmp, "control-chars-visible.json", json.dumps(doc).encode())
        got = table(bin_, os.path.join(DAMAGED, "control-chars.json"), tmp)
        check(got.stdout == oracle_table(visible_path), "control-chars: differs from the oracle's visible names")
        check(b"\x1b" not in got.stdout and b"\\x1b[31m" in got.stdout, "control-chars: ESC printed as it is")
        p = table(bin_, os.path.join(DAMAGED, "control-chars.json"), tmp, "--format", "json")
        try:
            doc = json.loads(p.stdout)
            names = json.dumps(doc)
            check("\\u001b[31m" in names and "clamp\\nmin" in names, "control-chars: names not kept in JSON")
        except ValueError as e:
            fail("control-chars --format json does not parse: %s" % e)

        # --- damage inside the text (a lost quote, a quote turned into NUL, a raw
        #     TAB, a flipped bit, damage in the last event, damage then a cut):
        #     exit 1 at the first byte no JSON text can have, which is where
        #     Python's json stops too; never a truncation warning ---
        for name in ("missing-quote.json", "quote-nul.json", "raw-control-in-string.json", "brace-flipped.json",
                     "missing-quote-last-event.json", "missing-quote-then-cut.json"):
            data = read(name)
            try:
                json.loads(data.decode("utf-8", errors="replace"))
                want = None
            except json.JSONDecodeError as e:
                want = e.pos  # (an ASCII file: characters are bytes)
            p = table(bin_, os.path.join(DAMAGED, name), tmp)
            m = re.search(rb":(\d+):(\d+): invalid JSON at byte (\d+): ", p.stderr)
            if check(p.returncode == 1 and m is not None and b"truncated" not in p.stderr,
                     "%s: exit %d, stderr %r" % (name, p.returncode, p.stderr)):
                at = int(m.group(3))
                check(at == want, "%s: error at byte %d, Python's json at %s" % (name, at, want))
                line = data[:at].count(b"\n") + 1
                col = at - (data.rfind(b"\n", 0, at) + 1) + 1
                check((int(m.group(1)), int(m.group(2))) == (line, col),
                      "%s: %s:%s is not byte %d (%d:%d)" % (name, m.group(1), m.group(2), at, line, col))

        for name in ("valid-utf8.json", "long-name.json", "pid-beyond-64-bits.json"):
            got = table(bin_, os.path.join(DAMAGED, name), tmp)
            check(got.returncode == 0 and got.stdout == oracle_table(os.path.join(DAMAGED, name)),
                  "%s: differs from the oracle" % name)

        # --- strings over the 8 MiB string-table limit: a clear error, exit 6 ---
        for size, code in ((7 << 20, 0), (9 << 20, 6)):
            big = base.replace(b'"aten::relu"', b'"aten::' + b"r" * size + b'"', 1)
            path = write(tmp, "big-name-%d.json" % size, big)
            p = table(bin_, path, tmp)
            check(p.returncode == code, "name of %d bytes: exit %d, expected %d" % (size, p.returncode, code))
            if code:
                check(re.search(rb":\d+:\d+: a string of \d+ bytes is longer than the limit of 8388607 bytes",
                                p.stderr) is not None, "name of %d bytes: message %r" % (size, p.stderr))
            os.remove(path)

        # --- nesting: 256 levels from the event object down are fine, 257 are not ---
        for levels, code in ((256, 0), (257, 1)):
            inner = levels - 2  # the event object and its args are two levels
            doc = base.replace(b'"Op count": 0', b'"Op count": 0, "deep": ' + b"[" * inner + b"]" * inner, 1)
            p = table(bin_, write(tmp, "deep-%d.json" % levels, doc), tmp)
            check(p.returncode == code, "%d levels: exit %d, expected %d (%r)" % (levels, p.returncode, code,
                                                                                   p.stderr[-300:]))
            if code:
                check(b"nested deeper than 256 levels" in p.stderr, "%d levels: %r" % (levels, p.stderr))
    finally:
        cleanup(tmp)
    finish("damaged")


if __name__ == "__main__":
    main()
