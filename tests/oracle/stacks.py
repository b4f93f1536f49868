#!/usr/bin/env python3
"""Folded stacks from the reference implementation (key_averages.py), to
check `neuron-stats stacks` against (tests/oracle/meson.build).

    stacks.py NEURON_STATS TRACE [--value cpu|device]
    stacks.py NEURON_STATS TRACE --tree

computes the folded stacks of TRACE from the reference's FunctionEvents
(its own tree: parents after _remove_dup_nodes, spans in ns, the op each
device event is attributed to), runs `NEURON_STATS stacks --no-cache TRACE
[--value ...]`, and passes when both print the same bytes. The rules
(docs/report.md "stacks"): a CPU event's frame path is its chain of parents'
names; its value its self CPU time (span minus its children's spans); a
device event is a leaf under the op it is attributed to (a removed op's
place taken by the parent it merged into), valued by its span; paths are
merged, lines with a value <= 0 left out, and lines sorted by their frames
(name bytes; an op before a device leaf of the same name). With --tree,
the call tree (`stacks -f json`) is checked instead: per path, the calls,
the total and self CPU time of each op and the device time of each device
leaf. (An op's device totals are PyTorch's, which the key_averages oracle
checks; they are not recomputed here.) TRACE may start
with @CORPUS@ as in run_one.py; a missing corpus trace is a skip (77).
"""
import decimal
import difflib
import json
import os
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402
import key_averages as ka  # noqa: E402


def frame(name):
    assert not any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in name), name
    return name.replace(";", ":")


def folded(path, value):
    tr = ka.Trace(ka.load_trace(path))
    events = ka.build_tree(tr.events)
    kept = set(id(ev) for ev in events)
    sums = {}

    def cpu_path(ev):
        out = []
        while ev is not None:
            out.append((ev.name.encode(), 0))
            ev = ev.parent
        return out[::-1]

    for ev in events:
        if ev.is_async:
            continue
        if ev.device_type == ka.CPU:
            if value != "cpu":
                continue
            v = (ev.end_ns - ev.start_ns) - sum(c.end_ns - c.start_ns for c in ev.children)
            key = tuple(cpu_path(ev))
        else:
            if value != "device" or not tr.use_device:
                continue
            op = ev.launcher
            while op is not None and id(op) not in kept:
                op = op.parent  # merged into its same-name parent
            v = ev.end_ns - ev.start_ns
            key = tuple((cpu_path(op) if op is not None else []) + [(ev.name.encode(), 1)])
        sums[key] = sums.get(key, 0) + v
    lines = []
    for key in sorted(sums):
        if sums[key] > 0:
            lines.append("%s %d\n" % (";".join(frame(n.decode()) for n, _ in key), sums[key]))
    return "".join(lines)


def tree_nodes(path):
    """path -> [calls, cpu_ns, self_cpu_ns, device_ns (device leaves)]"""
    tr = ka.Trace(ka.load_trace(path))
    events = ka.build_tree(tr.events)
    kept = set(id(ev) for ev in events)
    nodes = {}

    def cpu_path(ev):
        out = []
        while ev is not None:
            out.append((ev.name, 0))
            ev = ev.parent
        return out[::-1]

    for ev in events:
        if ev.is_async:
            continue
        if ev.device_type == ka.CPU:
            key = tuple(cpu_path(ev))
            span = ev.end_ns - ev.start_ns
            vals = [1, span, span - sum(c.end_ns - c.start_ns for c in ev.children), 0]
        else:
            op = ev.launcher
            while op is not None and id(op) not in kept:
                op = op.parent
            key = tuple((cpu_path(op) if op is not None else []) + [(ev.name, 1)])
            vals = [1, 0, 0, ev.end_ns - ev.start_ns if tr.use_device else 0]
        n = nodes.setdefault(key, [0, 0, 0, 0])
        for i in range(4):
            n[i] += vals[i]
    return nodes


def ns_of(x):
    return int(decimal.Decimal(str(x)) * 1000)


def check_tree(binary, trace):
    c = subprocess.run([binary, "stacks", "--no-cache", "-f", "json", trace], capture_output=True)
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    rows = json.loads(c.stdout, parse_float=decimal.Decimal)
    got, path = {}, []
    for r in rows:
        del path[r["depth"] - 1:]
        leaf = r["device"]
        path.append((r["name"], 1 if leaf else 0))
        dev = ns_of(r["device_time_total"]) if leaf else 0
        got[tuple(path)] = [r["count"], ns_of(r["cpu_time_total"]), ns_of(r["self_cpu_time_total"]), dev]
    want = tree_nodes(trace)
    bad = sorted(set(want) ^ set(got), key=str)[:10] + [k for k in want if k in got and want[k] != got[k]][:10]
    for k in bad:
        print("%s: oracle %s, neuron-stats %s" % (";".join(n for n, _ in k), want.get(k), got.get(k)))
    if bad:
        print("FAIL: the call trees disagree on %s" % trace)
        return 1
    print("ok: %s --tree (%d nodes)" % (trace, len(want)))
    return 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, trace, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
    trace = trace.replace("@CORPUS@", corpus.corpus_root(binary))
    if not os.path.isabs(trace):
        trace = os.path.join(SRC, trace)
    if not os.path.exists(trace):
        print(corpus.skip_reason(trace))
        return 77
    if opts == ["--tree"]:
        return check_tree(binary, trace)
    value = opts[opts.index("--value") + 1] if "--value" in opts else "cpu"
    want = folded(trace, value)
    c = subprocess.run([binary, "stacks", "--no-cache", trace] + opts, capture_output=True)
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    got = c.stdout.decode()
    if got == want:
        print("ok: %s %s (%d lines)" % (trace, " ".join(opts), got.count("\n")))
        return 0
    diff = difflib.unified_diff(want.splitlines(), got.splitlines(), "oracle", "neuron-stats", lineterm="", n=0)
    print("\n".join(list(diff)[:60]))
    print("FAIL: neuron-stats and the oracle disagree on %s %s" % (trace, " ".join(opts)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
