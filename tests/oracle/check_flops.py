#!/usr/bin/env python3
"""FLOPs against PyTorch (meson suite `oracle`; fixtures/flops, made by
tests/oracle/make_flops.py with PyTorch 1.13 itself).

    python3 tests/oracle/check_flops.py build/src/cli/neuron-stats fixtures/flops

(a) For every table of tables.json, `neuron-stats TRACE ARGS` prints
    PyTorch's key_averages().table() text byte for byte, Total FLOPs column
    included (the trace carries args "flops").
(b) With every args "flops" taken out of the trace, the FLOPs neuron-stats
    computes from the shapes (the database's events.flops, flags & 4) equal
    the "flops" PyTorch recorded, event by event; no other event gets any.
(c) `report --flops` on that stripped trace prints the same Total FLOPs
    cells as PyTorch's table (the FLOPs from the shapes add up per row as
    the recorded ones do), each row marked "shapes"; and the same bytes a
    second time from the cache database (the FLOPs come back from it).
"""
import csv
import io
import json
import os
import subprocess
import sys
import tempfile


def run(binary, *args, env=None):
    p = subprocess.run([binary, *args], capture_output=True, text=True, env=env)
    if p.returncode != 0:
        sys.exit("FAIL: %s exited %d: %s" % (" ".join(args), p.returncode, p.stderr[-500:]))
    return p.stdout


def check_tables(binary, trace, tables):
    failed = 0
    for t in tables:
        got = run(binary, trace, "--no-cache", "-q", *t["args"])
        if got != t["text"]:
            failed += 1
            print("FAIL table %s (%s)" % (t["name"], " ".join(t["args"])))
            for i, (a, b) in enumerate(zip(t["text"].split("\n"), got.split("\n"))):
                if a != b:
                    print("  line %d\n  pytorch:      %r\n  neuron-stats: %r" % (i + 1, a, b))
                    break
        else:
            print("ok table %s (%d lines)" % (t["name"], t["text"].count("\n")))
    return failed


def check_computed(binary, events, tmp):
    stripped = os.path.join(tmp, "stripped.json")
    with open(stripped, "w") as f:
        json.dump([{**e, "args": {k: v for k, v in e["args"].items() if k != "flops"}} for e in events], f)
    db = os.path.join(tmp, "stripped.db")
    run(binary, "ingest", stripped, "-o", db, "-q")
    rows = list(csv.DictReader(io.StringIO(run(
        binary, "sql", db, "SELECT e.id - t.first_event_id AS idx, e.flags & 4 AS shapes, e.flops"
        " FROM events e JOIN traces t ON t.id = e.trace_id ORDER BY e.id", "--format", "csv"))))
    got = {int(r["idx"]): (int(r["flops"]) if r["flops"] else None, int(r["shapes"])) for r in rows}
    failed = compared = 0
    for i, e in enumerate(events):
        want = e["args"].get("flops")
        flops, shapes = got.get(i, (None, 0))
        if flops != want or (want is not None and not shapes):
            failed += 1
            print("FAIL event %d %s %s: PyTorch recorded %s, computed %s" %
                  (i, e["name"], e["args"].get("Input Dims"), want, flops))
        compared += want is not None
    print("%s computed FLOPs: %d events with PyTorch's flops, %d differ; %d events in all" %
          ("ok" if not failed else "FAIL", compared, failed, len(events)))
    return failed, stripped


def flops_cells(text):
    """{name: Total FLOPs cell} of a table, and the header."""
    lines = text.split("\n")
    header = lines[1]
    cells = {}
    for line in lines[3:]:
        if line.startswith("-"):
            break
        fields = line.split()
        cells[fields[0]] = fields[-1]
    return header.split()[-2:], cells


def check_report_flops(binary, stripped, table):
    got = run(binary, stripped, "--no-cache", "-q", "--flops", "--row-limit", "-1", "--format", "csv")
    rows = {r["name"]: r for r in csv.DictReader(io.StringIO(got))}
    text = run(binary, stripped, "--no-cache", "-q", "--flops", *table["args"])
    want_header, want = flops_cells(table["text"])
    failed = 0
    for line in text.split("\n")[3:]:
        if line.startswith("-"):
            break
        name = line.split()[0]
        cell = line[len(table["text"].split("\n")[0]) - 14:].split()  # Total FLOPs, FLOPs from, TFLOP/s
        if cell[0] != want.get(name) or (cell[0] != "--" and rows[name]["flops_from"] != "shapes"):
            failed += 1
            print("FAIL --flops row %s: %s, PyTorch %s" % (name, cell, want.get(name)))
    header = text.split("\n")[1]
    if want_header[0] + " " + want_header[1] not in header:
        failed += 1
        print("FAIL --flops header %r, PyTorch's %r" % (header, want_header))
    with tempfile.TemporaryDirectory(prefix="ns-flops-cache-") as cache:
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=cache)
        cold = run(binary, stripped, "-q", "--flops", *table["args"], env=env)
        warm = run(binary, stripped, "-q", "--flops", *table["args"], env=env)
        if not (cold == warm == text) or not os.listdir(cache):
            failed += 1
            print("FAIL --flops through the cache: the cold and warm runs differ from --no-cache's")
    print("%s --flops: the Total FLOPs of %d rows (also from the cache)" % ("ok" if not failed else "FAIL", len(want)))
    return failed


def main():
    if len(sys.argv) != 3:
        sys.exit("usage: check_flops.py NEURON_STATS FIXTURE_DIR")
    binary, fixture = sys.argv[1], sys.argv[2]
    trace = os.path.join(fixture, "trace.json")
    with open(os.path.join(fixture, "tables.json")) as f:
        tables = json.load(f)["tables"]
    with open(trace) as f:
        events = json.load(f)
    failed = check_tables(binary, trace, tables)
    with tempfile.TemporaryDirectory(prefix="ns-flops-") as tmp:
        n, stripped = check_computed(binary, events, tmp)
        failed += n
        failed += check_report_flops(binary, stripped, next(t for t in tables if t["name"] == "self-cpu"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
