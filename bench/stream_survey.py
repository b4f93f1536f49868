#!/usr/bin/env python3
"""What a streaming `report` would have to hold, measured on real traces.

    python3 bench/stream_survey.py [TRACE|DIR ...]   # default: ../shared/corpus

A report that keeps only what its result needs (aggregating per op as the
input streams) must see, for every op it adds to a row, everything the op's
row values depend on (docs/performance.md "Memory"): its CPU children (the
self times), the [memory] records in its span, and the device work it and
its descendants launched (its device total, a double PyTorch sums in a fixed
order). The rows' doubles are sums in PyTorch's order, (start, -end) over
all threads, so the ops must also reach their rows in that order. This
script replays each trace's events in file order and prints, per trace:

  ops, runtime, device   the slices kept: PyTorch's ops (cpu_op, user_annotation),
           runtime calls (cuda_runtime, ...), device work (kernel, memcpy, ...)
  unsorted in thread     ops that start before the op before them on their thread
  out of order overall   ops that start before the op before them in the file (all
           threads), and the reorder window that sorting them by start would need
           (max(file position - sorted position), in ops)
  launches open (peak)   the most runtime calls read whose device work (same
           correlation) is not all read yet
  ops waiting for device work (peak)   the most ops that must stay in memory at
           once until their device totals are known: an op, and every ancestor,
           waits for the last device slice launched below it
  time origin at         where the first "PyTorch Profiler" span (PyTorch's time
           origin, which every double depends on) is, as a share of the
           traceEvents ("-": none; the origin is then the smallest CPU start)
  one pass?              "one pass" when none of the above stops a single pass in
           file order from adding each op to its row as soon as it closes;
           otherwise why not

It reads whole files with json (for the corpus' small traces; a 100 MB
trace takes about 2 GB of Python memory).
"""

import gzip
import json
import os
import sys

HOST_OPS = {"cpu_op", "user_annotation", "Operator"}
RUNTIME = {"cuda_runtime", "cuda_driver", "xpu_runtime", "xpu_driver", "mtia_runtime",
           "privateuse1_runtime", "privateuse1_driver", "glow_runtime", "Runtime"}
HOST_OTHER = {"cuda_event", "cpu_instant_event", "overhead", "external_correlation"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation",
          "cuda_profiler_range", "mtia_ccp_events", "mtia_insight", "mtia_counters", "hpu_op",
          "Kernel", "Memcpy", "Memset", "gpu_user_Annotation"}
LAUNCH_TARGETS = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "Kernel", "Memcpy", "Memset"}


def load(path):
    opener = gzip.open if path.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8", errors="replace") as f:
        doc = json.load(f)
    return doc if isinstance(doc, list) else doc.get("traceEvents", [])


def ns(v):
    try:
        return int(round(float(v) * 1000))
    except (TypeError, ValueError):
        return None


def reorder_window(keys):
    """max(file position - sorted position) over the items (0: sorted)."""
    order = sorted(range(len(keys)), key=lambda i: (keys[i], i))
    return max((i - rank for rank, i in enumerate(order)), default=0)


def peak_open(intervals):
    """The most [a, b] intervals (file positions) open at once."""
    edges = sorted([(a, 1) for a, b in intervals] + [(b + 1, -1) for a, b in intervals])
    peak = run = 0
    for _, d in edges:
        run += d
        peak = max(peak, run)
    return peak


def enclosing_ops(host, ops):
    """Per runtime call (host index), the innermost op of its thread whose
    span contains its start; per op, its parent op (or None)."""
    by_thread = {}
    for h in host:
        by_thread.setdefault(h["thread"], []).append(h)
    launcher, parent = {}, {}
    for items in by_thread.values():
        items.sort(key=lambda h: (h["ts"], -(h["ts"] + h["dur"]) if h["op"] else 1, h["pos"]))
        stack = []
        for h in items:
            while stack and h["ts"] > stack[-1]["ts"] + stack[-1]["dur"]:
                stack.pop()
            if h["op"]:
                parent[h["pos"]] = stack[-1]["pos"] if stack else None
                stack.append(h)
            elif h["runtime"]:
                launcher[h["pos"]] = stack[-1]["pos"] if stack else None
    return launcher, parent


def inversions(keys):
    """Items whose key is smaller than the one before them."""
    return sum(1 for a, b in zip(keys, keys[1:]) if b < a)


def survey(path):
    events = load(path)
    host, dev, t0_pos, base_time_last = [], [], None, False
    for pos, ev in enumerate(events):
        if not isinstance(ev, dict):
            continue
        cat, ph = ev.get("cat"), ev.get("ph")
        if cat == "Trace" and str(ev.get("name", "")).startswith("PyTorch Profiler") and t0_pos is None:
            t0_pos = pos
        if ph != "X" or ns(ev.get("ts")) is None:
            continue
        args = ev.get("args") if isinstance(ev.get("args"), dict) else {}
        item = {"pos": pos, "ts": ns(ev["ts"]), "dur": ns(ev.get("dur", 0)) or 0,
                "thread": (str(ev.get("pid")), str(ev.get("tid"))), "corr": args.get("correlation"),
                "op": cat in HOST_OPS, "runtime": cat in RUNTIME, "launch": cat in LAUNCH_TARGETS}
        if cat in HOST_OPS or cat in RUNTIME or cat in HOST_OTHER:
            host.append(item)
        elif cat in DEVICE:
            dev.append(item)
    ops = [h for h in host if h["op"]]
    by_thread = {}
    for h in ops:
        by_thread.setdefault(h["thread"], []).append(h["ts"])
    first_op = ops[0]["pos"] if ops else len(events)

    # launches: runtime call -> its device work (by correlation)
    rt_of_corr = {h["corr"]: h for h in host if h["runtime"] and h["corr"] is not None}
    last_dev = {}
    for d in dev:
        if d["launch"] and d["corr"] in rt_of_corr:
            last_dev[d["corr"]] = max(d["pos"], last_dev.get(d["corr"], -1))
    launches = [(rt_of_corr[c]["pos"], p) for c, p in last_dev.items() if p > rt_of_corr[c]["pos"]]

    # ops held until their device totals are known
    launcher, parent = enclosing_ops(host, ops)
    release = {h["pos"]: h["pos"] for h in ops}
    for c, p in last_dev.items():
        op = launcher.get(rt_of_corr[c]["pos"])
        while op is not None and release[op] < p:
            release[op] = p
            op = parent[op]
    held = [(a, b) for a, b in release.items() if b > a]
    return {
        "ops": len(ops), "runtime": sum(h["runtime"] for h in host), "dev": len(dev),
        "thr_inv": sum(inversions(v) for v in by_thread.values()),
        "all_inv": inversions([h["ts"] for h in ops]), "reorder": reorder_window([h["ts"] for h in ops]),
        "launch_peak": peak_open(launches), "launches": len(last_dev),
        "held_peak": peak_open(held), "devices_after_ops": bool(dev) and bool(ops) and dev[0]["pos"] > ops[-1]["pos"],
        "t0_pos": None if t0_pos is None else t0_pos / max(1, len(events)),
        "t0_after_ops": t0_pos is not None and t0_pos > first_op,
    }


def verdict(s):
    """Why one pass in file order cannot make the rows exactly (PyTorch's doubles, in its order)."""
    why = []
    if s["t0_after_ops"]:
        why.append("time origin after the ops")
    if s["thr_inv"]:
        why.append("ops unsorted in a thread")
    elif s["all_inv"]:
        why.append("threads interleaved out of order")
    if s["held_peak"]:
        why.append("device work after its ops")
    return "; ".join(why) or "one pass"


def traces(args):
    for a in args:
        if os.path.isdir(a):
            for root, _, files in sorted(os.walk(a)):
                for f in sorted(files):
                    if f.endswith((".json", ".json.gz")) and "neff" not in f:
                        yield os.path.join(root, f)
        else:
            yield a


def main():
    args = sys.argv[1:] or [os.path.join(os.path.dirname(__file__), "..", "..", "shared", "corpus")]
    print("| trace | ops | runtime | device | unsorted in thread | out of order overall (window) "
          "| launches open (peak) | ops waiting for device work (peak) | time origin at | one pass? |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---|")
    for path in traces(args):
        try:
            s = survey(path)
        except (OSError, ValueError, EOFError) as e:
            print(f"| {path} | unreadable: {type(e).__name__} | | | | | | | | |")
            continue
        held = f"{s['held_peak']} ({100 * s['held_peak'] / s['ops']:.0f}%)" if s["ops"] else "0"
        t0 = "-" if s["t0_pos"] is None else f"{s['t0_pos']:.2f}"
        name = os.path.relpath(path, args[0]) if os.path.isdir(args[0]) else path
        print(f"| {name} | {s['ops']} | {s['runtime']} | {s['dev']} | {s['thr_inv']} | {s['all_inv']} ({s['reorder']}) "
              f"| {s['launch_peak']} of {s['launches']} | {held} | {t0} | {verdict(s)} |", flush=True)


if __name__ == "__main__":
    main()
