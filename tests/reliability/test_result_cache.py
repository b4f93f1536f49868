#!/usr/bin/env python3
"""The result cache (docs/cli.md "Cache", docs/schema.md "Result cache").

* A repeated command prints the same stdout and stderr bytes and exits
  with the same code as its first run and as `--no-cache`: report (with a
  truncation warning), diff --fail-on regression (exit 4), kernels, stacks,
  breakdown, launches, html to stdout.
* The second run is a replay: an entry rewritten by this test (in the
  documented format, its checksum recomputed) is what the next run prints.
  `--jobs` is not part of the key (the output is the same for any); every
  other change is a miss, the real output printed: the input touched (mtime),
  its size changed, another option, another program (a copy of the binary,
  then that copy touched), a NEURON_STATS_* variable, `--no-cache` (which
  also leaves the entry as it was).
* A damaged entry (cut, a byte flipped, empty, foreign bytes, a directory)
  is a miss: the real output, exit 0, and (but for the directory) the entry
  written again whole.
* Eight runs at once on one cold cache: the same output each, one entry,
  no temporary file left.
* `html -o FILE`: the page is the entry's last record (stream 3); a warm
  run writes the same page to the FILE it is given (another FILE: the same
  entry), a forged page is what it writes, and a FILE that is the input is
  refused on a hit as on a parse (exit 2, the same message).
* Not cached: a run that fails (exit 1), `--help`; report no longer writes
  the trace database, `sql` on a trace still does.
"""

import os
import shutil
import struct
import subprocess

from common import SRC, binary, check, cleanup, env, finish, run, tmpdir

MAGIC = b"NSRESULT"
HEADER = 28


def fnv1a(data, h=14695981039346656037):
    for b in data:
        h = ((h ^ b) * 1099511628211) & 0xFFFFFFFFFFFFFFFF
    return h


def parse(entry):
    """(key, code, log) of an entry file, checked as the reader checks it."""
    with open(entry, "rb") as f:
        buf = f.read()
    assert buf[:8] == MAGIC, entry
    fmt, key_len, code, log_len = struct.unpack("<IIIQ", buf[8:HEADER])
    assert fmt == 1 and len(buf) == HEADER + key_len + log_len + 8
    assert struct.unpack("<Q", buf[-8:])[0] == fnv1a(buf[:-8])
    return buf[HEADER:HEADER + key_len], code, buf[HEADER + key_len:HEADER + key_len + log_len]


def forge(entry, out, err=b"", code=0, page=b""):
    """Rewrites entry (keeping its key) to print out and err, write page
    (html -o) and exit code."""
    key, _, _ = parse(entry)
    log = b""
    for stream, data in ((1, out), (2, err), (3, page)):
        if data:
            log += struct.pack("<BI", stream, len(data)) + data
    body = MAGIC + struct.pack("<IIIQ", 1, len(key), code, len(log)) + key + log
    with open(entry, "wb") as f:
        f.write(body + struct.pack("<Q", fnv1a(body)))


def entries(cache):
    return sorted(n for n in os.listdir(cache) if n.endswith(".res")) if os.path.isdir(cache) else []


def same_as_no_cache(bin_, tmp, args, code, what):
    """args run cold, warm and with --no-cache: the same three results."""
    cache = os.path.join(tmp, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    cold = run([bin_] + args, tmp)
    n = len(entries(cache))
    warm = run([bin_] + args, tmp)
    ref = run([bin_] + args + ["--no-cache"], tmp)
    for name, p in (("cold", cold), ("warm", warm), ("--no-cache", ref)):
        check(p.returncode == code, "%s (%s): exit %d, expected %d %r" % (what, name, p.returncode, code,
                                                                      p.stderr[-300:]))
    check(cold.stdout == warm.stdout == ref.stdout, "%s: stdout differs between cold, warm and --no-cache" % what)
    check(cold.stderr == warm.stderr == ref.stderr, "%s: stderr differs: %r %r %r" % (what, cold.stderr[-200:],
                                                                                     warm.stderr[-200:],
                                                                                     ref.stderr[-200:]))
    check(n == 1 and len(entries(cache)) == 1, "%s: %d entries after the cold run, %d after all" %
          (what, n, len(entries(cache))))
    check(not [x for x in os.listdir(cache) if x.endswith(".db")], "%s: a trace database was written" % what)
    return os.path.join(cache, entries(cache)[0]) if entries(cache) else None


def replays(bin_, tmp):
    truncated = os.path.join(SRC, "tests", "golden", "inputs", "truncated.json")
    naive = os.path.join(SRC, "fixtures", "rmsnorm-naive")
    base = os.path.join(SRC, "fixtures", "diff", "device-shift", "base")
    new = os.path.join(SRC, "fixtures", "diff", "device-shift", "new")
    entry = same_as_no_cache(bin_, tmp, [truncated], 0, "report with a warning")
    if entry:
        key, code, log = parse(entry)
        check(code == 0 and log[:1] == b"\x02" and b"truncated at byte" in log,
              "the entry holds the warning first: %r" % log[:80])
    same_as_no_cache(bin_, tmp, ["diff", base, new, "--fail-on", "regression"], 4, "diff --fail-on")
    same_as_no_cache(bin_, tmp, ["kernels", naive], 0, "kernels")
    same_as_no_cache(bin_, tmp, ["stacks", naive, "--value", "device"], 0, "stacks")
    same_as_no_cache(bin_, tmp, ["breakdown", naive, "--format", "json"], 0, "breakdown")
    same_as_no_cache(bin_, tmp, ["launches", naive], 0, "launches")
    same_as_no_cache(bin_, tmp, ["html", naive], 0, "html")
    same_as_no_cache(bin_, tmp, ["report", naive, "--sort", "self_neuron", "-q"], 0, "report -q")


def invalidation(bin_, tmp):
    cache = os.path.join(tmp, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    trace = os.path.join(tmp, "trace.json")
    shutil.copy(os.path.join(SRC, "fixtures", "rmsnorm-naive", "trace.json"), trace)
    args = [trace, "--row-limit", "5"]
    want = run([bin_] + args + ["--no-cache"], tmp, check_code=0).stdout
    run([bin_] + args, tmp, check_code=0)
    entry = os.path.join(cache, entries(cache)[0])

    def forged(extra=(), what="", hit=False, e=None, prog=None):
        real = run([bin_] + args + list(extra) + ["--no-cache"], tmp, check_code=0).stdout
        forge(entry, b"forged\n", b"forged warning\n", 0)
        p = run([prog or bin_] + args + list(extra), tmp, env=e)
        if hit:
            check(p.returncode == 0 and p.stdout == b"forged\n" and p.stderr == b"forged warning\n",
                  "%s: not replayed from the entry: %r" % (what, p.stdout[:80]))
        else:
            check(p.returncode == 0 and p.stdout == real and p.stderr == b"",
                  "%s: the entry was replayed, not a miss: %r" % (what, p.stdout[:80]))

    forged(what="a repeat", hit=True)
    forged(["-j", "1"], "--jobs 1", hit=True)
    forged(["--jobs=3"], "--jobs=3", hit=True)
    forged(["--no-cache"], "--no-cache")
    check(parse(entry)[2].endswith(b"forged warning\n"), "--no-cache rewrote the entry")
    forged(["--sort", "self_cpu_time_total"], "another option")
    forged(what="another NEURON_STATS_MAX_RATIO", e=env(tmp, NEURON_STATS_MAX_RATIO="999"))
    copy = os.path.join(tmp, "neuron-stats-copy")
    shutil.copy2(bin_, copy)
    forged(what="another program (a copy)", prog=copy)
    for name in entries(cache):  # the copy's own entry, forged, then the copy touched
        if os.path.join(cache, name) != entry:
            forge(os.path.join(cache, name), b"forged\n")
    os.utime(copy, ns=(os.stat(copy).st_atime_ns, os.stat(copy).st_mtime_ns + 1000))
    p = run([copy] + args, tmp)
    check(p.stdout == want, "a touched program replayed its old entry")
    st = os.stat(trace)
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns + 1))
    forged(what="the input touched (1 ns)")
    with open(trace, "ab") as f:
        f.write(b"\n")
    os.utime(trace, ns=(st.st_atime_ns, st.st_mtime_ns))
    forged(what="the input one byte longer, same mtime")


def damaged(bin_, tmp):
    cache = os.path.join(tmp, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    args = [bin_, os.path.join(SRC, "tests", "golden", "inputs", "truncated.json")]
    good = run(args, tmp, check_code=0)
    entry = os.path.join(cache, entries(cache)[0])
    with open(entry, "rb") as f:
        whole = f.read()
    cases = [("cut in half", whole[:len(whole) // 2]), ("cut by one byte", whole[:-1]), ("empty", b""),
             ("a byte flipped", whole[:40] + bytes([whole[40] ^ 1]) + whole[41:]),
             ("one byte more", whole + b"\0"), ("foreign bytes", b"SQLite format 3\0" + b"\0" * 200)]
    for what, data in cases:
        with open(entry, "wb") as f:
            f.write(data)
        p = run(args, tmp)
        check(p.returncode == 0 and p.stdout == good.stdout and p.stderr == good.stderr,
              "a damaged entry (%s): exit %d %r" % (what, p.returncode, p.stderr[-200:]))
        with open(entry, "rb") as f:
            check(f.read() == whole, "a damaged entry (%s) was not written again whole" % what)
    os.remove(entry)
    os.mkdir(entry)
    p = run(args, tmp)
    check(p.returncode == 0 and p.stdout == good.stdout and
          p.stderr == good.stderr + b"neuron-stats: warning: the cache is not written: %s: is a directory; "
          b"not replaced\n" % entry.encode(), "a directory at the entry: %r" % p.stderr)
    os.rmdir(entry)


def concurrent(bin_, tmp, rounds=20):
    """8 writers of one entry at once, in each of `rounds` fresh caches
    (each writer's cleanup of stale temp files runs beside the others'
    writes: before the temp file was renamed with its lock still held, 1
    round in 2 to 5 had a writer warn that its temp file was gone)."""
    cache = os.path.join(tmp, "cache")
    traces = os.path.join(tmp, "traces")
    os.makedirs(traces, exist_ok=True)
    for i, name in enumerate(("rmsnorm-naive", "flops", "legacy-array")):
        shutil.copy(os.path.join(SRC, "fixtures", name, "trace.json"), os.path.join(traces, "r%d.json" % i))
    args = [bin_, traces, "--row-limit", "-1", "-j", "1"]
    for r in range(rounds):
        shutil.rmtree(cache, ignore_errors=True)
        procs = [subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env(tmp))
                 for _ in range(8)]
        outs = [p.communicate() + (p.returncode,) for p in procs]
        if not check(all(o == outs[0] for o in outs) and outs[0][2] == 0 and not outs[0][1],
                     "round %d: concurrent runs differ: %s" % (r, sorted({o[1] for o in outs}))):
            return
        check(len(entries(cache)) == 1 and not [n for n in os.listdir(cache) if ".tmp-" in n],
              "concurrent runs left %s" % os.listdir(cache))
    warm = run(args, tmp)
    check((warm.stdout, warm.stderr, warm.returncode) == outs[0], "the entry of concurrent writers differs")


def read(path):
    with open(path, "rb") as f:
        return f.read()


def html_file(bin_, tmp):
    cache = os.path.join(tmp, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    naive = os.path.join(SRC, "fixtures", "rmsnorm-naive")
    cold_page, warm_page, ref_page = (os.path.join(tmp, n) for n in ("cold.html", "warm.html", "ref.html"))
    cold = run([bin_, "html", naive, "-o", cold_page], tmp, check_code=0)
    check(len(entries(cache)) == 1, "html -o: %d entries after the cold run" % len(entries(cache)))
    if not entries(cache):
        return
    entry = os.path.join(cache, entries(cache)[0])
    _, code, log = parse(entry)
    page = read(cold_page)
    check(code == 0 and log.endswith(struct.pack("<BI", 3, len(page)) + page),
          "html -o: the entry does not end with the page (%d bytes of log)" % len(log))
    warm = run([bin_, "html", naive, "--output=" + warm_page], tmp, check_code=0)
    ref = run([bin_, "html", naive, "-o", ref_page, "--no-cache"], tmp, check_code=0)
    check(read(warm_page) == page == read(ref_page), "html -o: the pages of cold, warm and --no-cache differ")
    check((cold.stdout, cold.stderr) == (warm.stdout, warm.stderr) == (ref.stdout, ref.stderr) == (b"", b""),
          "html -o printed something")
    check(len(entries(cache)) == 1, "html -o: another FILE made another entry: %s" % entries(cache))
    forge(entry, b"", b"", 0, b"<p>forged</p>\n")
    run([bin_, "html", naive, "-o", warm_page], tmp, check_code=0)
    check(read(warm_page) == b"<p>forged</p>\n", "html -o: a hit did not write the entry's page")
    inp = os.path.join(naive, "trace.json")
    hit = run([bin_, "html", naive, "-o", inp], tmp, check_code=2)
    parsed = run([bin_, "html", naive, "-o", inp, "--no-cache"], tmp, check_code=2)
    check(hit.stderr == parsed.stderr and b"the output would replace it" in hit.stderr,
          "html -o INPUT on a hit: %r, on a parse: %r" % (hit.stderr, parsed.stderr))
    check(not [n for n in os.listdir(tmp) if ".tmp-" in n], "html -o left a temporary file in %s" % tmp)


def not_cached(bin_, tmp):
    cache = os.path.join(tmp, "cache")
    shutil.rmtree(cache, ignore_errors=True)
    truncated = os.path.join(SRC, "tests", "golden", "inputs", "truncated.json")
    naive = os.path.join(SRC, "fixtures", "rmsnorm-naive")
    run([bin_, truncated, "--strict"], tmp, check_code=1)
    run([bin_, "report", "--help"], tmp, check_code=0)
    run([bin_, naive, "--no-cache"], tmp, check_code=0)
    check(entries(cache) == [], "entries for runs that are not cached: %s" % entries(cache))
    run([bin_, "sql", naive, "SELECT count(*) FROM events"], tmp, check_code=0)
    check(len([n for n in os.listdir(cache) if n.endswith(".db")]) == 1, "sql on a trace wrote no database")


def main():
    bin_ = binary()
    tmp = tmpdir()
    try:
        for step in (replays, invalidation, damaged, concurrent, html_file, not_cached):
            step(bin_, tmp)
    finally:
        cleanup(tmp)
    finish("result cache")


if __name__ == "__main__":
    main()
