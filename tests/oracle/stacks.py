#!/usr/bin/env python3
"""Folded stacks from the reference implementation (key_averages.py), to
check `neuron-stats stacks` against (tests/oracle/meson.build).

    stacks.py NEURON_STATS TRACE [--value cpu|device]
    stacks.py NEURON_STATS TRACE --tree [--python]
    stacks.py NEURON_STATS TRACE --python [--value cpu|device]

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
leaf. With --python, the python_function calls of the trace (read from its
JSON here) nest with the ops per thread, and self times are counted in
that tree. (An op's device totals are PyTorch's, which the key_averages oracle
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


OP, DEVICE, PYTHON = 0, 1, 2  # frame kinds, in the order a name tie sorts


def frame(name):
    assert not any(ord(ch) < 32 or 127 <= ord(ch) < 160 for ch in name), name
    return name.replace(";", ":")


def python_calls(tr, data):
    """The python_function X events, as (thread, start_ns, end_ns, file index, name)."""
    raw = data["traceEvents"] if isinstance(data, dict) else data
    out = []
    for i, e in enumerate(raw):
        if isinstance(e, dict) and e.get("ph") == "X" and e.get("cat") == "python_function" and "ts" in e:
            ts = ka.us_token_to_ns(e.get("ts"), tr.ns_era)
            dur = max(ka.us_token_to_ns(e.get("dur"), tr.ns_era), 0)
            out.append(((str(e.get("pid")), str(e.get("tid"))), ts, ts + dur, i, e.get("name")))
    return out


def cpu_items(tr, events, data, python):
    """[(path, calls, cpu_ns, self_cpu_ns)] of every CPU op (and Python call),
    and each op's path (by id). Without Python frames a path is the chain of
    op parents and the self time PyTorch's; with them, ops and Python calls
    nest together per thread (PyTorch's build_tree rule) and self times are
    counted in that tree."""
    ops = [ev for ev in events if ev.device_type == ka.CPU and not ev.is_async]
    paths, items = {}, []
    if not python:
        for ev in ops:  # parents come first: events are in (start, -end) order
            p = ev.parent
            paths[id(ev)] = (paths[id(p)] if p is not None else ()) + ((ev.name, OP),)
            span = ev.end_ns - ev.start_ns
            items.append((paths[id(ev)], 1, span, span - sum(c.end_ns - c.start_ns for c in ev.children)))
        return paths, items
    entries = [(t, s, -e, 0, i, name, None) for t, s, e, i, name in python_calls(tr, data)]
    entries += [(ev.thread, ev.start_ns, -ev.end_ns, 1, k, ev.name, ev) for k, ev in enumerate(ops)]
    entries.sort(key=lambda x: x[:5])
    stack, selfs, path_of, thread = [], [], [], None
    for j, (t, s, neg_e, is_op, _, name, ev) in enumerate(entries):
        e = -neg_e
        if t != thread:
            stack, thread = [], t
        while stack and not (s < -entries[stack[-1]][2] and e <= -entries[stack[-1]][2]):
            stack.pop()
        parent = stack[-1] if stack else None
        selfs.append(e - s)
        if parent is not None:
            selfs[parent] -= e - s
        path_of.append((path_of[parent] if parent is not None else ()) + ((name, OP if is_op else PYTHON),))
        if ev is not None:
            paths[id(ev)] = path_of[j]
        stack.append(j)
    for j, x in enumerate(entries):
        items.append((path_of[j], 1, -x[2] - x[1], selfs[j]))
    return paths, items


def device_items(tr, events, paths):
    """[(path, calls, span_ns)] of every device event: a leaf under its op."""
    kept = set(id(ev) for ev in events)
    out = []
    for ev in events:
        if ev.is_async or ev.device_type == ka.CPU:
            continue
        op = ev.launcher
        while op is not None and id(op) not in kept:
            op = op.parent  # merged into its same-name parent
        path = (paths[id(op)] if op is not None else ()) + ((ev.name, DEVICE),)
        out.append((path, 1, ev.end_ns - ev.start_ns if tr.use_device else 0))
    return out


def load(path, python):
    data = ka.load_trace(path)
    tr = ka.Trace(data)
    events = ka.build_tree(tr.events)
    paths, cpu = cpu_items(tr, events, data, python)
    return tr, cpu, device_items(tr, events, paths)


def folded(path, value, python):
    tr, cpu, dev = load(path, python)
    sums = {}
    for key, _, _, self_ns in (cpu if value == "cpu" else []):
        sums[key] = sums.get(key, 0) + self_ns
    for key, _, span in (dev if value == "device" and tr.use_device else []):
        sums[key] = sums.get(key, 0) + span
    order = sorted(sums, key=lambda k: [(n.encode(), kind) for n, kind in k])
    return "".join("%s %d\n" % (";".join(frame(n) for n, _ in k), sums[k]) for k in order if sums[k] > 0)


def tree_nodes(path, python):
    """path -> [calls, cpu_ns, self_cpu_ns, device_ns (device leaves)]"""
    tr, cpu, dev = load(path, python)
    nodes = {}
    for key, calls, span, self_ns in cpu:
        n = nodes.setdefault(key, [0, 0, 0, 0])
        n[0] += calls
        n[1] += span
        n[2] += self_ns
    for key, calls, span in dev:
        n = nodes.setdefault(key, [0, 0, 0, 0])
        n[0] += calls
        n[3] += span
    return nodes


def ns_of(x):
    return int(decimal.Decimal(str(x)) * 1000)


def check_tree(binary, trace, python):
    c = subprocess.run([binary, "stacks", "--no-cache", "-f", "json", trace] + (["--python"] if python else []),
                       capture_output=True)
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    rows = json.loads(c.stdout, parse_float=decimal.Decimal)
    got, path = {}, []
    for r in rows:
        del path[r["depth"] - 1:]
        kind = {"op": OP, "device": DEVICE, "python": PYTHON}[r["kind"]]
        path.append((r["name"], kind))
        dev = ns_of(r["device_time_total"]) if kind == DEVICE else 0
        got[tuple(path)] = [r["count"], ns_of(r["cpu_time_total"]), ns_of(r["self_cpu_time_total"]), dev]
    want = tree_nodes(trace, python)
    bad = sorted(set(want) ^ set(got), key=str)[:10] + [k for k in want if k in got and want[k] != got[k]][:10]
    for k in bad:
        print("%s: oracle %s, neuron-stats %s" % (";".join(n for n, _ in k), want.get(k), got.get(k)))
    if bad:
        print("FAIL: the call trees disagree on %s" % trace)
        return 1
    print("ok: %s --tree%s (%d nodes)" % (trace, " --python" if python else "", len(want)))
    return 0


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, trace, opts = sys.argv[1], sys.argv[2], sys.argv[3:]
    trace = corpus.resolve(trace, binary)
    if not os.path.exists(trace):
        print(corpus.skip_reason(trace))
        return 77
    python = "--python" in opts
    if "--tree" in opts:
        return check_tree(binary, trace, python)
    value = opts[opts.index("--value") + 1] if "--value" in opts else "cpu"
    want = folded(trace, value, python)
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
