#!/usr/bin/env python3
"""`neuron-stats kernels --by-engine` / `--by-opcode` (with and without
`--by-neff`) on a Neuron capture against the instructions of its
device-profile exports, read here with json (tests/oracle/meson.build).

    neuron_engines.py NEURON_STATS CAPTURE_DIR

Follows docs/neuron.md ("Device-profile JSON", "Time units", "Engine
statistics"), not neuron-stats' code. Every `trace.json` under CAPTURE_DIR
is a trace (its rank: `distributedInfo.rank`, else its position by path);
its device-profile exports are the JSON files with an `instruction` array in
its folder or a folder above it inside CAPTURE_DIR (one whose name carries
`_pid_<N>_` only for the trace of that process). Per export: the time unit
whose scale makes the span of its intervals closest (log scale) to
`summary[0].total_time` seconds (ns without one); each `instruction` row
(start `timestamp`/`start_ts`/`start`; end `end_ts`/`end`, else start +
`duration`/`duration_ns`; engine from `engine`, else `label`, else
`timeline_track`, by the label table; its `opcode`) and each `dma` row
(engine DMA, no opcode) is one duration, rounded to the ns. The NEFF is the
export name's `neff_<hash>`, else `profile_info`'s `neff_name`. Per trace
and group, count, total, min and max must equal neuron-stats' exactly; the
mean, median and sample standard deviation and the share within 0.0005 (the
last printed digit); the rows must come in the documented order. The
database's `engine_opcodes` (docs/schema.md; `sql CAPTURE`, ingested into
a temporary cache) must hold the same groups per NEFF, per engine (opcode
NULL) and per engine and opcode, in ns. A missing CAPTURE_DIR is a skip (77).
"""
import decimal
import json
import math
import os
import re
import statistics
import subprocess
import sys
import tempfile

import oracle_check as oc

D = oc.D
ENGINES = ["PE", "ACT", "DVE", "POOL", "SP", "DMA", "other"]
# docs/neuron.md "Device-profile JSON": (label, prefix match?) -> engine, without case
LABELS = [("pe", False, "PE"), ("tensor", True, "PE"), ("act", True, "ACT"), ("scalar", True, "ACT"),
          ("dve", True, "DVE"), ("vector", True, "DVE"), ("pool", True, "POOL"), ("gpsimd", True, "POOL"),
          ("sp", False, "SP"), ("sync", True, "SP"), ("dma", True, "DMA")]
FACTOR = {"ns": D(1), "us": D(1000), "ms": D(10) ** 6, "s": D(10) ** 9}


def engine_of(label):
    low = label.lower()
    for name, prefix, engine in LABELS:
        if low == name or (prefix and low.startswith(name)):
            return engine
    if len(label) > 1 and label[0] == "q" and label[1].isupper():  # DMA queue names
        return "DMA"
    return "other"


def first(row, keys):
    for k in keys:
        v = row.get(k)
        if isinstance(v, (int, D)) and not isinstance(v, bool):
            return D(v)
    return None


def intervals(export):
    """[(engine, opcode, start, end)] in file units, instruction and dma rows."""
    out = []
    for section in ("instruction", "dma"):
        for row in export.get(section, []):
            start = first(row, ("timestamp", "start_ts", "start"))
            end = first(row, ("end_ts", "end"))
            dur = first(row, ("duration", "duration_ns"))
            if start is None or (end is None and dur is None):
                continue
            end = end if end is not None else start + dur
            if end < start:
                continue
            if section == "dma":
                out.append(("DMA", "", start, end))
                continue
            label = row.get("engine") or row.get("label") or row.get("timeline_track")
            opcode = row.get("opcode")
            out.append((engine_of(label) if isinstance(label, str) else "other",
                        opcode if isinstance(opcode, str) else "", start, end))
    return out


def unit(export, rows):
    total = first((export.get("summary") or [{}])[0], ("total_time",))
    spans = rows + [(None, None, first(a, ("start_ts", "timestamp")), first(a, ("end_ts",)))
                    for a in export.get("active_time", []) if first(a, ("end_ts",)) is not None]
    if not total or total <= 0 or not spans:
        return "ns"
    lo, hi = min(s[2] for s in spans), max(s[3] for s in spans)
    if hi <= lo:
        return "ns"
    expect = {u: total * D(10) ** 9 / FACTOR[u] for u in FACTOR}
    return min(FACTOR, key=lambda u: abs(math.log10(float((hi - lo) / expect[u]))))


def neff_of(path, export):
    m = re.search(r"neff_(\d+)", os.path.basename(path))
    if m:
        return m.group(1)
    info = (export.get("profile_info") or [{}])[0]
    m = re.search(r"neff_(\d+)", str(info.get("neff_name", "")))
    return m.group(1) if m else ""


def durations(path):
    """[(engine, neff, opcode, ns)] of one export."""
    with open(path) as f:
        export = json.load(f, parse_float=D)
    rows = intervals(export)
    factor = FACTOR[unit(export, rows)]
    neff = neff_of(path, export)
    return [(e, neff, op, int(((end - start) * factor).quantize(D(1), rounding=decimal.ROUND_HALF_UP)))
            for e, op, start, end in rows]


def exports_of(capture, trace_dir):
    """The device exports of the trace in trace_dir."""
    out, d = [], trace_dir
    while True:
        for name in sorted(os.listdir(d)):
            path = os.path.join(d, name)
            if not name.endswith(".json") or name in ("trace.json", "system_profile.json") or not os.path.isfile(path):
                continue
            m = re.search(r"_pid_(\d+)_", name)
            if m and "_pid_%s" % m.group(1) not in trace_dir:
                continue
            with open(path) as f:
                try:
                    if "instruction" in json.load(f):
                        out.append(path)
                except ValueError:
                    continue
        if os.path.samefile(d, capture):
            return out
        d = os.path.dirname(d)


def reference(capture, by_neff, by_opcode):
    """[(rank, engine, neff, opcode, [ns...], whole)] in the documented order."""
    traces = sorted(os.path.join(d, "trace.json") for d, _, files in os.walk(capture) if "trace.json" in files)
    rows = []
    for position, trace in enumerate(traces):
        with open(trace) as f:
            rank = json.load(f).get("distributedInfo", {}).get("rank", position)
        groups = {}
        for path in exports_of(capture, os.path.dirname(trace)):
            for e, neff, op, ns in durations(path):
                groups.setdefault((e, neff if by_neff else "", op if by_opcode else ""), []).append(ns)
        everything = sum(sum(v) for v in groups.values())
        for (e, neff, op), v in groups.items():
            whole = sum(sum(w) for k, w in groups.items() if k[:2] == (e, neff)) if by_opcode else everything
            rows.append((rank, e, neff, op, v, whole))
    rows.sort(key=lambda r: (r[0] if r[0] is not None else -1, ENGINES.index(r[1]), r[2], -sum(r[4]), r[3]))
    return rows


def check(ck, binary, capture, by_neff, by_opcode):
    args = ["kernels", "--by-opcode" if by_opcode else "--by-engine"] + (["--by-neff"] if by_neff else []) + [capture]
    got = oc.run_json(binary, args)
    want = reference(capture, by_neff, by_opcode)
    mode = " ".join(args[1:-1])
    if len(got) != len(want):
        ck.fail("%s: %d rows, the exports make %d" % (mode, len(got), len(want)))
    for w, g in zip(want, got):
        rank, e, neff, op, durs, whole = w
        key = "%s rank %s %s %s %s" % (mode, rank, e, neff, op)
        if (g.get("rank"), g["engine"], g.get("neff", ""), g.get("opcode", "")) != (rank, e, neff, op):
            ck.fail("%s: row out of order or missing (neuron-stats has %s)" % (key, g))
            continue
        us = [D(d) / 1000 for d in durs]
        for what, want_v, field, slack in (
                ("count", len(us), "count", 0), ("total", sum(us), "total_us", 0), ("min", min(us), "min_us", 0),
                ("max", max(us), "max_us", 0), ("mean", statistics.mean(us), "mean_us", D("0.0005")),
                ("median", statistics.median(us), "median_us", D("0.0005")),
                ("stddev", statistics.stdev(us) if len(us) > 1 else D(0), "stddev_us", D("0.0005")),
                ("share", D(100) * sum(durs) / whole if whole else D(0), "share_pct", D("0.0005"))):
            ck.eq("%s %s" % (key, what), want_v, g[field], D(slack))
    return len(want)


def sql_json(binary, capture, query):
    """neuron-stats sql CAPTURE QUERY -f json, in a fresh cache folder."""
    with tempfile.TemporaryDirectory() as tmp:
        c = subprocess.run([binary, "sql", capture, query, "-q", "-f", "json"], capture_output=True,
                           env=dict(os.environ, NEURON_STATS_CACHE_DIR=tmp))
    if c.returncode != 0:
        sys.exit("neuron-stats sql failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
    return json.loads(c.stdout, parse_float=D)


def check_store(ck, binary, capture):
    """engine_opcodes against the groups per (rank, NEFF, engine[, opcode])."""
    got = {}
    for r in sql_json(binary, capture, "SELECT coalesce(t.rank, (SELECT count(*) FROM traces u WHERE u.id < t.id)) AS rank, e.*"
                      " FROM engine_opcodes e JOIN traces t ON t.id = e.trace_id"):
        key = (r["rank"], r["neff"], r["engine"], r["opcode"])
        if key in got:
            ck.fail("engine_opcodes %s: two rows (one NEFF on two cores: not compared)" % (key,))
        got[key] = r
    want = {}
    for by_opcode in (False, True):
        for rank, e, neff, op, durs, _ in reference(capture, True, by_opcode):
            want[(rank, neff, e, op if by_opcode else None)] = durs
    for key in sorted(set(got) - set(want), key=str):
        ck.fail("engine_opcodes %s: a row the exports do not have" % (key,))
    for key, durs in sorted(want.items(), key=str):
        g = got.get(key)
        if g is None:
            ck.fail("engine_opcodes %s: no row" % (key,))
            continue
        ns = [D(d) for d in durs]
        for what, want_v, field, slack in (
                ("instructions", len(ns), "instructions", 0), ("total", sum(ns), "total_ns", 0),
                ("min", min(ns), "min_ns", 0), ("max", max(ns), "max_ns", 0),
                ("mean", statistics.mean(ns), "mean_ns", D("1e-6")),
                ("median", statistics.median(ns), "median_ns", D("1e-6")),
                ("stddev", statistics.stdev(ns) if len(ns) > 1 else D(0), "stddev_ns", D("1e-6"))):
            ck.eq("engine_opcodes %s %s" % (key, what), want_v, g[field], slack)
    return len(want)


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, capture = sys.argv[1], oc.trace_or_skip(sys.argv[1], sys.argv[2])
    if capture is None:
        return 77
    ck = oc.Check(source="export")
    n = sum(check(ck, binary, capture, by_neff, by_opcode) for by_neff in (False, True) for by_opcode in (False, True))
    n += check_store(ck, binary, capture)
    return ck.finish("%d values of %d rows equal the device exports' instructions" % (ck.n, n))


if __name__ == "__main__":
    sys.exit(main())
