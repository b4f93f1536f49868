#!/usr/bin/env python3
"""`neuron-stats ranks` (both views) against an independent Python reading of
the traces (tests/oracle/meson.build).

    ranks_ref.py NEURON_STATS PATH

PATH: the traces of one job's ranks (a folder). Per trace, its key_averages
rows come from the reference implementation (key_averages.py, written from
PyTorch's rules, no C code); a rank is distributedInfo.rank, else the trace's
position. Ops are matched across ranks by (name, on device, user
annotation); an op absent from a rank is 0 there. For each metric
(self_device, self_cpu, calls): each rank's value, the total, the slowest
rank (the largest value, the first rank on a tie) and max/median (the
median of an even count: the mean of the two middle values); ops ordered by
total, largest first, then name. Times agree within 0.001 us (the reference
adds PyTorch's float us, neuron-stats exact ns). --per-step: from the
ProfilerStep#N slices as stragglers_ref.py reads them: each rank's step
duration, the rank with the longest (first on a tie), the rank that ended
last and max/median of the durations, exactly. And the store: the view
rank_op_totals (`sql PATH`, through a private cache) holds, per op name and
rank, the command's self device, self CPU and calls exactly. A missing PATH
is a skip (77).
"""
import decimal
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402
import key_averages as ka  # noqa: E402
import stragglers_ref as sr  # noqa: E402

D = decimal.Decimal
METRICS = {"self_device": lambda r: r.self_device_time_total, "self_cpu": lambda r: r.self_cpu_time_total,
           "calls": lambda r: r.count}
TOLERANCE_US = 0.001


def median(values):
    v = sorted(values)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2


def rank_rows(path, position):
    data = ka.load_trace(path)
    tr = ka.Trace(data)
    rows = ka.key_averages(ka.build_tree(tr.events), tr.use_device)
    rank = data.get("distributedInfo", {}).get("rank", position) if isinstance(data, dict) else position
    return rank, rows


def reference_ops(ranks, metric):
    """[(name, [value per rank], total, slowest rank, spread or None)] in the command's order."""
    value = METRICS[metric]
    ops = {}
    for k, (_, rows) in enumerate(ranks):
        for r in rows:
            key = (r.key, r.device_type != ka.CPU, bool(r.is_user_annotation))
            ops.setdefault(key, [0] * len(ranks))[k] += value(r)
    out = []
    for (name, _, _), v in ops.items():
        slowest = max(range(len(v)), key=lambda k: (v[k], -k))
        med = median(v)
        out.append((name, v, sum(v), ranks[slowest][0], max(v) / med if med > 0 else None))
    out.sort(key=lambda o: (-round(o[2], 3), o[0]))
    return out


def run(binary, path, *args):
    c = subprocess.run([binary, "ranks", path, "--no-cache", "-q", "-f", "json", "-n", "-1", *args],
                       capture_output=True)
    if c.returncode != 0:
        sys.exit("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
    return json.loads(c.stdout, parse_float=D)


def close(a, b, tolerance):
    return abs(float(a) - float(b)) <= tolerance


def compare_ops(got, want, ranks, metric):
    """The problems found, as lines."""
    unit = "" if metric == "calls" else "_us"
    tolerance = 0 if metric == "calls" else TOLERANCE_US
    bad = []
    if len(got) != len(want):
        bad.append("%s: %d ops, reference %d" % (metric, len(got), len(want)))
    for i, (g, w) in enumerate(zip(got, want)):
        name, values, total, slowest, spread = w
        ok = g["name"] == name and close(g["total" + unit], total, tolerance * len(values))
        ok = ok and all(close(g["rank_%d%s" % (ranks[k][0], unit)], values[k], tolerance) for k in range(len(values)))
        # the slowest rank, where the largest value is not a tie within the tolerance
        top = sorted(values, reverse=True)
        if len(top) < 2 or top[0] - top[1] > tolerance:
            ok = ok and g["slowest_rank"] == slowest
        if spread is None:
            ok = ok and g["spread"] is None
        else:
            ok = ok and g["spread"] is not None and abs(float(g["spread"]) - spread) <= 1e-6 * spread
        if not ok:
            bad.append("%s row %d: neuron-stats %s\n  reference %s" % (metric, i, dict(g), w))
    return bad[:10]


def reference_steps(path):
    """[(step, {rank: duration us}, slowest rank, last rank, spread or None)]."""
    ranks = [sr.read_rank(p, i) for i, p in enumerate(sr.trace_files(path))]
    bases = [r[1] for r in ranks if r[1] is not None]
    by_step = {}
    for pos, (rank, base, steps, _) in enumerate(ranks):
        shift = base - min(bases) if base is not None else 0
        for n, ts, end in steps:
            by_step.setdefault(n, []).append((pos, rank, ts + shift, end + shift))
    want = []
    for n, group in sorted(by_step.items()):
        durs = [end - ts for _, _, ts, end in group]
        slowest = max(group, key=lambda g: (g[3] - g[2], -g[0]))[1]
        last = max(group, key=lambda g: (g[3], -g[0]))[1]
        med = sr.median(durs)
        want.append((n, {g[1]: sr.us(g[3] - g[2]) for g in group}, slowest, last,
                     float(max(durs) / med) if med > 0 else None))
    return want


def compare_steps(got, want):
    bad = []
    if len(got) != len(want):
        bad.append("steps: %d rows, reference %d" % (len(got), len(want)))
    for g, w in zip(got, want):
        n, durs, slowest, last, spread = w
        ok = g["step"] == n and g["slowest_rank"] == slowest and g["last_rank"] == last
        ok = ok and all(g.get("rank_%d_us" % r) == d for r, d in durs.items())
        ok = ok and (g["spread"] is None if spread is None else abs(float(g["spread"]) - spread) <= 1e-6 * spread)
        if not ok:
            bad.append("step %s: neuron-stats %s\n  reference %s" % (n, dict(g), w))
    return bad


SQL = ("SELECT rank, key, sum(self_device_ns) AS self_device, sum(self_cpu_ns) AS self_cpu, sum(calls) AS calls "
       "FROM rank_op_totals GROUP BY rank, key")


def compare_sql(binary, path, commands, ranks):
    """The view's per (rank, name) sums against the command's JSON (metric -> rows)."""
    with tempfile.TemporaryDirectory(prefix="ns-ranks-") as cache:
        c = subprocess.run([binary, "sql", path, SQL, "-f", "json", "-q"], capture_output=True,
                           env=dict(os.environ, NEURON_STATS_CACHE_DIR=cache))
    if c.returncode != 0:
        sys.exit("neuron-stats sql failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
    got = {(r["rank"], r["key"], m): r[m] for r in json.loads(c.stdout) for m in METRICS}
    want = {}
    for metric, rows in commands.items():
        unit = "" if metric == "calls" else "_us"
        for row in rows:
            for rank, _ in ranks:
                v = row["rank_%d%s" % (rank, unit)]
                key = (rank, row["name"], metric)
                want[key] = want.get(key, 0) + (int(v) if metric == "calls" else int(v * 1000))
    bad = ["sql %s: rank_op_totals %s, ranks %s" % (k, got.get(k, 0), v)
           for k, v in sorted(want.items()) if got.get(k, 0) != v]
    bad += ["sql %s: rank_op_totals %s, not in ranks" % (k, v) for k, v in sorted(got.items()) if k not in want]
    return bad[:10]


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, path = sys.argv[1], corpus.resolve(sys.argv[2], sys.argv[1])
    if not os.path.exists(path):
        print(corpus.skip_reason(path))
        return 77
    ranks = [rank_rows(p, i) for i, p in enumerate(sr.trace_files(path))]
    bad, counts, commands = [], [], {}
    for metric in METRICS:
        want = reference_ops(ranks, metric)
        commands[metric] = run(binary, path, "--metric", metric)
        bad += compare_ops(commands[metric], want, ranks, metric)
        counts.append(len(want))
    bad += compare_sql(binary, path, commands, ranks)
    steps = reference_steps(path)
    bad += compare_steps(run(binary, path, "--per-step"), steps)
    n_steps = len(steps)
    if bad:
        print("\n".join(bad))
        print("FAIL: neuron-stats and the reference disagree")
        return 1
    print("ok: %d ops (self_device), %d (self_cpu), %d (calls) on %d ranks and %d steps equal the reference;"
          " rank_op_totals holds the same" % (*counts, len(ranks), n_steps))
    return 0


if __name__ == "__main__":
    sys.exit(main())
