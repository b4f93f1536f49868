#!/usr/bin/env python3
"""One file on two cores changes nothing in what a command prints: every
golden case whose command takes --jobs is run again with --jobs 4 and
NEURON_STATS_SPLIT_MIN=1 (so that any plain trace file, however small, has
the second part of its traceEvents parsed by a second thread), the part
starting at 15%, 50% and 85% of the way (NEURON_STATS_SPLIT_AT), and each
run must print exactly the case's expected stdout, stderr and exit code.
Whether the part was used is tests/unit/test-split.c's to check (it is, on
most files); this checks the commands around it.
Usage: run_split.py NEURON_STATS [CASE...]
"""
import os
import sys

import run_golden
import run_jobs
from run_golden import HERE, corpus, read

POINTS = ("150", "500", "850")
# the commands that take --jobs (run_jobs.py's, and these)
COMMANDS = run_jobs.JOBS_COMMANDS | {"overlap", "stragglers", "html", "ranks"}


def check(binary, name, corpus_dir):
    """None when the case does not apply; else the failures (empty: ok)."""
    case = os.path.join(HERE, "cases", name)
    raw_args = [a for a in read(os.path.join(case, "args"), b"").decode().splitlines() if a]
    first = raw_args[0] if raw_args else ""
    cmd = first if first in COMMANDS | run_jobs.OTHER_COMMANDS else "report"
    if cmd not in COMMANDS or corpus.missing(raw_args, corpus_dir) or read(os.path.join(case, "stdout")):
        return None
    want = (int(read(os.path.join(case, "expected.code"), b"0").decode().strip() or 0),
            read(os.path.join(case, "expected.out"), b""), read(os.path.join(case, "expected.err"), b""))
    failures = []
    for point in POINTS:
        os.environ["NEURON_STATS_SPLIT_AT"] = point
        got = run_golden.run_case(binary, case, raw_args + ["--jobs", "4"], corpus_dir)
        for what, g, w in zip(("exit code", "stdout", "stderr"), got, want):
            if g != w:
                failures.append("%s (split at %s permille): %s differs" % (name, point, what))
    return failures


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    os.environ["NEURON_STATS_SPLIT_MIN"] = "1"
    failures, ran = run_jobs.run_cases(check, sys.argv[2:], binary, corpus.corpus_root(binary))
    print("%d cases, each split at %s permille" % (ran, ", ".join(POINTS)))
    if failures:
        print("\n".join(failures))
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
