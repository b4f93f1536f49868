#!/usr/bin/env python3
"""A golden case run on a warm cache: the case's command runs twice with one
fresh NEURON_STATS_CACHE_DIR (and without the --no-cache its args may
have), and the SECOND run must match expected.out / expected.err /
expected.code exactly like the first. The result cache must not change
what a user sees: not the table, not a warning, not the exit code.

Usage: run_warm.py NEURON_STATS CASE WARMUP_CASE replay|parse

The first run uses WARMUP_CASE's arguments (e.g. warm the cache without
--strict, then check CASE, which adds --strict). "replay": the second run
must be a replay of the result cache's entry (the entry the first run
wrote, the same file, marked as used again); "parse": it must not be (its
key differs, or the command is not cached).
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402  (tests/data/corpus.py: which corpus, and the skip message)


def read(path, default=b""):
    if not os.path.exists(path):
        return default
    with open(path, "rb") as f:
        return f.read()


OLD = 10**18  # an entry's mtime set after the first run: a replay marks it as used again


def entries(cache):
    """The result cache's entries: {path: inode}, their mtime set to OLD."""
    found = {}
    for n in os.listdir(cache) if os.path.isdir(cache) else []:
        if n.endswith(".res"):
            p = os.path.join(cache, n)
            os.utime(p, ns=(OLD, OLD))
            found[p] = os.stat(p).st_ino
    return found


def main():
    if len(sys.argv) != 5 or sys.argv[4] not in ("replay", "parse"):
        sys.exit(__doc__)
    binary, name, warmup, mode = os.path.abspath(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
    case = os.path.join(HERE, "cases", name)
    corpus_dir = corpus.corpus_root(binary)
    for c in (warmup, name):
        absent = corpus.missing(read(os.path.join(HERE, "cases", c, "args")).decode().splitlines(), corpus_dir)
        if absent:
            print(corpus.skip_reason(absent))
            return 77
    with tempfile.TemporaryDirectory() as tmp:
        def subst(s):
            return s.replace("@CORPUS@", corpus_dir).replace("@SRC@", SRC).replace("@TMP@", tmp)
        def args_of(c):
            return [subst(a) for a in read(os.path.join(HERE, "cases", c, "args")).decode().splitlines()
                    if a and a != "--no-cache"]
        cache = os.path.join(tmp, "cache")
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=cache, LC_ALL="C")
        runs = [subprocess.run([binary] + args_of(warmup), capture_output=True, cwd=SRC, env=env)]
        before = entries(cache)
        runs.append(subprocess.run([binary] + args_of(name), capture_output=True, cwd=SRC, env=env))
        replayed = any(os.path.exists(p) and os.stat(p).st_ino == ino and os.stat(p).st_mtime_ns != OLD
                       for p, ino in before.items())
        outs = [(p.returncode, p.stdout.replace(tmp.encode(), b"@TMP@").replace(corpus_dir.encode(), b"@CORPUS@"),
                 p.stderr.replace(tmp.encode(), b"@TMP@").replace(corpus_dir.encode(), b"@CORPUS@")) for p in runs]
    want = (int(read(os.path.join(case, "expected.code"), b"0").decode().strip() or 0),
            read(os.path.join(case, "expected.out")), read(os.path.join(case, "expected.err")))
    bad = [] if replayed == (mode == "replay") else ["replay (the second run %s)" % (
        "replayed the entry" if replayed else "was not a replay")]
    for what, k in (("exit code", 0), ("stdout", 1), ("stderr", 2)):
        if outs[1][k] != want[k]:
            bad.append(what)
    if bad:
        for what, k in (("stdout", 1), ("stderr", 2)):
            if outs[1][k] != want[k]:
                print("--- %s of the warm run:\n%s\n--- expected:\n%s" % (what, outs[1][k].decode(errors="replace")[:2000],
                                                                     want[k].decode(errors="replace")[:2000]))
        print("FAIL %s on a warm cache: %s differ%s (cold run: %s)" % (
            name, ", ".join(bad), "s" if len(bad) == 1 else "",
            "as expected" if outs[0] == want else "differs" if warmup == name else "was " + warmup))
        return 1
    print("ok", name, "(warm cache: %s)" % ("replayed" if replayed else "parsed"))
    return 0


if __name__ == "__main__":
    sys.exit(main())
