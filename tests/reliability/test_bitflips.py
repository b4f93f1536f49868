#!/usr/bin/env python3
"""One flipped bit in a complete trace is never taken for a cut (issue 16).

A real trace of the corpus (HTA's MI250 minitoy trace, 66,897 bytes as
text) gets one bit flipped at each of N sampled (byte, bit) positions
(seeded: the same every run; N = 600, 200 under the sanitizers). For each
flipped file, `report --row-limit -1` must give one of these, judged
against Python's json module and the Python oracle (tests/oracle/), not
against the C code:

* Python's json rejects the text: exit 1 with `FILE:LINE:COL: ...` at or
  after the flipped byte (the text before it is the original, valid text),
  and where the message is `invalid JSON at byte N`, N is LINE:COL; or, when
  Python's complaint is "Extra data" (the flip is after the top-level
  value), exit 0 with the "data after the end of the JSON text" warning and
  the original table;
* Python reads the same document as the original (a flip in a string the
  table does not use, say): exit 0 and the original table;
* Python reads a different document: exit 0 and the oracle's table for the
  flipped file, or a non-zero exit whose message names the file.

and never the warning "truncated": the file was not cut. (Before the fix,
a flipped quote made the rest of the file one string, and the report said
"truncated ... (the file ends early)" and dropped the events after it.)
Invalid UTF-8 is read as Python's errors="replace" reads it, which is what
neuron-stats does (docs/testing.md).
"""

import decimal
import gzip
import json
import os
import random
import re

from common import binary, check, cleanup, finish, run, sanitized, tmpdir
import key_averages

TRACE = "facebookresearch-HolisticTraceAnalysis/tests/data/amd_trace/mi250_minitoy_train_ROCm6_2_kineto.json.gz"
ERROR = re.compile(rb"error: [^\n]*?:(\d+):(\d+): (invalid JSON at byte (\d+): )?")


def corpus():
    for cand in (os.environ.get("NS_CORPUS"), "/work/shared/corpus"):
        if cand and os.path.exists(os.path.join(cand, TRACE)):
            return cand
    return None


def python_reading(data):
    """(document, None) or (None, JSONDecodeError) for bytes, read as the
    oracle reads a trace (exact decimals), invalid UTF-8 replaced."""
    try:
        text = data.decode("utf-8", errors="replace")
        return json.loads(text, parse_float=decimal.Decimal, parse_int=int), None
    except json.JSONDecodeError as e:
        return None, e


def oracle_table(doc):
    try:
        return key_averages.table_for_data(doc, row_limit=-1).encode()
    except Exception:  # the oracle refuses some documents neuron-stats reads; not this test's subject
        return None


def main():
    bin_ = binary()
    root = corpus()
    if root is None:
        print("bitflips: corpus trace %s not found: skipped" % TRACE)
        raise SystemExit(77)
    with gzip.open(os.path.join(root, TRACE)) as f:
        orig = f.read()
    tmp = tmpdir()
    counts = {"rejected": 0, "extra data": 0, "same document": 0, "other document": 0, "other document, refused": 0}
    try:
        path = os.path.join(tmp, "flipped.json")
        args = [bin_, path, "--no-cache", "--row-limit", "-1"]
        with open(path, "wb") as f:
            f.write(orig)
        base = run(args, tmp)
        check(base.returncode == 0 and not base.stderr, "the original: exit %d %r" % (base.returncode, base.stderr))
        orig_doc, _ = python_reading(orig)
        rng = random.Random(16)
        n = 200 if sanitized(bin_) else int(os.environ.get("NS_FLIPS", 600))
        for _ in range(n):
            at, bit = rng.randrange(len(orig)), rng.randrange(8)
            data = bytearray(orig)
            data[at] ^= 1 << bit
            data = bytes(data)
            with open(path, "wb") as f:
                f.write(data)
            p = run(args, tmp)
            label = "byte %d bit %d (%r -> %r)" % (at, bit, orig[at:at + 1], data[at:at + 1])
            check(b"truncated" not in p.stderr, "%s: a flipped bit reported as a cut: %r" % (label, p.stderr))
            doc, err = python_reading(data)
            if err is not None and err.msg == "Extra data":
                counts["extra data"] += 1
                check(p.returncode == 0 and p.stdout == base.stdout and b"data after the end" in p.stderr,
                      "%s: after the value: exit %d %r" % (label, p.returncode, p.stderr[-300:]))
            elif err is not None:
                counts["rejected"] += 1
                m = ERROR.search(p.stderr)
                if not check(p.returncode == 1 and m is not None,
                             "%s: Python's json says %s at %d; exit %d %r" % (label, err.msg, err.pos, p.returncode,
                                                                             p.stderr[-300:])):
                    continue
                line, col = int(m.group(1)), int(m.group(2))
                starts = [0] + [k + 1 for k, c in enumerate(data) if c == 0x0a]
                where = starts[line - 1] + col - 1 if line <= len(starts) else -1
                check(at <= where < len(data), "%s: error at %d:%d (byte %d), before the flip" % (label, line, col,
                                                                                              where))
                check(m.group(4) is None or int(m.group(4)) == where,
                      "%s: byte %s is not %d:%d" % (label, m.group(4), line, col))
            elif doc == orig_doc:
                counts["same document"] += 1
                check(p.returncode == 0 and p.stdout == base.stdout,
                      "%s: the same document, exit %d %r" % (label, p.returncode, p.stderr[-300:]))
            elif p.returncode == 0:
                counts["other document"] += 1
                want = oracle_table(doc)
                check(want is None or p.stdout == want, "%s: the table differs from the oracle's" % label)
            else:
                counts["other document, refused"] += 1
                check(path.encode() in p.stderr, "%s: exit %d %r" % (label, p.returncode, p.stderr[-300:]))
        print("bitflips: %d flips of %s: %s" % (n, os.path.basename(TRACE),
                                               ", ".join("%s %d" % kv for kv in counts.items())))
    finally:
        cleanup(tmp)
    finish("bitflips")


if __name__ == "__main__":
    main()
