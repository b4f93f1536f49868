#!/usr/bin/env python3
"""Faults during ingest (docs/testing.md "Faults").

* `ingest` killed at any point (SIGINT, SIGKILL; at many delays) leaves the
  database as it was, or as the complete new one when the kill came after
  the rename, never anything else; the next run leaves no temp file behind.
* Two (and four) `ingest` runs on the same input and output at once produce
  one valid database and no temp file.
* A full disk (a file-size limit, RLIMIT_FSIZE, which works unprivileged;
  and, when the test may mount one, a 1 MiB tmpfs) gives a clear error
  (exit 5) and no partial database; the previous database stays intact;
  `report` still prints its table when only its cache cannot be written.
"""

import hashlib
import os
import resource
import signal
import sqlite3
import subprocess
import time

from common import binary, check, cleanup, env, finish, run, tmpdir
import gen_damaged


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def db_events(db):
    """(integrity ok, number of events rows) of a database, read-only."""
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        ok = con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        return ok, con.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        con.close()


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def temp_files(d, db_name):
    return sorted(n for n in os.listdir(d) if n.startswith(db_name) and n != db_name)


def main():
    bin_ = binary()
    tmp = tmpdir()
    try:
        small = write(os.path.join(tmp, "small.json"), gen_damaged.BASE)
        n_small = len(gen_damaged.BASE_SPANS)
        big_data = gen_damaged.long_trace(1500)
        big = write(os.path.join(tmp, "big.json"), big_data)
        n_big = big_data.count(b'\n  {\n    "')
        db = os.path.join(tmp, "out.db")

        # ---- kill at any point ----
        run([bin_, "ingest", small, "-o", db], tmp, check_code=0)
        old = digest(db)
        t0 = time.time()
        run([bin_, "ingest", big, "-o", os.path.join(tmp, "timing.db")], tmp, check_code=0)
        full = time.time() - t0
        os.remove(os.path.join(tmp, "timing.db"))
        delays = [full * k / 24 for k in range(0, 28)]
        outcomes = {"old": 0, "new": 0}
        for i, delay in enumerate(delays):
            sig = signal.SIGKILL if i % 2 else signal.SIGINT
            p = subprocess.Popen([bin_, "ingest", big, "-o", db], env=env(tmp), stdout=subprocess.DEVNULL,
                                 stderr=subprocess.DEVNULL)
            time.sleep(delay)
            p.send_signal(sig)
            p.wait()
            if not check(os.path.exists(db), "kill (%s after %.2f s): the database is gone" % (sig.name, delay)):
                continue
            if digest(db) == old:
                outcomes["old"] += 1
            else:
                ok, n = db_events(db)
                check(ok and n == n_big, "kill (%s after %.2f s): a database that is neither the old one nor "
                      "the complete new one (%s, %d events)" % (sig.name, delay, ok, n))
                outcomes["new"] += 1
                run([bin_, "ingest", small, "-o", db], tmp, check_code=0)  # back to the old one
                old = digest(db)
        print("kills: %d left the old database, %d the complete new one" % (outcomes["old"], outcomes["new"]))
        check(outcomes["old"] > 0, "no kill landed before the rename: the test did not test anything")
        run([bin_, "ingest", small, "-o", db], tmp, check_code=0)
        check(temp_files(tmp, "out.db") == [], "temp files after the next run: %s" % temp_files(tmp, "out.db"))
        check(db_events(db) == (True, n_small), "the database after the next run: %s" % (db_events(db),))

        # ---- concurrent ingests ----
        for writers in (2, 2, 4):
            procs = [subprocess.Popen([bin_, "ingest", big, "-o", db], env=env(tmp), stdout=subprocess.DEVNULL,
                                      stderr=subprocess.PIPE) for _ in range(writers)]
            codes = [(p.wait(), p.stderr.read()) for p in procs]
            check(all(c == 0 for c, _ in codes), "concurrent ingests: %s" % codes)
            check(db_events(db) == (True, n_big), "after %d concurrent ingests: %s" % (writers, db_events(db),))
            check(temp_files(tmp, "out.db") == [], "temp files after concurrent ingests: %s" % temp_files(tmp, "out.db"))

        # ---- full disk: a file-size limit ----
        run([bin_, "ingest", small, "-o", db], tmp, check_code=0)
        old = digest(db)

        def limit(nbytes):
            def apply():
                signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # write() then fails with EFBIG
                resource.setrlimit(resource.RLIMIT_FSIZE, (nbytes, nbytes))
            return apply

        for target, keep in ((db, True), (os.path.join(tmp, "new.db"), False)):
            p = subprocess.run([bin_, "ingest", big, "-o", target], env=env(tmp), capture_output=True,
                               preexec_fn=limit(256 << 10))
            check(p.returncode == 5 and b"error:" in p.stderr, "file-size limit: exit %d %r" % (p.returncode,
                                                                                               p.stderr[-300:]))
            print("file-size limit:", p.stderr.decode(errors="replace").strip().splitlines()[0])
            if keep:
                check(digest(db) == old, "file-size limit: the previous database changed")
            else:
                check(not os.path.exists(target), "file-size limit: a partial database was left")
            name = os.path.basename(target)
            check(temp_files(tmp, name) == [], "file-size limit: temp files left: %s" % temp_files(tmp, name))
        # report: the cache cannot be written, the table is still printed
        cache_env = env(tmp, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache-full"))
        p = subprocess.run([bin_, big, "--row-limit", "3"], env=cache_env, capture_output=True,
                           preexec_fn=limit(64 << 10))
        check(p.returncode == 0 and b"Self CPU time total" in p.stdout,
              "report with an unwritable cache: exit %d %r" % (p.returncode, p.stderr[-300:]))
        cdir = os.path.join(tmp, "cache-full")
        left = [n for n in os.listdir(cdir)] if os.path.isdir(cdir) else []
        check(all(".tmp-" not in n for n in left), "report with a full cache disk left temp files: %s" % left)

        # ---- full disk: a small tmpfs, when this test may mount one ----
        mnt = os.path.join(tmp, "tmpfs")
        os.mkdir(mnt)
        m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m", "tmpfs", mnt], capture_output=True)
        if m.returncode != 0:
            print("tmpfs: skipped (cannot mount: %s)" % m.stderr.decode(errors="replace").strip())
        else:
            try:
                target = os.path.join(mnt, "full.db")
                p = run([bin_, "ingest", small, "-o", target], tmp, check_code=0)
                old = digest(target)
                p = run([bin_, "ingest", big, "-o", target], tmp)
                check(p.returncode == 5 and (b"full" in p.stderr or b"space" in p.stderr),
                      "tmpfs full: exit %d %r" % (p.returncode, p.stderr[-300:]))
                print("tmpfs full:", p.stderr.decode(errors="replace").strip().splitlines()[0])
                check(digest(target) == old, "tmpfs full: the previous database changed")
                check(temp_files(mnt, "full.db") == [], "tmpfs full: temp files left: %s" % temp_files(mnt, "full.db"))
            finally:
                subprocess.run(["umount", mnt])
    finally:
        cleanup(tmp)
    finish("faults")


if __name__ == "__main__":
    main()
