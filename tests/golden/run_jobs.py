#!/usr/bin/env python3
"""--jobs changes nothing in what a command prints: every golden case whose
command takes --jobs and has a directory of traces among its arguments (one
that exists before the run: not under @TMP@) is run again with --jobs 1 and
with --jobs 4, and each run must print exactly the case's expected stdout,
stderr and exit code. And a directory of good and damaged traces (a
warning, then an error: the first in rank order is told, with its file, and
the exit code is the same) prints the same bytes with --jobs 1 and 4.
Usage: run_jobs.py NEURON_STATS [CASE...]
"""
import os
import sys

import run_golden
from run_golden import HERE, SRC, corpus, read

# the commands with --jobs (cli/cli.h NS_CLI_JOBS_OPT)
JOBS_COMMANDS = {"report", "ingest", "diff", "kernels", "breakdown", "launches", "stacks", "counters"}
OTHER_COMMANDS = {"sql", "neff", "ls", "completion", "man", "help"}


def command(raw_args):
    """The case's command: its first argument, else report (the default)."""
    first = raw_args[0] if raw_args else ""
    return first if first in JOBS_COMMANDS | OTHER_COMMANDS else "report"


def reads_directory(raw_args, corpus_dir):
    for a in raw_args:
        path = a.replace("@CORPUS@", corpus_dir).replace("@SRC@", SRC)
        if "@TMP@" not in path and os.path.isdir(os.path.join(SRC, path)):
            return True
    return False


def check(binary, name, corpus_dir):
    """None when the case does not apply; else the failures (empty: ok)."""
    case = os.path.join(HERE, "cases", name)
    raw_args = [a for a in read(os.path.join(case, "args"), b"").decode().splitlines() if a]
    if command(raw_args) not in JOBS_COMMANDS or corpus.missing(raw_args, corpus_dir) \
            or read(os.path.join(case, "stdout")) or not reads_directory(raw_args, corpus_dir):
        return None
    want = (int(read(os.path.join(case, "expected.code"), b"0").decode().strip() or 0),
            read(os.path.join(case, "expected.out"), b""), read(os.path.join(case, "expected.err"), b""))
    failures = []
    for jobs in ("1", "4"):
        got = run_golden.run_case(binary, case, raw_args + ["--jobs", jobs], corpus_dir)
        for what, g, w in zip(("exit code", "stdout", "stderr"), got, want):
            if g != w:
                failures.append("%s --jobs %s: %s differs" % (name, jobs, what))
    return failures


def damaged_directory(binary):
    """report and ingest of good, truncated, invalid, good traces: the same
    with --jobs 1 and --jobs 4."""
    import shutil
    import subprocess
    import tempfile
    inputs = os.path.join(HERE, "inputs")
    files = [os.path.join(inputs, "report", "overload-names.json"), os.path.join(inputs, "truncated.json"),
             os.path.join(inputs, "invalid.json"), os.path.join(inputs, "pytorch-rules", "c10d-work-is-async.json")]
    failures = []
    with tempfile.TemporaryDirectory() as tmp:
        runs = os.path.join(tmp, "runs")
        os.mkdir(runs)
        for i, f in enumerate(files):
            shutil.copy(f, os.path.join(runs, "rank%d.pt.trace.json" % i))
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
        for cmd in (["report", "--no-cache"], ["ingest", "-o", os.path.join(tmp, "out.db")]):
            got = [subprocess.run([binary] + cmd + [runs, "--jobs", j], capture_output=True, env=env)
                   for j in ("1", "4")]
            a, b = ((p.returncode, p.stdout, p.stderr) for p in got)
            if a != b or a[0] == 0 or b"invalid.json" in a[2] or b"rank2.pt.trace.json" not in a[2]:
                failures.append("damaged directory, %s: --jobs 1 %r, --jobs 4 %r" % (cmd[0], a, b))
    return failures


def run_cases(check_case, names, binary, corpus_dir):
    """check_case(binary, name, corpus_dir) on each case named (all by
    default), each told: (failures, the number that applied)."""
    failures, ran = [], 0
    for name in names or sorted(os.listdir(os.path.join(HERE, "cases"))):
        result = check_case(binary, name, corpus_dir)
        if result is None:
            continue
        ran += 1
        failures += result
        print("%s %s" % ("FAIL" if result else "ok", name))
    return failures, ran


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    failures, ran = run_cases(check, sys.argv[2:], binary, corpus.corpus_root(binary))
    print("%d directory cases, each with --jobs 1 and --jobs 4" % ran)
    if len(sys.argv) == 2:
        damaged = damaged_directory(binary)
        print("%s damaged directory" % ("FAIL" if damaged else "ok"))
        failures += damaged
    if failures:
        print("\n".join(failures))
        return 1
    return 0 if ran else 77


if __name__ == "__main__":
    sys.exit(main())
