#!/usr/bin/env python3
"""Runs every worked query of docs/queries.md and compares the output.

    run-queries.py NEURON_STATS QUERIES_MD [--update]

In QUERIES_MD each query is a ```sql block, followed by a line naming the
fixture it runs on, then the expected output in a ```text (or ```json) block:

    ```sql
    SELECT ...
    ```

    On `fixtures/rmsnorm-naive`:            (or: On `...`, `--format json`:)

    ```text
    ...
    ```

Each query runs as `NEURON_STATS sql FIXTURE QUERY [--format FMT]` from the
source root (the directory above docs/), with a private cache directory, so
the first query on a fixture ingests it and the rest reuse the cache. A query
passes when it exits 0, prints nothing on stderr, and stdout equals the block
byte for byte. --update rewrites the blocks with the actual output (review
the diff: the doc's numbers are meant to be checked against the trace).
Standard library only.
"""
import os
import re
import subprocess
import sys
import tempfile

CASE = re.compile(
    r"```sql\n(?P<sql>.*?)```\n\n"
    r"On `(?P<fixture>[^`]+)`(?:, `--format (?P<format>\w+)`)?:\n\n"
    r"```(?:text|json)\n(?P<expected>.*?)```",
    re.S)


def run_case(binary, root, cache_dir, case):
    argv = [binary, "sql", case["fixture"], case["sql"].strip()]
    if case["format"]:
        argv += ["--format", case["format"]]
    env = dict(os.environ, NEURON_STATS_CACHE_DIR=cache_dir)
    return subprocess.run(argv, cwd=root, env=env, capture_output=True, text=True)


def main():
    args = [a for a in sys.argv[1:] if a != "--update"]
    update = "--update" in sys.argv[1:]
    if len(args) != 2:
        sys.exit(__doc__)
    binary, doc_path = os.path.abspath(args[0]), os.path.abspath(args[1])
    root = os.path.dirname(os.path.dirname(doc_path))
    with open(doc_path, encoding="utf-8") as f:
        doc = f.read()
    cases = list(CASE.finditer(doc))
    n_sql_blocks = doc.count("```sql\n")
    if not cases or len(cases) != n_sql_blocks:
        sys.exit(f"{doc_path}: {n_sql_blocks} ```sql blocks but {len(cases)} with a fixture line and "
                 "an expected output block after them")
    failures = 0
    pieces, last = [], 0
    with tempfile.TemporaryDirectory(prefix="ns-queries-") as cache_dir:
        for i, m in enumerate(cases, 1):
            line = doc.count("\n", 0, m.start()) + 1
            proc = run_case(binary, root, cache_dir, m)
            ok = proc.returncode == 0 and proc.stderr == "" and proc.stdout == m["expected"]
            print(f"{'ok' if ok else 'FAIL'} {i} {os.path.basename(doc_path)}:{line} ({m['fixture']})")
            if not ok:
                failures += 1
                print(f"  exit status {proc.returncode}; stderr:\n{proc.stderr}" if proc.returncode or proc.stderr
                      else "", end="")
                if proc.stdout != m["expected"]:
                    print("  --- expected:\n" + m["expected"] + "  --- got:\n" + proc.stdout, end="")
            if update and proc.returncode == 0:
                pieces.append(doc[last:m.start("expected")])
                pieces.append(proc.stdout)
                last = m.end("expected")
    if update:
        pieces.append(doc[last:])
        with open(doc_path, "w", encoding="utf-8") as f:
            f.write("".join(pieces))
        print(f"updated {doc_path}")
        return 0
    print(f"{len(cases) - failures} of {len(cases)} queries match")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
