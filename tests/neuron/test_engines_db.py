#!/usr/bin/env python3
"""`report DB --engines` (issue 15.3): a database ingested from a capture
finds the capture's device profiles where it was ingested, whatever the
working directory of the report; and a trace without a device profile
fails before printing anything (no table, then an error).

Usage: test_engines_db.py NEURON_STATS
  1. ingest fixtures/capture-2rank (a relative path, from the source root)
     into a database in a temporary directory;
  2. `report DB --engines --format json` run from that temporary directory
     prints exactly what `report fixtures/capture-2rank --engines --format
     json` prints from the source root (the same rows, engines and sources:
     the JSON "path" is the recorded one in both);
  3. `report fixtures/rmsnorm-fused/trace.json --engines` (no device
     profile): exit 1, the error on stderr and nothing on stdout.
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))


def main():
    ns = os.path.abspath(sys.argv[1])
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")

        def run(args, cwd):
            return subprocess.run([ns] + args, cwd=cwd, env=env, capture_output=True)

        db = os.path.join(tmp, "run.db")
        p = run(["ingest", "fixtures/capture-2rank", "-o", db, "-q"], SRC)
        if p.returncode != 0:
            sys.exit("ingest failed: %s" % p.stderr.decode())
        want = run(["fixtures/capture-2rank", "--engines", "--format", "json", "--no-cache"], SRC)
        got = run(["run.db", "--engines", "--format", "json"], tmp)
        if want.returncode != 0 or b'"engines"' not in want.stdout:
            failures.append("the capture itself: exit %d %s" % (want.returncode, want.stderr.decode()))
        if got.returncode != 0 or got.stdout != want.stdout:
            failures.append("report DB --engines from another directory: exit %d, stderr %s, stdout %s"
                            % (got.returncode, got.stderr.decode()[-500:], "same" if got.stdout == want.stdout
                               else "differs"))
        p = run(["fixtures/rmsnorm-fused/trace.json", "--engines", "--no-cache"], SRC)
        if p.returncode != 1 or p.stdout or b"no device profile" not in p.stderr:
            failures.append("no device profile: exit %d, %d bytes on stdout, stderr %s"
                            % (p.returncode, len(p.stdout), p.stderr.decode()[-300:]))
    for f in failures:
        print("FAIL:", f)
    print("engines-db: %s" % ("ok" if not failures else "%d failure(s)" % len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
