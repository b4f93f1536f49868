#!/usr/bin/env python3
"""`neuron-stats stragglers` (all three views) against an independent Python
reading of the traces (tests/oracle/meson.build). HTA has no such table (its
get_potential_stragglers ranks by another metric); hta_overlap.py checks the
step starts and ends against HTA's extract_iteration_info.

    stragglers_ref.py NEURON_STATS PATH

PATH: the traces of one job's ranks (a folder, or one trace). From the JSON,
with the rules of docs/analyses.md: the ProfilerStep#N CPU slices (with two
distinct N or more, the one that starts last left out); the communication
kernels (cat kernel, on a stream, name nccl*/hip*/hccl* or containing
ncclKernel; with two steps or more, only those whose launch -- the first
non-device event with their correlation -- starts before the last step);
times in ns, shifted by baseTimeNanoseconds where written. Per step: the
rank that ends last, its end and the median end from the step's first
start, the durations' min, median, max. Per rank: count and time of
communication kernels; each one is the k-th of its name on its rank (by
start), matched when every rank has that occurrence, and waits from its
start until the last rank's start, at most its duration. Medians of an even
count are the mean of the two middle values, rounded to the ns half to
even. Everything is compared exactly. A missing PATH is a skip (77).
"""
import decimal
import gzip
import json
import os
import re
import sys

import oracle_check as oc

D = oc.D
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset", "mtia_ccp_events", "cuda_sync")
STEP = re.compile(r"ProfilerStep#(\d+)$")


def ns(us):
    return int(D(str(us)) * 1000)


def trace_files(path):
    if os.path.isfile(path):
        return [path]
    return sorted(os.path.join(path, f) for f in os.listdir(path) if f.endswith((".json", ".json.gz")))


def on_stream(e):
    return isinstance(e.get("tid"), int) and e["tid"] >= 0


def is_comm(name):
    return name.startswith(("nccl", "hip", "hccl")) or "ncclKernel" in name


def read_rank(path, position):
    """(rank, base ns or None, steps [(N, ts, end)], comm kernels [(name, ts, end)])."""
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        doc = json.load(f)
    events = [e for e in doc["traceEvents"] if e.get("ph") == "X"]
    rank = doc.get("distributedInfo", {}).get("rank", position)
    base = doc.get("baseTimeNanoseconds")
    steps = [(int(STEP.match(e["name"]).group(1)), ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])) for e in events
             if STEP.match(str(e.get("name", ""))) and e.get("cat") not in DEVICE_CATS + ("gpu_user_annotation",)]
    last = None
    if len({s[0] for s in steps}) > 1:
        last = max(s[1] for s in steps)
        steps = [s for s in steps if s[1] < last]
    launch = {}
    for e in events:
        c = e.get("args", {}).get("correlation")
        device = e.get("cat") in DEVICE_CATS and on_stream(e)
        if c is not None and c >= 0 and not device and e.get("name") not in ("Event Sync", "Context Sync"):
            launch.setdefault(c, ns(e["ts"]))
    kernels = []
    for e in events:
        if e.get("cat") != "kernel" or not on_stream(e) or not is_comm(e["name"]):
            continue
        c = e.get("args", {}).get("correlation")
        at = launch.get(c) if c is not None and c >= 0 else ns(e["ts"])
        if last is not None and (at is None or at >= last):
            continue
        kernels.append((e["name"], ns(e["ts"]), ns(e["ts"]) + ns(e["dur"])))
    return rank, base, steps, kernels


def median(values):
    v = sorted(values)
    n = len(v)
    return D(v[n // 2]) if n % 2 else (D(v[n // 2 - 1]) + D(v[n // 2])) / 2


def us(value_ns):
    return D(value_ns).quantize(D(1), rounding=decimal.ROUND_HALF_EVEN) / 1000


def reference(path):
    ranks = [read_rank(p, i) for i, p in enumerate(trace_files(path))]
    bases = [r[1] for r in ranks if r[1] is not None]
    shift = {r[0]: (r[1] - min(bases) if r[1] is not None else 0) for r in ranks}
    by_step = {}
    for rank, _, steps, _ in ranks:
        for n, ts, end in steps:
            by_step.setdefault(n, []).append((rank, ts + shift[rank], end + shift[rank]))
    summary, rows = [], []
    for n, group in sorted(by_step.items()):
        first = min(g[1] for g in group)
        last = max(group, key=lambda g: (g[2], -g[0]))
        med = median([g[2] - first for g in group])
        durs = [g[2] - g[1] for g in group]
        summary.append((n, len(group), last[0], us(last[2] - first), us(med), us(last[2] - first - med),
                        us(min(durs)), us(median(durs)), us(max(durs))))
        for rank, ts, end in group:
            rows.append((n, rank, us(ts - first), us(end - first), us(end - ts), us(end - first - med),
                         "yes" if rank == last[0] else "no"))
    occurrences = {}
    coll = {}
    for rank, _, _, kernels in ranks:
        seen = {}
        c = coll[rank] = [len(kernels), 0, sum(k[2] - k[1] for k in kernels), 0, 0]
        for name, ts, end in sorted(kernels, key=lambda k: (k[0], k[1])):
            occurrences.setdefault((name, seen.get(name, 0)), []).append((rank, ts + shift[rank], end + shift[rank]))
            seen[name] = seen.get(name, 0) + 1
    for occ in occurrences.values():
        if len(ranks) < 2 or len(occ) != len(ranks):
            continue
        arrival = max(occ, key=lambda o: (o[1], -o[0]))
        for rank, ts, end in occ:
            coll[rank][1] += 1
            coll[rank][3] += min(arrival[1] - ts, end - ts)
        coll[arrival[0]][4] += 1
    collectives = [(r, c[0], c[1], us(c[2]), us(c[3]), c[4]) for r, c in sorted(coll.items())]
    return sorted(summary), sorted(rows), collectives


VIEWS = (  # the view's options, its columns (the first `keys` make a row's key)
    ("steps", [], 1, ("step", "ranks", "last_rank", "last_end_us", "median_end_us", "last_behind_median_us",
                      "min_duration_us", "median_duration_us", "max_duration_us")),
    ("ranks", ["--ranks"], 2, ("step", "rank", "start_us", "end_us", "duration_us", "behind_median_us", "last")),
    ("collectives", ["--collectives"], 1, ("rank", "collectives", "matched", "time_us", "wait_us", "last_arrivals")),
)


def compare_view(ck, name, keys, columns, got_rows, want_rows):
    got = {tuple(r[c] for c in columns[:keys]): r for r in got_rows}
    want = {w[:keys]: w for w in want_rows}
    for key in sorted(set(got) ^ set(want)):
        ck.fail("%s %s: in %s only" % (name, key, "neuron-stats" if key in got else "the reference"))
    for key in sorted(set(got) & set(want)):
        for column, w in zip(columns[keys:], want[key][keys:]):
            if column == "last":
                if w != got[key][column]:
                    ck.fail("%s %s last: reference %s, neuron-stats %s" % (name, key, w, got[key][column]))
                continue
            ck.eq("%s %s %s" % (name, key, column), w, got[key][column])


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, path = sys.argv[1], oc.trace_or_skip(sys.argv[1], sys.argv[2])
    if path is None:
        return 77
    want = reference(path)
    ck = oc.Check(source="reference")
    for (name, opts, keys, columns), want_rows in zip(VIEWS, want):
        compare_view(ck, name, keys, columns, oc.run_json(binary, ["stragglers", *opts, path]), want_rows)
    return ck.finish("%d steps, %d rank steps, %d ranks' collectives equal the reference" % tuple(len(w) for w in want))


if __name__ == "__main__":
    sys.exit(main())
