#!/usr/bin/env python3
"""What neuron-stats writes, and what it must never destroy or leave behind
(docs/testing.md "Outputs, streams and limits").

* `ingest -o` refuses, with exit 2 and before any work, an output that is
  one of the inputs (same path, a hard link, a file of the input folder), a
  directory, a FIFO, a socket, a device node, a link to no file, and (unless
  --force) an existing file that is not a neuron-stats database; whatever
  was there is unchanged. A symbolic link to a database is written through
  (the link stays); the new database keeps the old one's mode and owner.
* With fd 2 (or 0 and 1) closed, the temporary database never takes fd 2.
* Standard input (`-`, /dev/stdin), a pipe (/dev/fd/N, as `<(zcat x.gz)`)
  and a named FIFO are read as streams, give the same table as the file,
  and never go into the cache.
* The cache: stale temporary databases of killed writers are removed at the
  next start (a locked one, being written, stays); a cache that cannot be
  written costs one warning, never the report or the query.
* A WAL-mode database is read without creating "-wal"/"-shm" files, also
  on a read-only mount (when this test may mount one).
* `sql`: a damaged database is exit 1, the query's own errors exit 2, out
  of memory and --timeout exit 6; fts3_tokenizer() and load_extension() are
  refused.
"""

import fcntl
import os
import socket
import sqlite3
import stat
import subprocess
import time

from common import binary, check, cleanup, env, fail, finish, run, tmpdir
import gen_damaged


def write(path, data):
    with open(path, "wb") as f:
        f.write(data)
    return path


def read(path):
    with open(path, "rb") as f:
        return f.read()


def is_ns_db(path):
    with open(path, "rb") as f:
        header = f.read(100)
    return header[:16] == b"SQLite format 3\0" and header[68:72] == b"NSdb"


def events(db):
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    try:
        return con.execute("SELECT count(*) FROM events").fetchone()[0]
    finally:
        con.close()


def err_text(p):
    return p.stderr.decode(errors="replace")


def expect(p, code, stderr, what):
    """Exit code and exact stderr of a finished run."""
    check(p.returncode == code and err_text(p) == stderr,
          "%s: exit %d, stderr %r; expected exit %d, %r" % (what, p.returncode, err_text(p), code, stderr))


def refusals(bin_, tmp, small, n_small):
    def ingest(src, out, *extra):
        return run([bin_, "ingest", src, "-o", out] + list(extra), tmp)

    before = read(small)
    p = ingest(small, small)
    expect(p, 2, "neuron-stats: error: %s: is one of the inputs; the database would replace it\n"
           "hint: choose another -o, e.g. %s.db\n" % (small, small), "-o the input")
    p = ingest(small, small, "--force")
    check(p.returncode == 2, "-o the input with --force: exit %d" % p.returncode)
    link = os.path.join(tmp, "hard.json")
    os.link(small, link)
    p = ingest(link, small)
    expect(p, 2, "neuron-stats: error: %s: is the input %s; the database would replace it\n"
           "hint: choose another -o, e.g. %s.db\n" % (small, link, link), "-o a hard link of the input")
    os.remove(link)
    folder = os.path.join(tmp, "run")
    os.mkdir(folder)
    inner = write(os.path.join(folder, "trace.json"), gen_damaged.BASE)
    p = ingest(folder, inner, "--force")
    expect(p, 2, "neuron-stats: error: %s: is one of the inputs; the database would replace it\n"
           "hint: choose another -o, e.g. %s.db\n" % (inner, inner), "-o a trace of the input folder")
    check(read(small) == before and read(inner) == gen_damaged.BASE, "a refused -o changed an input")

    notes = write(os.path.join(tmp, "notes.txt"), b"my notes\n")
    p = ingest(small, notes)
    expect(p, 2, "neuron-stats: error: %s: exists and is not a neuron-stats database; not replaced\n"
           "hint: add --force to replace it, or choose another -o\n" % notes, "-o a text file")
    check(read(notes) == b"my notes\n", "-o a text file: the file changed")
    empty = write(os.path.join(tmp, "empty"), b"")
    check(ingest(small, empty).returncode == 2 and read(empty) == b"", "-o an empty file was replaced")
    p = ingest(small, notes, "--force")
    check(p.returncode == 0 and is_ns_db(notes) and events(notes) == n_small, "--force: exit %d %r"
          % (p.returncode, p.stderr))
    p = ingest(small, notes)  # a database now: replaced without --force
    check(p.returncode == 0, "-o an existing database: exit %d %r" % (p.returncode, p.stderr))

    # things that are no regular file: refused, and still what they were
    folder_out = os.path.join(tmp, "outdir")
    os.mkdir(folder_out)
    p = ingest(small, folder_out)
    expect(p, 2, "neuron-stats: error: %s: is a directory; a database is written only to a regular file\n"
           "hint: name the database file, e.g. -o %s/trace.db\n" % (folder_out, folder_out), "-o a directory")
    fifo = os.path.join(tmp, "fifo")
    os.mkfifo(fifo)
    p = ingest(small, fifo)
    expect(p, 2, "neuron-stats: error: %s: is a FIFO; a database is written only to a regular file\n" % fifo,
           "-o a FIFO")
    check(stat.S_ISFIFO(os.lstat(fifo).st_mode), "-o a FIFO: it is no longer a FIFO")
    sock_path = os.path.join(tmp, "sock")
    sock = socket.socket(socket.AF_UNIX)
    sock.bind(sock_path)
    p = ingest(small, sock_path)
    check(p.returncode == 2 and b"is a socket" in p.stderr and stat.S_ISSOCK(os.lstat(sock_path).st_mode),
          "-o a socket: exit %d %r" % (p.returncode, p.stderr))
    sock.close()
    dev = os.path.join(tmp, "null")
    try:
        os.mknod(dev, 0o666 | stat.S_IFCHR, os.makedev(1, 3))  # a /dev/null of our own
    except PermissionError:
        print("device node: skipped (mknod needs root)")
    else:
        for out in (dev, os.path.join(tmp, "to-null")):
            if out != dev:
                os.symlink(dev, out)
            p = ingest(small, out, "--force")
            expect(p, 2, "neuron-stats: error: %s: is a character device; a database is written only to a "
                   "regular file\n" % out, "-o a device node")
        check(stat.S_ISCHR(os.lstat(dev).st_mode), "-o a device node: it is no longer one")
        check(os.path.islink(os.path.join(tmp, "to-null")), "-o a link to a device: the link was replaced")
    dangling = os.path.join(tmp, "dangling")
    os.symlink("nowhere.db", dangling)
    p = ingest(small, dangling)
    check(p.returncode == 2 and os.path.islink(dangling) and not os.path.exists(os.path.join(tmp, "nowhere.db")),
          "-o a link to no file: exit %d %r" % (p.returncode, p.stderr))

    # a link to a database is written through; mode and owner are kept
    db = os.path.join(tmp, "real.db")
    run([bin_, "ingest", small, "-o", db], tmp, check_code=0)
    os.chmod(db, 0o640)
    owner = (12345, 23456) if os.geteuid() == 0 else (os.getuid(), os.getgid())
    if os.geteuid() == 0:
        os.chown(db, *owner)
    via = os.path.join(tmp, "via.db")
    os.symlink("real.db", via)
    big = write(os.path.join(tmp, "two.json"), gen_damaged.long_trace(3))
    p = ingest(big, via)
    st = os.stat(db)
    check(p.returncode == 0 and os.path.islink(via) and os.readlink(via) == "real.db",
          "-o a link: exit %d, the link is %s" % (p.returncode, "kept" if os.path.islink(via) else "gone"))
    check(events(db) != n_small, "-o a link: the database it names was not replaced")
    check(stat.S_IMODE(st.st_mode) == 0o640 and (st.st_uid, st.st_gid) == owner,
          "-o an existing database: mode %o owner %s, expected 640 %s" % (stat.S_IMODE(st.st_mode),
                                                                      (st.st_uid, st.st_gid), owner))
    left = [n for n in os.listdir(tmp) if ".tmp-" in n]
    check(left == [], "refusals left temporary files: %s" % left)


def refused_before_work(bin_, tmp, big):
    """-o DIRECTORY fails at once, not after the ingest."""
    t0 = time.time()
    run([bin_, "ingest", big, "-o", os.path.join(tmp, "big.db")], tmp, check_code=0)
    full = time.time() - t0
    folder = os.path.join(tmp, "big-out")
    os.mkdir(folder)
    t0 = time.time()
    p = run([bin_, "ingest", big, "-o", folder], tmp, check_code=2)
    refused = time.time() - t0
    print("ingest: %.2f s; -o DIRECTORY refused in %.3f s" % (full, refused))
    check(refused < full / 2, "-o DIRECTORY took %.2f s of the ingest's %.2f s" % (refused, full))
    os.remove(os.path.join(tmp, "big.db"))


def closed_fds(bin_, tmp, small, big):
    """With fd 2 closed, fd 2 is never the database (nor its temporary file)
    while the database is written, and a warning (a cut trace) goes nowhere."""
    big = write(os.path.join(tmp, "cut.json"), read(big)[:-3000])
    db = os.path.join(tmp, "closed.db")
    p = subprocess.Popen("exec %s ingest %s -o %s 2>&-" % (bin_, big, db), shell=True, env=env(tmp))
    seen = set()
    while p.poll() is None:
        try:  # (once the shell has become neuron-stats)
            if os.readlink("/proc/%d/exe" % p.pid) == bin_:
                seen.add(os.readlink("/proc/%d/fd/2" % p.pid))
        except OSError:
            pass
    check(p.returncode == 0, "stderr closed: exit %d" % p.returncode)
    check(not [f for f in seen if f.startswith(tmp)], "stderr closed: fd 2 was %s" % sorted(seen))
    con = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
    check(con.execute("PRAGMA integrity_check").fetchone()[0] == "ok", "stderr closed: a damaged database")
    con.close()
    with open(db, "rb") as f:  # (the schema itself names a table explorer_warnings)
        check(b"neuron-stats: warning" not in f.read(), "stderr closed: a warning went into the database")
    for fds in ("0<&-", "1>&-", "0<&- 1>&- 2>&-"):
        q = subprocess.run("exec %s ingest %s -o %s %s" % (bin_, small, db, fds), shell=True, env=env(tmp))
        check(q.returncode == 0 and is_ns_db(db), "%s: exit %d" % (fds, q.returncode))


def streams(bin_, tmp, small):
    cache = os.path.join(tmp, "cache")
    want = run([bin_, small, "--no-cache"], tmp, check_code=0).stdout
    gz = write(os.path.join(tmp, "small.json.gz"), subprocess.run(["gzip", "-c", small], capture_output=True).stdout)
    os.makedirs(cache, exist_ok=True)
    before = sorted(os.listdir(cache))

    def same(args, what, **kw):
        try:
            p = subprocess.run([bin_] + args, capture_output=True, env=env(tmp), timeout=60, **kw)
        except subprocess.TimeoutExpired:
            return fail("%s: still running after 60 s" % what)
        check(p.returncode == 0 and p.stdout == want, "%s: exit %d %r" % (what, p.returncode, p.stderr[-300:]))

    with open(small, "rb") as f:
        same(["-"], "report -", stdin=f)
    with open(gz, "rb") as f:
        same(["-"], "report - (gzip)", stdin=f)
    cat = subprocess.Popen(["cat", small], stdout=subprocess.PIPE)
    same(["/dev/stdin"], "report /dev/stdin (a pipe)", stdin=cat.stdout)
    cat.wait()
    zcat = subprocess.Popen(["zcat", gz], stdout=subprocess.PIPE)  # <(zcat small.json.gz)
    fd = zcat.stdout.fileno()
    same(["/dev/fd/%d" % fd], "report /dev/fd/N", pass_fds=(fd,))
    zcat.wait()
    fifo = os.path.join(tmp, "in.fifo")
    os.mkfifo(fifo)
    writer = subprocess.Popen("sleep 0.3; exec cat %s > %s" % (small, fifo), shell=True)
    same([fifo], "report FIFO")
    writer.kill()
    writer.wait()
    check(sorted(os.listdir(cache)) == before, "streams went into the cache: %s" % sorted(os.listdir(cache)))
    db = os.path.join(tmp, "stdin.db")
    with open(small, "rb") as f:
        p = subprocess.run([bin_, "ingest", "-", "-o", db], stdin=f, capture_output=True, env=env(tmp))
    check(p.returncode == 0 and events(db) == len(gen_damaged.BASE_SPANS), "ingest -: exit %d %r"
          % (p.returncode, p.stderr))
    with open(small, "rb") as f:
        p = subprocess.run([bin_, "sql", "-", "SELECT count(*) AS n FROM events", "-f", "csv"], stdin=f,
                           capture_output=True, env=env(tmp))
    check(p.returncode == 0 and p.stdout == b"n\r\n%d\r\n" % len(gen_damaged.BASE_SPANS),
          "sql -: exit %d %r %r" % (p.returncode, p.stdout, p.stderr))
    check(sorted(os.listdir(cache)) == before, "sql - left a database in the cache")


def cache_upkeep(bin_, tmp, small):
    cache = os.path.join(tmp, "cache2")
    os.mkdir(cache)
    stale = os.path.join(cache, "0123456789abcdef0123456789abcdef.db.tmp-99999-0badf00d")
    busy = os.path.join(cache, "fedcba9876543210fedcba9876543210.db.tmp-99998-00000001")
    other = os.path.join(cache, "notes.tmp-1-2")
    for path in (stale, busy, other):
        with open(path, "wb") as f:
            f.truncate(8 << 20)
    holder = open(busy, "rb")
    fcntl.flock(holder, fcntl.LOCK_EX)  # a writer still at work
    e = env(tmp, NEURON_STATS_CACHE_DIR=cache, NEURON_STATS_CACHE_MAX="1M")
    p = run([bin_, small], tmp, env=e)
    check(p.returncode == 0 and p.stderr == b"", "report with temporaries in the cache: exit %d %r"
          % (p.returncode, p.stderr))
    check(not os.path.exists(stale), "a killed writer's temporary database was not removed")
    check(os.path.exists(busy) and os.path.exists(other), "a locked temporary or another file was removed")
    holder.close()

    # a cache that cannot be written: one warning, the same table
    want = run([bin_, small, "--no-cache"], tmp, check_code=0).stdout
    blocker = write(os.path.join(tmp, "not-a-dir"), b"x")
    e = env(tmp, NEURON_STATS_CACHE_DIR=blocker)
    p = run([bin_, small], tmp, env=e)
    lines = err_text(p).splitlines()
    check(p.returncode == 0 and p.stdout == want and len(lines) == 1 and
          lines[0].startswith("neuron-stats: warning: the cache is not written: "),
          "report with an unwritable cache: exit %d %r" % (p.returncode, p.stderr))
    # a cache entry taken by a directory: skipped before the parse, not replaced
    e2 = env(tmp, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache3"))
    run([bin_, small], tmp, env=e2, check_code=0)
    entry = os.path.join(tmp, "cache3", [n for n in os.listdir(os.path.join(tmp, "cache3")) if n.endswith(".res")][0])
    os.remove(entry)
    os.mkdir(entry)
    p = run([bin_, small], tmp, env=e2)
    expect(p, 0, "neuron-stats: warning: the cache is not written: %s: is a directory; not replaced\n" % entry,
           "report with a directory at the cache entry")
    check(p.stdout == want and os.path.isdir(entry), "report with a directory at the cache entry: the table "
          "differs or the directory is gone")
    p = run([bin_, "sql", small, "SELECT count(*) AS n FROM events", "-f", "csv"], tmp, env=e)
    check(p.returncode == 0 and p.stdout == b"n\r\n%d\r\n" % len(gen_damaged.BASE_SPANS) and
          err_text(p).startswith("neuron-stats: warning: the cache is not written: ") and
          err_text(p).count("\n") == 1, "sql with an unwritable cache: exit %d %r" % (p.returncode, p.stderr))


def wal_databases(bin_, tmp, small):
    folder = os.path.join(tmp, "wal")
    os.mkdir(folder)
    db = os.path.join(folder, "wal.db")
    run([bin_, "ingest", small, "-o", db], tmp, check_code=0)
    con = sqlite3.connect(db)
    check(con.execute("PRAGMA journal_mode = WAL").fetchone()[0] == "wal", "cannot make a WAL database")
    con.close()
    want = b"n\r\n%d\r\n" % len(gen_damaged.BASE_SPANS)
    p = run([bin_, "sql", db, "SELECT count(*) AS n FROM events", "-f", "csv"], tmp)
    check(p.returncode == 0 and p.stdout == want, "sql on a WAL database: exit %d %r" % (p.returncode, p.stderr))
    run([bin_, db], tmp, check_code=0)
    check(sorted(os.listdir(folder)) == ["wal.db"], "reading a WAL database left %s" % sorted(os.listdir(folder)))
    mnt = os.path.join(tmp, "ro")
    os.mkdir(mnt)
    m = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m", "tmpfs", mnt], capture_output=True)
    if m.returncode != 0:
        print("read-only mount: skipped (cannot mount: %s)" % m.stderr.decode(errors="replace").strip())
        return
    try:
        write(os.path.join(mnt, "wal.db"), read(db))
        subprocess.run(["mount", "-o", "remount,ro", mnt], check=True)
        p = run([bin_, "sql", os.path.join(mnt, "wal.db"), "SELECT count(*) AS n FROM events", "-f", "csv"], tmp)
        check(p.returncode == 0 and p.stdout == want, "sql on a read-only WAL database: exit %d %r"
              % (p.returncode, p.stderr))
        run([bin_, os.path.join(mnt, "wal.db")], tmp, check_code=0)
    finally:
        subprocess.run(["umount", mnt])


def sql_codes(bin_, tmp, small):
    db = os.path.join(tmp, "q.db")
    run([bin_, "ingest", small, "-o", db], tmp, check_code=0)

    def sql(query, *extra, path=db):
        return run([bin_, "sql", path, query] + list(extra), tmp)

    damaged = write(os.path.join(tmp, "damaged.db"), read(db)[:100])  # the header, then nothing
    p = sql("SELECT count(*) FROM events", path=damaged)
    expect(p, 1, "neuron-stats: error: %s: cannot prepare the query: database disk image is malformed\n"
           % damaged, "sql on a damaged database")
    p = sql("SELECT nosuch FROM events")
    expect(p, 2, "neuron-stats: error: %s: SQL error: no such column: nosuch\n" % db, "sql, an unknown column")
    hint = "hint: `neuron-stats sql` runs one read-only SELECT; the database is never modified\n"
    for fn in ("fts3_tokenizer", "load_extension"):
        p = sql("SELECT hex(%s('simple'))" % fn)
        expect(p, 2, "neuron-stats: error: %s: query refused: the function %s() is not allowed\n%s"
               % (db, fn, hint), "sql " + fn)
    p = sql("SELECT length(randomblob(50000000))", "--max-memory", "20M")
    expect(p, 6, "neuron-stats: error: %s: the query needs more than 20971520 bytes of memory\n"
           "hint: raise the limit with --max-memory SIZE (0: none)\n" % db, "sql past --max-memory")
    check(sql("SELECT length(randomblob(50000000))").returncode == 0, "sql: 50 MB within the default limit")
    p = sql("SELECT count(*) FROM events", "--max-memory", "64K")
    check(p.returncode == 6, "sql in 64 KiB: exit %d %r" % (p.returncode, p.stderr))
    t0 = time.time()
    p = sql("WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c) SELECT count(*) FROM c",
            "--timeout", "1")
    took = time.time() - t0
    expect(p, 6, "neuron-stats: error: %s: the query ran longer than 1 s\n"
           "hint: raise the limit with --timeout SECONDS (0: none)\n" % db, "sql past --timeout")
    check(took < 5, "sql --timeout 1 took %.1f s" % took)
    for bad in (("--timeout", "-1"), ("--timeout", "86401"), ("--max-memory", "12X"), ("--max-memory", "-5")):
        check(sql("SELECT 1", *bad).returncode == 2, "sql %s %s: not a usage error" % bad)


def timed(fn, *args):
    t0 = time.time()
    fn(*args)
    print("%s: %.1f s" % (fn.__name__, time.time() - t0), flush=True)


def main():
    bin_ = binary()
    tmp = tmpdir()
    try:
        small = write(os.path.join(tmp, "small.json"), gen_damaged.BASE)
        n_small = len(gen_damaged.BASE_SPANS)
        timed(refusals, bin_, tmp, small, n_small)
        big = write(os.path.join(tmp, "big.json"), gen_damaged.long_trace(1500))
        timed(refused_before_work, bin_, tmp, big)
        timed(closed_fds, bin_, tmp, small, big)
        timed(streams, bin_, tmp, small)
        timed(cache_upkeep, bin_, tmp, small)
        timed(wal_databases, bin_, tmp, small)
        timed(sql_codes, bin_, tmp, small)
    finally:
        cleanup(tmp)
    finish("outputs")


if __name__ == "__main__":
    main()
