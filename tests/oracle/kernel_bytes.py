#!/usr/bin/env python3
"""`neuron-stats kernels --bytes` against the trace's own memcpy/memset args
(tests/oracle/meson.build).

    kernel_bytes.py NEURON_STATS PATH

Reads the traces of PATH (a trace, or a folder of one trace per rank)
here, with json, and per rank and name of the gpu_memcpy/gpu_memset
(legacy: Memcpy/Memset) events on a stream sums what Kineto wrote: count,
time, args "bytes" (total, min, max). Those must equal neuron-stats'
exactly, and its GB/s must be the total bytes over the total time in ns
(nsys's cuda_gpu_mem_size_sum over cuda_gpu_mem_time_sum) to the 0.001.
It also checks that definition against the trace's per-event args "memory
bandwidth (GB/s)": each is the event's bytes over a duration in ns that
rounds to its whole-µs dur (Kineto takes CUPTI's ns times, then writes
dur in µs), to the 0.001 Kineto rounds it to. (Their mean weighted by the
µs durations is not our figure: on HTA's alexnet trace the 3 memsets'
args give 2.478 GB/s, their 21,760 bytes over their 8 µs 2.720.) Only traces without two
distinct ProfilerStep#N (HTA's last-step filter does not apply there). A
missing PATH is a skip (77).
"""
import decimal
import gzip
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402

D = decimal.Decimal
CATS = {"gpu_memcpy", "gpu_memset", "Memcpy", "Memset"}


def bw_fits(nbytes, dur_ns, bw):
    """Whether Kineto's bandwidth arg is bytes / ns (GB/s) of a duration
    that rounds to the event's whole-µs dur (CUPTI's ns end - start; the
    trace keeps µs), the arg rounded to 0.001."""
    lo = D(nbytes) / (dur_ns + 1000) - D("0.0005")
    hi = D(nbytes) / (dur_ns - 1000) + D("0.0005") if dur_ns > 1000 else D("Infinity")
    return lo <= bw <= hi


def rank_rows(path, position):
    with (gzip.open if path.endswith(".gz") else open)(path, "rb") as f:
        doc = json.load(f, parse_float=D)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    steps = {e.get("name") for e in events if str(e.get("name", "")).startswith("ProfilerStep#")}
    if len(steps) > 1:
        raise SystemExit("%s: two ProfilerSteps or more: not a trace for this test" % path)
    rank = doc.get("distributedInfo", {}).get("rank", position) if isinstance(doc, dict) else position
    rows = {}
    for e in events:
        args = e.get("args", {})
        if e.get("ph") != "X" or e.get("cat") not in CATS or args.get("stream", -1) == -1 or "bytes" not in args:
            continue
        dur_ns = D(str(e.get("dur", 0))) * 1000
        r = rows.setdefault((rank, e["name"]), {"count": 0, "ns": D(0), "bytes": [], "bw_off": []})
        r["count"] += 1
        r["ns"] += dur_ns
        r["bytes"].append(args["bytes"])
        bw = args.get("memory bandwidth (GB/s)")
        if bw is not None and not bw_fits(args["bytes"], dur_ns, D(str(bw))):
            r["bw_off"].append((e["ts"], args["bytes"], e.get("dur"), bw))
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, path = sys.argv[1], corpus.resolve(sys.argv[2], sys.argv[1])
    if not os.path.exists(path):
        print(corpus.skip_reason(path))
        return 77
    files = sorted(os.path.join(path, n) for n in os.listdir(path)) if os.path.isdir(path) else [path]
    want = {}
    for i, f in enumerate(files):
        want.update(rank_rows(f, i))
    c = subprocess.run([binary, "kernels", "--bytes", "--no-cache", "-f", "json", path], capture_output=True)
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    got = {(r["rank"], r["name"]): r for r in json.loads(c.stdout, parse_float=D)}
    fails = []
    if set(got) != set(want):
        fails.append("rows: trace %s, neuron-stats %s" % (sorted(want), sorted(got)))
    for key in sorted(set(got) & set(want)):
        w, g = want[key], got[key]
        exact = {"count": w["count"], "total_us": w["ns"] / 1000, "bytes": sum(w["bytes"]),
                 "min_bytes": min(w["bytes"]), "max_bytes": max(w["bytes"])}
        for field, value in exact.items():
            if D(value) != D(g[field]):
                fails.append("%s %s: trace %s, neuron-stats %s" % (key, field, value, g[field]))
        gbps = (D(sum(w["bytes"])) / w["ns"]).quantize(D("0.001")) if w["ns"] else D(0)
        if gbps != g["gb_per_s"]:
            fails.append("%s GB/s: bytes / ns %s, neuron-stats %s" % (key, gbps, g["gb_per_s"]))
        for off in w["bw_off"]:
            fails.append("%s: the event at %s (%s bytes, dur %s us) has bandwidth %s GB/s, not bytes / ns"
                         % ((key,) + off))
    if fails:
        print("\n".join(fails[:30]))
        print("FAIL: %d differences" % len(fails))
        return 1
    print("ok: %d memcpy/memset rows equal the trace's own sums" % len(got))
    return 0


if __name__ == "__main__":
    sys.exit(main())
