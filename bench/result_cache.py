#!/usr/bin/env python3
"""The result cache's costs (docs/performance.md "Result cache (issue 22)").

For each binary (this build, and optionally a baseline build such as the
one before the result cache), on one trace, alternating so that load on a
shared machine hits all variants alike, RUNS times each:

* `report --no-cache TRACE`                 (no cache at all)
* `report TRACE` with an empty cache folder (the first run: a miss, which
  writes the cache)
* `report TRACE` again on that folder       (a repeat: a hit)

Prints CPU seconds (user + sys, of the child) and wall seconds, median and
min per variant, and the cache folder's size after the first run. CPU
seconds are what to compare on a noisy machine.

usage: bench/result_cache.py TRACE BINARY [BASELINE_BINARY] [--runs N]
"""
import argparse
import os
import resource
import shutil
import statistics
import subprocess
import tempfile
import time


def timed(args, env):
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.perf_counter()
    p = subprocess.run(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=env)
    wall = time.perf_counter() - t0
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        raise SystemExit("%s: exit %d %s" % (" ".join(args), p.returncode, p.stderr.decode()[-300:]))
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return cpu, wall


def folder_size(path):
    return sum(os.path.getsize(os.path.join(path, n)) for n in os.listdir(path)
               if os.path.isfile(os.path.join(path, n)))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("binaries", nargs="+")
    ap.add_argument("--runs", type=int, default=5)
    a = ap.parse_args()
    tmp = tempfile.mkdtemp(prefix="ns-rcache-")
    results = {}
    sizes = {}
    try:
        for _ in range(a.runs):
            for b in a.binaries:
                cache = os.path.join(tmp, "cache")
                env = dict(os.environ, NEURON_STATS_CACHE_DIR=cache, LC_ALL="C")
                shutil.rmtree(cache, ignore_errors=True)
                results.setdefault((b, "--no-cache"), []).append(timed([b, a.trace, "--no-cache"], env))
                results.setdefault((b, "first run (miss)"), []).append(timed([b, a.trace], env))
                sizes[b] = folder_size(cache)
                results.setdefault((b, "repeat (hit)"), []).append(timed([b, a.trace], env))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("load average: %.2f %.2f %.2f" % os.getloadavg())
    print("| binary | run | CPU s median | CPU s min | wall s median |")
    print("|---|---|---|---|---|")
    for (b, what), v in results.items():
        cpu = [c for c, _ in v]
        wall = [w for _, w in v]
        print("| %s | %s | %.3f | %.3f | %.3f |" % (b, what, statistics.median(cpu), min(cpu),
                                                  statistics.median(wall)))
    for b, s in sizes.items():
        print("cache folder after the first run, %s: %d bytes" % (b, s))


if __name__ == "__main__":
    main()
