#!/usr/bin/env python3
"""Every allocation failure is exit 6 with "out of memory" (issue 16).

tests/alloc/failalloc.c (LD_PRELOAD) makes the Nth malloc, calloc or
realloc of a run return NULL. For `report --no-cache`, `report` with a
(fresh) cache directory and `report` replaying its result cache entry
(docs/cli.md "Cache") on gen_damaged's base.json (23 events), also with
one file on two cores forced (NEURON_STATS_SPLIT_MIN=1), `report`
of a directory holding it gzip'd, `ingest` of it and `report` of that
database, `report --engines` and `report --device-detail hlo` of the fused RMSNorm
Neuron capture (fixtures/capture-rmsnorm-fused) and `report --engines` of
its neuron-explorer layout (fixtures/capture-explorer-dir: exports above
the process folder), the script first counts the calls of a normal run, then runs once per N
in 1..count (every Nth when the count is above MAX_RUNS, so the sweep stays
under about a minute; the step is printed), and each run must end in one of
two ways, nothing else:

* exit 0 and exactly the normal run's stdout (a failure that only costs a
  cache write, say: `report` still prints its table); for `ingest`, a
  database that holds all 23 events;
* exit 6 with "out of memory" in the message, and for `ingest` no database
  and no temporary file left behind.

Before the fix, 13 of 26,236 such runs printed garbled op names with exit 0
(the string table's setup failed in ns_trace_init and was ignored), and
others said "invalid JSON" or "no trace found". In the Neuron capture
discovery (issue 17), 14 of the 457 allocations of `report --engines` on
the fused capture, swept one by one, gave a misleading answer: a trace or
an export left out ("no framework trace", exit 3 with conversion commands,
device time placed otherwise) or "not in a Neuron capture folder". Skipped (77) under the
sanitizers, which have their own allocator.
"""

import os
import shutil
import sqlite3
import sys

from common import SRC, binary, check, cleanup, finish, run, sanitized, tmpdir, env
import gen_damaged

MAX_RUNS = int(os.environ.get("NS_ALLOC_MAX_RUNS", 250))  # per command


def sweep(bin_, shim, tmp, name, args, db=None, warm=False, **more_env):
    """Runs args with each allocation failed in turn (a fresh cache each
    time, or with warm the result cache's entry of a normal run: each run
    a hit); db: the database args writes; more_env: set for every run."""
    count_file = os.path.join(tmp, "count")
    e = env(tmp, LD_PRELOAD=shim, NS_ALLOC_COUNT=count_file, **more_env)
    cache = os.path.join(tmp, "cache")

    def fresh():
        shutil.rmtree(cache, ignore_errors=True)
        if warm:
            run(args, tmp, check_code=0)
    fresh()
    base = run(args, tmp, env=e)
    check(base.returncode == 0, "%s: the normal run: exit %d %r" % (name, base.returncode, base.stderr))
    with open(count_file) as f:
        count = int(f.read())
    step = max(1, -(-count // MAX_RUNS))
    outcomes = {"ok": 0, "out of memory": 0}
    for n in range(1, count + 1, step):
        fresh()
        if db and os.path.exists(db):
            os.remove(db)
        p = run(args, tmp, env=env(tmp, LD_PRELOAD=shim, NS_FAIL_ALLOC=str(n), **more_env))
        label = "%s, allocation %d of %d failed" % (name, n, count)
        if p.returncode == 0:
            outcomes["ok"] += 1
            check(p.stdout == base.stdout, "%s: exit 0 with other output %r" % (label, p.stdout[-300:]))
            if db:
                try:
                    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
                    rows = con.execute("SELECT count(*) FROM events").fetchone()[0]
                    con.close()
                except sqlite3.Error as ex:
                    rows = "unreadable: %s" % ex
                check(rows == 23, "%s: exit 0, the database has %s events" % (label, rows))
        elif check(p.returncode == 6 and b"out of memory" in p.stderr,
                   "%s: exit %d %r" % (label, p.returncode, p.stderr[-400:])):
            outcomes["out of memory"] += 1
            if db:
                left = [f for f in os.listdir(os.path.dirname(db)) if f.startswith(os.path.basename(db))]
                check(not left, "%s: exit 6 left %s" % (label, left))
    print("alloc-failures: %s: %d allocations, every %d failed in turn: %s" % (
        name, count, step, ", ".join("%s %d" % kv for kv in outcomes.items())), flush=True)


def main():
    bin_ = binary()
    if len(sys.argv) < 3:
        sys.exit("usage: test_alloc_failures.py NEURON_STATS LIBFAILALLOC")
    shim = os.path.abspath(sys.argv[2])
    if sanitized(bin_):
        print("alloc-failures: skipped under the sanitizers (their allocator cannot be preloaded over)")
        raise SystemExit(77)
    tmp = tmpdir()
    try:
        trace = os.path.join(tmp, "base.json")
        with open(trace, "wb") as f:
            f.write(gen_damaged.BASE)
        sweep(bin_, shim, tmp, "report --no-cache", [bin_, trace, "--no-cache", "--row-limit", "-1"])
        # one file on two cores, forced on the small file: the part's thread
        # allocates too (which allocation is the Nth depends on the threads)
        sweep(bin_, shim, tmp, "report --no-cache (split)", [bin_, trace, "--no-cache", "--row-limit", "-1", "--jobs", "2"],
              NEURON_STATS_SPLIT_MIN="1")
        sweep(bin_, shim, tmp, "report (cache)", [bin_, trace, "--row-limit", "-1"])
        sweep(bin_, shim, tmp, "report (result cache hit)", [bin_, trace, "--row-limit", "-1"], warm=True)
        capture = os.path.join(tmp, "capture")
        os.mkdir(capture)
        with open(os.path.join(capture, "base.json.gz"), "wb") as f:
            f.write(gen_damaged.gz(gen_damaged.BASE))
        sweep(bin_, shim, tmp, "report DIR (gzip)", [bin_, capture, "--no-cache", "--row-limit", "-1"])
        out = os.path.join(tmp, "out")
        os.mkdir(out)
        db = os.path.join(out, "base.db")
        sweep(bin_, shim, tmp, "ingest", [bin_, "ingest", trace, "-o", db, "-q"], db=db)
        kept = os.path.join(tmp, "kept.db")
        run([bin_, "ingest", trace, "-o", kept, "-q"], tmp, check_code=0)
        sweep(bin_, shim, tmp, "report DB", [bin_, kept, "--row-limit", "-1"])
        # a Neuron capture (issue 17): discovery, pairing, the device exports
        neuron = os.path.join(tmp, "capture-rmsnorm-fused")
        shutil.copytree(os.path.join(SRC, "fixtures", "capture-rmsnorm-fused"), neuron)
        sweep(bin_, shim, tmp, "report CAPTURE --engines", [bin_, "report", neuron, "--engines", "--no-cache"])
        sweep(bin_, shim, tmp, "report CAPTURE --device-detail hlo",
              [bin_, "report", neuron, "--device-detail", "hlo", "--no-cache"])
        # exports found above the process folder (neuron-explorer view -d's layout)
        xdir = os.path.join(tmp, "capture-explorer-dir")
        shutil.copytree(os.path.join(SRC, "fixtures", "capture-explorer-dir"), xdir)
        sweep(bin_, shim, tmp, "report EXPLORER-DIR --engines", [bin_, "report", xdir, "--engines", "--no-cache"])
    finally:
        cleanup(tmp)
    finish("alloc-failures")


if __name__ == "__main__":
    main()
