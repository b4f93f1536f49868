#!/usr/bin/env python3
"""A golden case run on a warm cache: the case's command runs twice with one
fresh NEURON_STATS_CACHE_DIR, and the SECOND run (which reads the cached
database instead of the trace) must match expected.out / expected.err /
expected.code exactly like the first. The cache must not change what a user
sees: not the table, not a warning, not --strict.

Usage: run_warm.py NEURON_STATS CASE [WARMUP_CASE]

With WARMUP_CASE the first run uses that case's arguments instead (e.g. warm
the cache without --strict, then check CASE, which adds --strict).
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


def main():
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    binary, name = os.path.abspath(sys.argv[1]), sys.argv[2]
    warmup = sys.argv[3] if len(sys.argv) == 4 else name
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
            return [subst(a) for a in read(os.path.join(HERE, "cases", c, "args")).decode().splitlines() if a]
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
        runs = [subprocess.run([binary] + args_of(c), capture_output=True, cwd=SRC, env=env) for c in (warmup, name)]
        outs = [(p.returncode, p.stdout.replace(tmp.encode(), b"@TMP@").replace(corpus_dir.encode(), b"@CORPUS@"),
                 p.stderr.replace(tmp.encode(), b"@TMP@").replace(corpus_dir.encode(), b"@CORPUS@")) for p in runs]
    want = (int(read(os.path.join(case, "expected.code"), b"0").decode().strip() or 0),
            read(os.path.join(case, "expected.out")), read(os.path.join(case, "expected.err")))
    bad = []
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
    print("ok", name, "(warm cache)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
