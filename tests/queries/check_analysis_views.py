#!/usr/bin/env python3
"""The store's analysis views against the commands (docs/schema.md "Views").

    check_analysis_views.py NEURON_STATS PATH...

For each PATH (a trace, a folder of ranks or a Neuron capture; @CORPUS@ as
in tests/oracle/run_one.py; a missing one is skipped), through a private
cache: `sql PATH "SELECT * FROM kernel_stats"` must give the rows of
`kernels --format json` (per rank and kernel name): count, total, min and
max exactly, mean and standard deviation (the view's from the sums of
squares) within 0.0005 µs, as the command rounds them to the ns; and
`SELECT * FROM launches` the rows of `launches --each --format json` (per
rank and correlation: call, work, call and work durations and launch delay,
exactly). Exit 77 when every PATH is missing.
"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "oracle"))
import oracle_check as oc  # noqa: E402

D = oc.D
ROUNDED = D("0.0005")


def sql(binary, path, query):
    c = subprocess.run([binary, "sql", path, query, "-q", "-f", "json"], capture_output=True)
    if c.returncode != 0:
        sys.exit("neuron-stats sql %s failed (exit %d): %s" % (path, c.returncode, c.stderr.decode(errors="replace")))
    return json.loads(c.stdout, parse_float=D)


def compare(ck, binary, path):
    ours = {(r["rank"], r["name"]): r for r in oc.run_json(binary, ["kernels", path])}
    view = {(r["rank"], r["name"]): r for r in sql(binary, path, "SELECT * FROM kernel_stats")}
    for key in sorted(set(ours) ^ set(view), key=str):
        ck.fail("%s %s: in %s only" % (path, key, "kernels" if key in ours else "kernel_stats"))
    for key in sorted(set(ours) & set(view), key=str):
        r, v = ours[key], view[key]
        what = "%s rank %s %r" % (os.path.basename(path), key[0], key[1])
        ck.eq(what + " count", r["count"], v["count"])
        ck.eq(what + " total", r["total_us"], D(v["total_ns"]) / 1000)
        ck.eq(what + " min", r["min_us"], D(v["min_ns"]) / 1000)
        ck.eq(what + " max", r["max_us"], D(v["max_ns"]) / 1000)
        ck.eq(what + " mean", r["mean_us"], D(str(v["mean_ns"])) / 1000, ROUNDED)
        ck.eq(what + " stddev", r["stddev_us"], D(str(v["stddev_ns"])) / 1000, ROUNDED)
    return len(view) + compare_launches(ck, binary, path)


def compare_launches(ck, binary, path):
    view = sql(binary, path, "SELECT * FROM launches")
    ranks = [r["rank"] for r in sql(binary, path, "SELECT coalesce(rank, id - 1) AS rank FROM traces")]
    ours = {}
    for rank in ranks:  # `launches` prints no rank: one run per rank
        args = ["launches", "--each", path] + (["--rank", str(rank)] if len(ranks) > 1 else [])
        for r in oc.run_json(binary, args):
            ours[(rank, r["correlation"])] = r
    got = {(r["rank"], r["correlation"]): r for r in view}
    for key in sorted(set(ours) ^ set(got), key=str):
        ck.fail("%s launch %s: in %s only" % (path, key, "launches" if key in ours else "the view"))
    for key in sorted(set(ours) & set(got), key=str):
        r, v = ours[key], got[key]
        what = "%s rank %s launch %s" % (os.path.basename(path), key[0], key[1])
        if (r["call"], r["work"]) != (v["call"], v["work"]):
            ck.fail("%s: launches %s -> %s, the view %s -> %s" % (what, r["call"], r["work"], v["call"], v["work"]))
        ck.eq(what + " cpu", r["cpu_duration"], D(v["cpu_ns"]) / 1000)
        ck.eq(what + " device", r["gpu_duration"], D(v["device_ns"]) / 1000)
        ck.eq(what + " delay", r["launch_delay"], D(v["delay_ns"]) / 1000)
    return len(view)


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary = sys.argv[1]
    ck = oc.Check(source="kernels")
    rows = 0
    with tempfile.TemporaryDirectory() as cache:
        os.environ["NEURON_STATS_CACHE_DIR"] = cache
        paths = [p for p in (oc.trace_or_skip(binary, a) for a in sys.argv[2:]) if p]
        if not paths:
            return 77
        for path in paths:
            rows += compare(ck, binary, path)
    return ck.finish("kernel_stats and launches equal kernels and launches --each: %d values of %d rows on %d inputs" % (ck.n, rows, len(paths)))


if __name__ == "__main__":
    sys.exit(main())
