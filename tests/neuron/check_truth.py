#!/usr/bin/env python3
"""Self NEURON per op (and engine busy time per op) reported by neuron-stats
equals the ground truth that tools/gen_captures.py computed, for every
fixtures/capture-*/truth.json.

Usage: check_truth.py NEURON_STATS [CAPTURE...]
For each capture it runs `report CAPTURE --format json -n -1 --no-cache` (also
with --by-neff, and with --engines) and compares, to the nanosecond:
  - self_device_us of every row: truth's op / device-row value, else 0;
  - self_device_time_total_us;
  - the # of Calls of each device row in calls_by_device_row (when given);
  - with --by-neff: the rows of one op, split per NEFF, sum to the truth;
  - with --engines: each op's busy time per engine.
"""
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
ENGINES = ["PE", "ACT", "DVE", "POOL", "SP", "DMA"]


def ns(us):
    return round(float(us) * 1000)


def docs(text):
    """The report objects: one JSON document, an array when there are several traces."""
    d = json.loads(text)
    return d if isinstance(d, list) else [d]


def run(binary, args, env):
    p = subprocess.run([binary] + args, capture_output=True, text=True, cwd=SRC, env=env)
    if p.returncode != 0:
        raise AssertionError("%s exited %d: %s" % (" ".join(args), p.returncode, p.stderr))
    return docs(p.stdout)


def check_capture(binary, cap, env, fails):
    with open(os.path.join(cap, "truth.json")) as f:
        truth = json.load(f)
    rel = os.path.relpath(cap, SRC)
    base = [rel, "--format", "json", "-n", "-1", "--no-cache"]
    plain = run(binary, base, env)
    by_neff = run(binary, base + ["--by-neff"], env)
    engines = run(binary, base + ["--engines"], env)
    reports = [d for d in plain if "rows" in d]
    if len(reports) != len(truth["ranks"]):
        fails.append("%s: %d tables for %d ranks" % (rel, len(reports), len(truth["ranks"])))
        return
    for r in truth["ranks"]:
        doc = [d for d in reports if d["path"].endswith(r["trace"])]
        split = [d for d in by_neff if "rows" in d and d["path"].endswith(r["trace"])]
        if len(doc) != 1 or len(split) != 1:
            fails.append("%s: no single table for %s" % (rel, r["trace"]))
            continue
        doc, split = doc[0], split[0]
        ops, rows = r["self_neuron_us_by_op"], r["self_neuron_us_by_device_row"]
        where = "%s rank %s" % (rel, r["rank"])
        for row in doc["rows"]:
            want = ops.get(row["name"], rows.get(row["name"], 0))
            if ns(row["self_device_us"]) != ns(want):
                fails.append("%s: %s Self NEURON %s us, truth %s us" % (where, row["name"], row["self_device_us"], want))
        for name, calls in r.get("calls_by_device_row", {}).items():
            got = [row["calls"] for row in doc["rows"] if row["name"] == name]
            if got != [calls]:
                fails.append("%s: %s calls %s, truth %d" % (where, name, got, calls))
        if ns(doc["self_device_time_total_us"]) != ns(r["self_neuron_total_us"]):
            fails.append("%s: total %s us, truth %s us" % (where, doc["self_device_time_total_us"], r["self_neuron_total_us"]))
        sums = {}
        for row in split["rows"]:
            sums[row["name"]] = sums.get(row["name"], 0) + ns(row["self_device_us"])
            if row["name"] in ops and ns(row["self_device_us"]) and not row["neff"] and row["name"] != "aten::copy_":
                fails.append("%s: --by-neff row %s has device time but no NEFF" % (where, row["name"]))
        for op, us in ops.items():
            if sums.get(op) != ns(us):
                fails.append("%s: --by-neff rows of %s sum to %s ns, truth %s us" % (where, op, sums.get(op), us))
        eng = {row["name"]: row for row in [d for d in engines if d["path"].endswith(r["trace"])][0]["engines"]}
        for op, per in r["engines_us_by_op"].items():
            for e in ENGINES:
                got = eng.get(op, {}).get(e + "_us", 0)
                if ns(got) != ns(per[e]):
                    fails.append("%s: %s %s busy %s us, truth %s us" % (where, op, e, got, per[e]))
        print("%-26s %-7s Self NEURON total %10.3fus (truth %10.3fus); per op: %s" % (
            os.path.basename(cap), "rank %s" % r["rank"], float(doc["self_device_time_total_us"]),
            r["self_neuron_total_us"],
            ", ".join("%s %s (truth %s)" % (row["name"], row["self_device_us"], ops[row["name"]])
                      for row in doc["rows"] if row["name"] in ops)))


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    caps = sys.argv[2:] or sorted(os.path.join(SRC, "fixtures", d) for d in os.listdir(os.path.join(SRC, "fixtures"))
                                  if os.path.exists(os.path.join(SRC, "fixtures", d, "truth.json")))
    fails = []
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
        for cap in caps:
            try:
                check_capture(binary, os.path.abspath(cap), env, fails)
            except AssertionError as e:
                fails.append(str(e))
        # every generated NEFF is a valid container for `neuron-stats neff`
        neffs = sorted(os.path.join(d, f) for top in ("fixtures",) for d, _, fs in os.walk(os.path.join(SRC, top))
                       for f in fs if f.endswith(".neff") and "capture-" in d)
        for path in neffs:
            p = subprocess.run([binary, "neff", "--format", "json", path], capture_output=True, text=True, env=env)
            if p.returncode != 0 or json.loads(p.stdout).get("notes"):
                fails.append("%s: neff exit %d, notes %s %s" % (path, p.returncode, p.stdout[-300:], p.stderr))
        print("%d fixture NEFFs parse with `neuron-stats neff`" % len(neffs))
    for f in fails:
        print("FAIL " + f)
    print("ok: %d captures match their truth.json" % len(caps) if not fails else "%d mismatches" % len(fails))
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
