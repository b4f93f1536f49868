#!/usr/bin/env python3
"""Explorer's warnings survive a database (issue 17.1, docs/neuron.md
"Explorer's warnings"): a report of a database ingested from a capture whose
system export carries neuron-explorer warnings prints exactly what the
report of the capture prints (the `‡` marks and footnote, the JSON
"explorer_warnings" and "device_time_warned", the CSV column), and a split
export (fixtures/capture-explorer-dir-2rank) stores its per-process device
time the same way.

Usage: test_xwarn_db.py NEURON_STATS
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CASES = [("fixtures/capture-explorer-dir", True), ("fixtures/capture-explorer-dir-2rank", False)]
FORMATS = [[], ["--format", "json"], ["--format", "csv"], ["--format", "markdown"]]


def main():
    ns = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")

        def run(args):
            return subprocess.run([ns] + args, cwd=SRC, env=env, capture_output=True)

        for i, (cap, warned) in enumerate(CASES):
            db = os.path.join(tmp, "run%d.db" % i)
            p = run(["ingest", cap, "-o", db, "-q"])
            if p.returncode != 0:
                sys.exit("ingest %s failed: %s" % (cap, p.stderr.decode()))
            for fmt in FORMATS:
                want = run([cap, "-q", "--row-limit", "-1"] + fmt)
                got = run([db, "-q", "--row-limit", "-1"] + fmt)
                what = "%s %s" % (cap, " ".join(fmt) or "table")
                if want.returncode or got.returncode:
                    failures.append("%s: exit %d / %d" % (what, want.returncode, got.returncode))
                elif want.stdout != got.stdout:
                    failures.append("%s: the database's report differs from the capture's" % what)
                elif (b"device_time_warned" in want.stdout or "‡".encode() in want.stdout) != warned:
                    failures.append("%s: marks %s" % (what, "missing" if warned else "where none belong"))
    for f in failures:
        print("FAIL " + f)
    print("ok" if not failures else "%d failures" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
