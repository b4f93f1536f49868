#!/usr/bin/env python3
"""One file on two cores changes nothing in what a command prints: every
golden case whose command takes --jobs is run again with --jobs 4 and
NEURON_STATS_SPLIT_MIN=1 (so that any plain trace file, however small, has
its traceEvents cut into parts that a second thread parses), in 2 parts from
15% of the way (NEURON_STATS_SPLIT_AT), in 5 from half-way and in 64 cut
evenly (NEURON_STATS_SPLIT_PARTS), and each run must print exactly the
case's expected stdout, stderr and exit code.
Whether the part was used is tests/unit/test-split.c's to check (it is, on
most files); this checks the commands around it.
Usage: run_split.py NEURON_STATS [CASE...]
"""
import os
import sys

import run_golden
import run_jobs
from run_golden import HERE, corpus, read

# (NEURON_STATS_SPLIT_AT, NEURON_STATS_SPLIT_PARTS); None: not set
POINTS = (("150", "2"), ("500", "5"), (None, "64"))
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
    for point, parts in POINTS:
        os.environ.pop("NEURON_STATS_SPLIT_AT", None)
        if point:
            os.environ["NEURON_STATS_SPLIT_AT"] = point
        os.environ["NEURON_STATS_SPLIT_PARTS"] = parts
        got = run_golden.run_case(binary, case, raw_args + ["--jobs", "4"], corpus_dir)
        for what, g, w in zip(("exit code", "stdout", "stderr"), got, want):
            if g != w:
                failures.append("%s (%s parts from %s permille): %s differs" % (name, parts, point or "an even cut", what))
    return failures


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    os.environ["NEURON_STATS_SPLIT_MIN"] = "1"
    failures, ran = run_jobs.run_cases(check, sys.argv[2:], binary, corpus.corpus_root(binary))
    print("%d cases, each split %s" % (ran, ", ".join("in %s parts from %s" % (n, p or "an even cut") for p, n in POINTS)))
    if failures:
        print("\n".join(failures))
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
