#!/usr/bin/env python3
"""A trace cut off anywhere (a job killed while writing) is salvaged.

The base trace of tools/gen_damaged.py is cut at every byte offset, and a
~145 KB trace is gzip- and zstd-compressed and cut at evenly spaced offsets
of the compressed stream. For every cut:

* before the traceEvents array has begun: exit 1, "file ends at byte N
  before "traceEvents"" (nothing to salvage; "empty file" at byte 0);
* after it, but before the first complete event: exit 1, "truncated at
  byte N before its first complete event: nothing to report" (an empty
  table is never a success);
* otherwise exit 0 and, unless the JSON text happens to be complete, one
  warning "truncated at byte N ...; using the K complete events before it",
  K being the number of complete events before the cut (computed here by a
  Python reader, tests/reliability/common.py:salvage) and N the offset of
  the first incomplete event (or of the cut when none had begun);
* with --strict: exit 1 and the same offset and count in the error;
* at a sample of cuts, the table equals the table of the well-formed
  equivalent (the complete events only), and `ingest` writes a database
  whose events table has K rows.
"""

import gzip
import os
import re
import sqlite3

from common import (binary, check, cleanup, finish, gunzip_prefix, run, salvage, sanitized, tmpdir,
                    unzstd_prefix)
import gen_damaged

WARN = re.compile(rb"warning: .*: truncated at byte (\d+) \(([^)]*)\); using the (\d+) complete events before it")
STRICT = re.compile(rb"error: .*: truncated at byte (\d+) \(([^)]*)\); (\d+) complete events read")


def expected_offset(spans, cut):
    """Offset the reader stops at: the first event begun but not complete,
    else the cut itself."""
    for start, end in spans:
        if start < cut < end:
            return start
    return cut


def check_cut(bin_, tmp, path, data, cut, spans=None, strict=False, compare=False, ingest=False, what=""):
    prefix = data if spans is None else data[:cut]
    label = "%s cut at %d" % (what, cut)
    args = [bin_, path, "--no-cache", "--row-limit", "-1"] + (["--strict"] if strict else [])
    p = run(args, tmp)
    events_begun = (prefix.lstrip()[:1] == b"[" or
                    re.search(rb'"traceEvents"\s*:\s*\[', prefix) is not None)
    if not events_begun:
        check(p.returncode == 1, "%s: exit %d before traceEvents" % (label, p.returncode))
        check(b"before \"traceEvents\"" in p.stderr or b"empty file" in p.stderr,
              "%s: message %r" % (label, p.stderr[-300:]))
        return
    equivalent, n = salvage(prefix)
    if n == 0 and not strict:
        # nothing to report is never an empty success (the first event of
        # every trace cut here is one the report reads)
        check(p.returncode == 1 and b"before its first complete event: nothing to report" in p.stderr,
              "%s: no complete event: exit %d %r" % (label, p.returncode, p.stderr[-300:]))
        return
    complete = prefix.rstrip().endswith(b"}") and spans is not None and cut >= len(data.rstrip())
    if complete:
        check(p.returncode == 0 and not p.stderr, "%s: complete text: exit %d %r" % (label, p.returncode, p.stderr))
        return
    m = (STRICT if strict else WARN).search(p.stderr)
    if not check(m is not None and p.returncode == (1 if strict else 0),
                 "%s: exit %d, stderr %r" % (label, p.returncode, p.stderr[-400:])):
        return
    check(int(m.group(3)) == n, "%s: %s events reported, %d complete" % (label, m.group(3).decode(), n))
    if spans is not None:
        want = expected_offset(spans, cut)
        # after the array, the reader may stop inside a later top-level member
        if cut <= spans[-1][1] + 8:
            check(int(m.group(1)) == want, "%s: offset %s, expected %d" % (label, m.group(1).decode(), want))
        else:
            check(spans[-1][1] <= int(m.group(1)) <= cut, "%s: offset %s" % (label, m.group(1).decode()))
    if compare and not strict:
        eq = os.path.join(tmp, "equivalent.json")
        with open(eq, "wb") as f:
            f.write(equivalent)
        q = run([bin_, eq, "--no-cache", "--row-limit", "-1"], tmp)
        check(q.returncode == 0 and q.stdout == p.stdout, "%s: table differs from the complete events' table" % label)
    if ingest and not strict:
        db = os.path.join(tmp, "cut.db")
        q = run([bin_, "ingest", path, "-o", db], tmp)
        if check(q.returncode == 0, "%s: ingest exit %d %r" % (label, q.returncode, q.stderr[-300:])):
            con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            rows = con.execute("SELECT count(*) FROM events").fetchone()[0]
            con.close()
            check(rows == n, "%s: the database has %d events, %d are complete" % (label, rows, n))
            os.remove(db)


def main():
    bin_ = binary()
    tmp = tmpdir()
    cuts = 0
    try:
        base, spans = gen_damaged.BASE, gen_damaged.BASE_SPANS
        path = os.path.join(tmp, "cut.json")
        # every byte of the plain base trace (and the complete file); every
        # third under the sanitizers, which are ~10x slower per run
        stride = 3 if sanitized(bin_) else 1
        for cut in list(range(0, len(base) + 1, stride)) + [len(base)]:
            with open(path, "wb") as f:
                f.write(base[:cut])
            check_cut(bin_, tmp, path, base, cut, spans, compare=cut % 29 == 0, ingest=cut % 211 == 0,
                      what="base.json")
            if cut % 97 == 0:
                check_cut(bin_, tmp, path, base, cut, spans, strict=True, what="base.json --strict")
            cuts += 1

        # compressed: cuts of the compressed stream of a longer trace
        long = gen_damaged.LONG
        zst = gen_damaged.zst(long)

        def unzstd(cut_comp):
            # the zstd CLI keeps the last block to itself when only the
            # 4-byte content checksum is missing: every block is there
            return long if len(cut_comp) >= len(zst) - 4 else unzstd_prefix(cut_comp)

        for kind, comp, prefix_of in (("gz", gzip.compress(long, mtime=0), gunzip_prefix), ("zst", zst, unzstd)):
            path = os.path.join(tmp, "cut.json." + kind)
            step = max(1, len(comp) // 120)
            for k, cut in enumerate(list(range(4, len(comp), step)) + [len(comp) - 1]):
                with open(path, "wb") as f:
                    f.write(comp[:cut])
                check_cut(bin_, tmp, path, prefix_of(comp[:cut]), cut, compare=k % 10 == 0, ingest=k % 30 == 0,
                          what="long.json." + kind)
                cuts += 1
        print("truncation: %d cuts checked" % cuts)
    finally:
        cleanup(tmp)
    finish("truncation")


if __name__ == "__main__":
    main()
