#!/usr/bin/env python3
"""Generate the damaged-input test traces (docs/testing.md "Damaged input").

    python3 tools/gen_damaged.py [--out tests/golden/inputs/damaged] [--check]

Every file is derived from one small, valid era-C Kineto trace (BASE, written
as base.json) by a named damage; each damage has one defined behaviour, which
a golden case tests/golden/cases/damaged-NAME/ pins down (stdout, stderr and
the exit code). The output is byte-identical on every run (no clock, no
randomness without a fixed seed); --check regenerates into a temporary
folder and fails if anything differs from what is on disk.

tests/reliability/test_truncation.py imports this module for BASE and the
event offsets (it cuts the base trace at every byte).
"""

import argparse
import filecmp
import gzip
import json
import os
import random
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
DEFAULT_OUT = os.path.join(SRC, "tests", "golden", "inputs", "damaged")

BASE_TIME_NS = 1767225600000000000
PID, TID = 4242, 4242


def _us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def base_events():
    """The events of BASE, as (dict) in file order: one profiler step of a
    CUDA-style trace with every kind of record the parser interprets."""
    ev = []

    def x(cat, name, ts, dur, pid=PID, tid=TID, args=None):
        e = {"ph": "X", "cat": cat, "name": name, "pid": pid, "tid": tid, "ts": ts, "dur": dur}
        if args is not None:
            e["args"] = args
        ev.append(e)

    x("user_annotation", "ProfilerStep#3", 10000, 90000, args={"External id": 1, "Record function id": 0})
    x("cpu_op", "aten::linear", 12000, 30000,
      args={"External id": 2, "Record function id": 0, "Sequence number": 7, "Fwd thread id": 0,
            "Input Dims": [[8, 256], [512, 256], [512]], "Input type": ["float", "float", "float"]})
    x("cpu_op", "aten::addmm", 14000, 20000,
      args={"External id": 3, "Input Dims": [[512], [8, 256], [256, 512], [], []],
            "Input type": ["float", "float", "float", "Scalar", "Scalar"]})
    x("cuda_runtime", "cudaLaunchKernel", 20000, 5500, args={"External id": 3, "correlation": 101})
    ev.append({"ph": "s", "id": 101, "pid": PID, "tid": TID, "ts": 20000, "cat": "ac2g", "name": "ac2g"})
    x("cpu_op", "aten::relu", 46000, 8000, args={"External id": 4, "Input Dims": [[8, 512]], "Input type": ["float"]})
    x("cpu_op", "aten::clamp_min", 47000, 6000, args={"External id": 5, "Input Dims": [[8, 512], []]})
    x("cuda_runtime", "cudaLaunchKernel", 49000, 3000, args={"External id": 5, "correlation": 102})
    ev.append({"ph": "s", "id": 102, "pid": PID, "tid": TID, "ts": 49000, "cat": "ac2g", "name": "ac2g"})
    ev.append({"ph": "i", "s": "t", "cat": "cpu_instant_event", "name": "[memory]", "pid": PID, "tid": TID,
               "ts": 50000, "args": {"Total Reserved": 2097152, "Total Allocated": 16384, "Bytes": 16384,
                                      "Addr": 140000000, "Device Type": 1, "Device Id": 0}})
    x("cpu_op", "aten::sum", 60000, 25000, args={"External id": 6, "Input Dims": [[8, 512]], "Input type": ["float"]})
    x("cuda_runtime", "cudaLaunchKernel", 62000, 4000, args={"External id": 6, "correlation": 103})
    ev.append({"ph": "s", "id": 103, "pid": PID, "tid": TID, "ts": 62000, "cat": "ac2g", "name": "ac2g"})
    x("cuda_runtime", "cudaDeviceSynchronize", 88000, 9000, args={"correlation": 104})
    # device side
    x("kernel", "ampere_sgemm_64x32_sliced1x4_tn", 30000, 12000, pid=0, tid=7,
      args={"External id": 3, "correlation": 101, "device": 0, "stream": 7})
    ev.append({"ph": "f", "id": 101, "pid": 0, "tid": 7, "ts": 30000, "cat": "ac2g", "name": "ac2g", "bp": "e"})
    x("kernel", "void at::native::vectorized_elementwise_kernel<4, at::native::clamp_min>", 52000, 2500, pid=0, tid=7,
      args={"External id": 5, "correlation": 102, "device": 0, "stream": 7})
    ev.append({"ph": "f", "id": 102, "pid": 0, "tid": 7, "ts": 52000, "cat": "ac2g", "name": "ac2g", "bp": "e"})
    x("kernel", "void at::native::reduce_kernel<512, 1>", 70000, 6000, pid=0, tid=7,
      args={"External id": 6, "correlation": 103, "device": 0, "stream": 7})
    ev.append({"ph": "f", "id": 103, "pid": 0, "tid": 7, "ts": 70000, "cat": "ac2g", "name": "ac2g", "bp": "e"})
    ev.append({"ph": "M", "name": "thread_name", "pid": PID, "tid": TID, "args": {"name": "thread 4242 (python)"}})
    ev.append({"ph": "M", "name": "thread_name", "pid": 0, "tid": 7, "args": {"name": "stream 7"}})
    x("Trace", "PyTorch Profiler (0)", 9000, 95000, pid="Spans", tid="PyTorch Profiler",
      args={"Op count": 0})
    return ev


def event_text(e):
    """One event as Kineto lays it out (times in µs with 3 decimals)."""
    parts = []
    for k, v in e.items():
        if k in ("ts", "dur"):
            parts.append('"%s": %s' % (k, _us(v)))
        else:
            parts.append("%s: %s" % (json.dumps(k), json.dumps(v, separators=(", ", ": "))))
    return "  {\n    " + ", ".join(parts) + "\n  }"


HEAD = ('{\n  "schemaVersion": 1,\n  "deviceProperties": [\n    {"id": 0, "name": "NVIDIA A100-SXM4-80GB", '
        '"totalGlobalMem": 85198045184, "computeMajor": 8, "computeMinor": 0}\n  ],\n'
        '  "cupti_version": 24,\n  "cuda_runtime_version": 12040,\n'
        '  "distributedInfo": {"backend": "nccl", "rank": 0, "world_size": 1},\n'
        '  "traceEvents": [\n')
TAIL = ('\n  ],\n  "traceName": "damaged/base.json",\n  "displayTimeUnit": "ms",\n'
        '  "baseTimeNanoseconds": %d\n}\n' % BASE_TIME_NS)


def build(events):
    """The trace text and [(start, end)] byte spans of each event object."""
    parts = [HEAD.encode()]
    size = len(parts[0])
    spans = []
    for i, e in enumerate(events):
        text = ((",\n" if i else "") + event_text(e)).encode()
        parts.append(text)
        end = size + len(text)
        spans.append((end - len(event_text(e).encode()) + 2, end))  # from the '{' after the indent
        size = end
    parts.append(TAIL.encode())
    return b"".join(parts), spans


BASE, BASE_SPANS = build(base_events())


def long_trace(steps):
    """The bytes of a trace of long_events(steps)."""
    return build(long_events(steps))[0]


def long_events(steps=40):
    """BASE's step repeated: ~145 KB, so gzip and zstd streams hold several
    blocks and a cut one still yields complete events. Each step has its
    own ids, as PyTorch gives each op its own: External ids 1..6 + 10 k,
    CUPTI correlations (and flow ids) 101..104 + 1000 + 10 k from step 1
    on, so that no correlation is also an External id (PyTorch would give
    that op's kernels to the runtime call too)."""
    one = base_events()
    evs = []
    for k in range(steps):
        for e in one:
            if e["ph"] == "M" or e["cat"] == "Trace":
                if k == 0:
                    evs.append(e)
                continue
            e = dict(e, ts=e["ts"] + k * 100000)
            if k and "id" in e:
                e["id"] += 1000 + 10 * k
            if k and "args" in e and "External id" in e["args"]:
                e["args"] = dict(e["args"], **{"External id": e["args"]["External id"] + 10 * k})
            if k and "args" in e and "correlation" in e["args"]:
                e["args"] = dict(e["args"], correlation=e["args"]["correlation"] + 1000 + 10 * k)
            if e["name"].startswith("ProfilerStep#"):
                e["name"] = "ProfilerStep#%d" % (3 + k)
            evs.append(e)
    return evs


LONG = build(long_events())[0]


def gz(data):
    return gzip.compress(data, compresslevel=9, mtime=0)


def zst(data):
    # the zstd CLI's defaults (content checksum on), as users compress traces;
    # --check compares bytes, so it wants the same zstd version (1.5.x)
    p = subprocess.run(["zstd", "-q", "-c", "-19"], input=data, capture_output=True, check=True)
    return p.stdout


def with_event(base_evs, index, patch):
    evs = [dict(e) for e in base_evs]
    patch(evs[index])
    return evs


def damaged():
    """name -> bytes, in a fixed order."""
    evs = base_events()
    files = {"base.json": BASE}
    mid = BASE_SPANS[6][0] + (BASE_SPANS[6][1] - BASE_SPANS[6][0]) // 2

    # --- cut off (a job killed while writing) ---
    files["truncated-mid-event.json"] = BASE[:mid]
    files["truncated-after-comma.json"] = BASE[:BASE_SPANS[9][1] + 2]
    files["truncated-mid-string.json"] = BASE[:BASE_SPANS[2][0] + 40]
    files["truncated-in-header.json"] = BASE[:len(HEAD) - 40]
    files["truncated-after-events.json"] = BASE[:len(BASE) - 30]
    files["truncated-nul-tail.json"] = BASE[:BASE_SPANS[9][1] + 1] + b"\0" * 4096
    legacy = ("[\n" + ",\n".join(event_text(e) for e in evs[:12]) + "\n]\n").encode()
    files["truncated-legacy-array.json"] = legacy[:len(legacy) * 2 // 3]
    files["truncated.json.gz"] = gz(LONG)[: len(gz(LONG)) * 3 // 5]
    files["truncated-trailer.json.gz"] = gz(BASE)[:-4]
    files["truncated.json.zst"] = zst(LONG)[: len(zst(LONG)) * 3 // 5]
    files["truncated-tiny.json.zst"] = zst(BASE)[: len(zst(BASE)) * 3 // 5]

    # --- corrupt compressed streams ---
    g = bytearray(gz(BASE))
    g[len(g) // 2] ^= 0x55
    g[len(g) // 2 + 1] ^= 0xaa
    files["corrupt-deflate.json.gz"] = bytes(g)
    g = bytearray(gz(BASE))
    g[-8] ^= 0xff  # CRC32
    files["corrupt-crc.json.gz"] = bytes(g)
    files["trailing-garbage.json.gz"] = gz(BASE) + b"garbage"
    files["trailing-garbage.json"] = BASE + b'{"traceEvents": []}\n'
    files["trailing-nul-padding.json.gz"] = gz(BASE) + b"\0" * 512
    z = bytearray(zst(BASE))
    z[len(z) // 2] ^= 0x55
    z[len(z) // 2 + 3] ^= 0xaa
    files["corrupt.json.zst"] = bytes(z)

    # --- text: encoding, control characters ---
    bad = BASE.replace(b'"aten::relu"', b'"aten::relu\xff\xfe"', 1)
    bad = bad.replace(b'"aten::sum"', b'"aten::s\xc0\xafm\xed\xa0\x80"', 1)  # overlong '/', a surrogate
    bad = bad.replace(b'"aten::addmm"', b'"aten::addmm\xe2\x82"', 1)  # a cut 3-byte sequence
    bad = bad.replace(b'"cudaDeviceSynchronize"', b'"cuda\\u0000Sync\\ud800"', 1)  # NUL, lone surrogate
    files["invalid-utf8.json"] = bad
    ctl = BASE.replace(b'"aten::relu"', b'"aten::relu\\u0001\\u001b[31m"', 1)
    ctl = ctl.replace(b'"aten::sum"', b'"aten::sum\\ttab"', 1)  # a TAB, escaped
    ctl = ctl.replace(b'"aten::clamp_min"', b'"aten::clamp\\nmin"', 1)
    files["control-chars.json"] = ctl
    files["valid-utf8.json"] = BASE.replace(b'"aten::relu"', '"aten::relu_\u00e9\u4e2d\U0001F600"'.encode(), 1)

    # --- numbers ---
    files["ts-beyond-64-bits.json"] = BASE.replace(b'"ts": 46.000', b'"ts": 184467440737095516160.000', 1)
    files["ts-beyond-range.json"] = BASE.replace(b'"ts": 46.000', b'"ts": 9223372036854775.807', 1)
    files["id-beyond-64-bits.json"] = BASE.replace(b'"External id": 4,', b'"External id": 18446744073709551616,', 1)
    files["base-time-beyond-range.json"] = BASE.replace(
        b'"baseTimeNanoseconds": %d' % BASE_TIME_NS, b'"baseTimeNanoseconds": 4611686018427387904', 1)
    files["pid-beyond-64-bits.json"] = BASE.replace(b'"pid": 0, "tid": 7', b'"pid": 99999999999999999999, "tid": 7')
    files["ts-nan.json"] = BASE.replace(b'"ts": 46.000', b'"ts": NaN', 1)
    files["ts-infinity.json"] = BASE.replace(b'"ts": 46.000', b'"ts": -Infinity', 1)
    files["dur-nan.json"] = BASE.replace(b'"dur": 8.000', b'"dur": NaN', 1)
    files["dur-infinity.json"] = BASE.replace(b'"dur": 8.000', b'"dur": Infinity', 1)
    files["nonfinite-elsewhere.json"] = (
        BASE.replace(b'"External id": 4,', b'"External id": NaN,', 1)
            .replace(b'"correlation": 104', b'"correlation": -Infinity', 1)
            .replace(b'"Op count": 0', b'"Op count": Infinity, "warps per SM": "inf"', 1))
    huge = b'"ts": 12.000, "dur": 36028797018963.968'  # 2^55 ns each: the third passes 2^56
    files["dur-sum-overflow.json"] = (BASE.replace(b'"ts": 12.000, "dur": 30.000', huge, 1)
                                      .replace(b'"ts": 14.000, "dur": 20.000', huge, 1)
                                      .replace(b'"ts": 46.000, "dur": 8.000', huge, 1))
    files["dur-negative.json"] = BASE.replace(b'"dur": 8.000', b'"dur": -5.000', 1)
    files["dur-missing.json"] = BASE.replace(b', "dur": 8.000', b'', 1)

    # --- structure ---
    files["duplicate-keys.json"] = (
        BASE.replace(b'"name": "aten::relu"', b'"name": "aten::first_name", "name": "aten::relu"', 1)
            .replace(b'"dur": 25.000', b'"dur": 1.000, "dur": 25.000', 1)
            .replace(b'"args": {"External id": 4,', b'"args": {"External id": 999}, "args": {"External id": 4,', 1)
            .replace(b'"displayTimeUnit": "ms"', b'"displayTimeUnit": "us", "displayTimeUnit": "ms"', 1))
    files["duplicate-traceevents.json"] = BASE.replace(
        b'  "traceName"', b'  "traceEvents": [],\n  "traceName"', 1)
    deep_ok = "[" * 200 + "]" * 200
    deep_bad = "[" * 300 + "]" * 300
    files["deep-nesting-ok.json"] = BASE.replace(b'"Op count": 0', ('"Op count": 0, "deep": %s' % deep_ok).encode(), 1)
    files["deep-nesting-args.json"] = BASE.replace(b'"Op count": 0', ('"Op count": 0, "deep": %s' % deep_bad).encode(), 1)
    files["deep-nesting-top.json"] = BASE.replace(b'"traceName"', ('"deep": %s,\n  "traceName"' % deep_bad).encode(), 1)
    long_name = "aten::" + "x" * 100000
    files["long-name.json"] = BASE.replace(b'"aten::relu"', json.dumps(long_name).encode(), 1)
    shuffled = list(evs)
    random.Random(5).shuffle(shuffled)
    files["out-of-order.json"] = build(shuffled)[0]
    files["events-not-objects.json"] = BASE.replace(b'  {\n    "ph": "X", "cat": "cpu_op", "name": "aten::relu"',
                                                    b'  42,\n  {\n    "ph": "X", "cat": "cpu_op", "name": "aten::relu"', 1)
    files["empty-value.json"] = BASE.replace(b'"cupti_version": 24', b'"cupti_version": ', 1)

    # --- damage inside a complete file (a flipped bit, a lost byte): never a cut ---
    relu = b'"name": "aten::relu", "pid"'
    files["missing-quote.json"] = BASE.replace(relu, b'"name": "aten::relu, "pid"', 1)
    files["quote-nul.json"] = BASE.replace(relu, b'"name": "aten::relu\0, "pid"', 1)
    files["raw-control-in-string.json"] = BASE.replace(b'"aten::sum"', b'"aten::sum\ttab"', 1)
    files["brace-flipped.json"] = BASE.replace(  # '}' ^ 0x20 is ']'
        b'"Input type": ["float"]}\n  },\n  {\n    "ph": "X", "cat": "cpu_op", "name": "aten::clamp_min"',
        b'"Input type": ["float"]]\n  },\n  {\n    "ph": "X", "cat": "cpu_op", "name": "aten::clamp_min"', 1)
    last = BASE_SPANS[-1][0]
    files["missing-quote-last-event.json"] = BASE[:last] + BASE[last:].replace(b'"name": "', b'"name": ', 1)
    files["missing-quote-then-cut.json"] = files["missing-quote.json"][:BASE_SPANS[12][0] + 20]

    # --- hostile sizes ---
    bomb = b'{"traceEvents": [], "pad": "' + b" " * (64 << 20) + b'"}'
    files["bomb.json.zst"] = zst(bomb)
    return files


def write_all(out):
    os.makedirs(out, exist_ok=True)
    files = damaged()
    for name, data in files.items():
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
    return files


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", default=DEFAULT_OUT)
    ap.add_argument("--check", action="store_true")
    a = ap.parse_args()
    if a.check:
        with tempfile.TemporaryDirectory() as tmp:
            files = write_all(tmp)
            bad = [n for n in files if not os.path.exists(os.path.join(a.out, n))
                   or not filecmp.cmp(os.path.join(tmp, n), os.path.join(a.out, n), shallow=False)]
            if bad:
                sys.exit("gen_damaged: out of date: %s (run python3 tools/gen_damaged.py)" % ", ".join(bad))
        print("gen_damaged: %d files up to date" % len(files))
        return
    if os.path.isdir(a.out):  # start clean, but keep the README
        for name in os.listdir(a.out):
            if name != "README.md":
                os.remove(os.path.join(a.out, name))
    files = write_all(a.out)
    print("gen_damaged: wrote %d files to %s" % (len(files), os.path.relpath(a.out, SRC)))


if __name__ == "__main__":
    main()
