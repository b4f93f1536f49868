#!/usr/bin/env python3
"""The golden cases of report --include/--exclude (tests/golden/cases/report-filter-*),
checked against the Python reference, not against the tool.

For each case: the reference's full table of the trace (tests/oracle/key_averages.py,
every row, the case's --sort, no name cap as --max-name-width 0), then its row lines
kept when the row's name matches an --include expression (any; all rows without one)
and no --exclude expression (Python's re.search: the cases' expressions mean the same
in POSIX ERE), then the first N of them for -n N. That text must equal the case's
expected.out byte for byte: rows dropped after aggregation, every number, percentage
and total as in the unfiltered table (docs/report.md "Filters").
The diff-filter-* cases in JSON are checked the same way: their rows are the ops of
either run that the filters keep, with the reference's calls and Self CPU per run, and
the Self CPU total is the sum of those rows (a diff compares the kept ops only).
Usage: check_filters.py"""
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(SRC, "tests", "golden", "cases")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import case_args  # noqa: E402
import corpus  # noqa: E402
import key_averages as ka  # noqa: E402


def parse_args(args):
    o = {"include": [], "exclude": [], "sort": None, "limit": 100, "trace": None}
    it = iter(args)
    for a in it:
        if a in ("--include", "--exclude"):
            o[a[2:]].append(next(it))
        else:
            case_args.table_option(a, it, o, "trace")
    return o


def expected(o):
    tr = ka.Trace(ka.load_trace(o["trace"]))
    rows = ka.key_averages(ka.build_tree(tr.events), tr.use_device)
    table = ka.build_table(rows, tr.use_device, ka.device_label_for(tr.use_device), tr.profile_memory,
                           sort_by=o["sort"], row_limit=-1, max_name_column_width=None)
    lines = table.split("\n")
    rules = [i for i, line in enumerate(lines) if line.startswith("---")]
    name_w = len(lines[rules[0]].split("  ")[0])
    head, body, tail = lines[:rules[1] + 1], lines[rules[1] + 1:rules[2]], lines[rules[2]:]
    kept = []
    for line in body:
        name = line[:name_w].strip()
        if o["include"] and not any(re.search(e, name) for e in o["include"]):
            continue
        if any(re.search(e, name) for e in o["exclude"]):
            continue
        kept.append(line)
    if o["limit"] >= 0:
        kept = kept[:o["limit"]]
    return "\n".join(head + kept + tail), len(body), len(kept)


def kept(name, o):
    return ((not o["include"] or any(re.search(e, name) for e in o["include"]))
            and not any(re.search(e, name) for e in o["exclude"]))


def side_rows(path):
    """{name: (calls, self CPU us, self device us)} of the reference's key_averages() of one trace."""
    if os.path.isdir(path):
        path = os.path.join(path, "trace.json")
    tr = ka.Trace(ka.load_trace(path))
    return {r.key: (r.count, r.self_cpu_time_total, r.self_device_time_total)
            for r in ka.key_averages(ka.build_tree(tr.events), tr.use_device)}


def check_diff(name, args, text):
    """A diff-filter-* case with --format json: its rows are the ops of either run whose
    name the filters keep, each with the reference's calls and Self CPU of each run, and
    the Self CPU total is theirs."""
    o = parse_args([a for a in args[3:] if a not in ("--format", "json")])
    base, new = side_rows(args[1]), side_rows(args[2])
    doc = json.loads(text)
    fails = []
    want = sorted(n for n in set(base) | set(new) if kept(n, o))
    got = sorted(r["name"] for r in doc["rows"])
    if got != want:
        fails.append("rows %s, the reference keeps %s" % (got, want))
    total = [0.0, 0.0]
    for r in doc["rows"]:
        for i, (side, key) in enumerate(((base, "base"), (new, "new"))):
            calls, cpu, _ = side.get(r["name"], (0, 0.0, 0.0))
            total[i] += cpu
            if r["calls"][key] != calls or abs(r["self_cpu"][key + "_us"] - cpu) > 0.0015:
                fails.append("%s %s: calls %s, Self CPU %s; the reference %d, %.3f" % (
                    r["name"], key, r["calls"][key], r["self_cpu"][key + "_us"], calls, cpu))
    for i, key in enumerate(("base", "new")):
        if abs(doc["totals"]["self_cpu"][key + "_us"] - total[i]) > 0.0015 * (1 + len(doc["rows"])):
            fails.append("Self CPU total %s %s, the kept rows sum to %.3f" % (
                key, doc["totals"]["self_cpu"][key + "_us"], total[i]))
    for f in fails:
        print("FAIL %s: %s" % (name, f))
    if not fails:
        print("ok   %s: %d rows of %d" % (name, len(got), len(set(base) | set(new))))
    return len(fails)


def main():
    fails = 0
    for name in sorted(n for n in os.listdir(CASES) if n.startswith("diff-filter-")):
        with open(os.path.join(CASES, name, "args")) as f:
            args = [a.replace("@SRC@", SRC) for a in f.read().split("\n") if a]
        if "json" in args:
            with open(os.path.join(CASES, name, "expected.out")) as f:
                fails += check_diff(name, [os.path.join(SRC, a) if a.startswith("fixtures/") else a
                                           for a in args], f.read())
    names = sorted(n for n in os.listdir(CASES) if n.startswith("report-filter-"))
    root = corpus.corpus_root()
    for name in names:
        with open(os.path.join(CASES, name, "args")) as f:
            args = [a.replace("@CORPUS@", root).replace("@SRC@", SRC) for a in f.read().split("\n") if a]
        o = parse_args(args)
        if not os.path.exists(o["trace"]):
            print("skip: %s: %s not found" % (name, o["trace"]))
            continue
        want, n_all, n_kept = expected(o)
        with open(os.path.join(CASES, name, "expected.out")) as f:
            got = f.read()
        if got != want:
            print("FAIL %s: expected.out is not the reference's table filtered" % name)
            fails += 1
        else:
            print("ok   %s: %d of %d rows" % (name, n_kept, n_all))
    if not names:
        print("FAIL no report-filter-* cases")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
