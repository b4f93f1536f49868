#!/usr/bin/env python3
"""Write a large, synthetic Kineto trace fast, with its exact totals.

    python3 tests/reliability/gen_big.py OUT.json --elements 3000000

The trace is era C (baseTimeNanoseconds, µs with 3 decimals) and CUDA-like:
per profiler step, a ProfilerStep#N annotation around OPS_PER_STEP
sequential cpu_ops; each op has a python_function caller (not a table row),
launches one kernel through cudaLaunchKernel (correlation + External id, and
an ac2g flow pair), and carries Input Dims / Input type / a Call stack so
events have a realistic size (~180 bytes). Durations vary deterministically.

OUT.totals.json gets what a reader must find (computed here, from the
durations chosen, never by the code under test): the number of traceEvents
elements, and per op name the calls, CPU total, self CPU and self device time
in ns.
"""

import argparse
import json
import os

OPS = ["aten::linear", "aten::relu", "aten::add", "aten::mul", "aten::softmax", "aten::layer_norm",
       "aten::matmul", "aten::dropout", "aten::gelu", "aten::transpose", "aten::view", "aten::cat"]
OPS_PER_STEP = 48
PID, TID = 3131, 3131
BASE_TIME_NS = 1767225600000000000


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


def generate(path, elements):
    per_op = 6  # op, python_function, runtime, kernel, flow s, flow f
    steps = max(1, elements // (per_op * OPS_PER_STEP + 1))
    totals = {op: {"calls": 0, "cpu_total_ns": 0, "self_cpu_ns": 0, "self_device_ns": 0} for op in OPS}
    n = 0
    corr = 0
    t = 1000000
    with open(path, "w", buffering=1 << 22) as f:
        f.write('{\n  "schemaVersion": 1,\n  "deviceProperties": [{"id": 0, "name": "NVIDIA H100"}],\n'
                '  "cuda_runtime_version": 12040,\n  "traceEvents": [\n')
        first = True
        for s in range(steps):
            step_start = t
            out = []
            for i in range(OPS_PER_STEP):
                op = OPS[(s * 7 + i) % len(OPS)]
                corr += 1
                dur = 2000 + (s * 131 + i * 977) % 5000          # ns
                rt_dur = 300 + (s + i * 13) % 400
                k_dur = 800 + (s * 17 + i * 31) % 3000
                op_ts = t + 200
                rt_ts = op_ts + 100
                k_ts = rt_ts + 500
                out.append('{"ph": "X", "cat": "python_function", "name": "model.py(%d): forward", "pid": %d, '
                           '"tid": %d, "ts": %s, "dur": %s, "args": {"Python id": %d}}'
                           % (i, PID, TID, us(t), us(dur + 400), corr))
                out.append('{"ph": "X", "cat": "cpu_op", "name": "%s", "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                           '"args": {"External id": %d, "Record function id": 0, "Sequence number": %d, '
                           '"Input Dims": [[8, 512], [512, 512]], "Input type": ["float", "float"], '
                           '"Call stack": "model.py(%d): forward;train.py(40): step"}}'
                           % (op, PID, TID, us(op_ts), us(dur), corr, corr, i))
                out.append('{"ph": "X", "cat": "cuda_runtime", "name": "cudaLaunchKernel", "pid": %d, "tid": %d, '
                           '"ts": %s, "dur": %s, "args": {"External id": %d, "cbid": 211, "correlation": %d}}'
                           % (PID, TID, us(rt_ts), us(rt_dur), corr, corr))
                out.append('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                           % (corr, PID, TID, us(rt_ts)))
                out.append('{"ph": "X", "cat": "kernel", "name": "kernel_%s", "pid": 0, "tid": 7, "ts": %s, '
                           '"dur": %s, "args": {"External id": %d, "correlation": %d, "device": 0, "stream": 7, '
                           '"grid": [128, 1, 1], "block": [256, 1, 1]}}'
                           % (op[6:], us(k_ts), us(k_dur), corr, corr))
                out.append('{"ph": "f", "id": %d, "pid": 0, "tid": 7, "ts": %s, "cat": "ac2g", "name": "ac2g", '
                           '"bp": "e"}' % (corr, us(k_ts)))
                tot = totals[op]
                tot["calls"] += 1
                tot["cpu_total_ns"] += dur
                tot["self_cpu_ns"] += dur - rt_dur
                tot["self_device_ns"] += k_dur
                t += dur + 1000
            step = ('{"ph": "X", "cat": "user_annotation", "name": "ProfilerStep#%d", "pid": %d, "tid": %d, '
                    '"ts": %s, "dur": %s, "args": {"External id": 0}}' % (s, PID, TID, us(step_start + 100),
                                                                         us(t - step_start - 50)))
            f.write(("" if first else ",\n") + step + ",\n" + ",\n".join(out))
            first = False
            n += 1 + len(out)
            t += 5000
        f.write('\n  ],\n  "traceName": "gen_big",\n  "baseTimeNanoseconds": %d\n}\n' % BASE_TIME_NS)
    result = {"elements": n, "steps": steps, "ops": totals}
    with open(path + ".totals.json", "w") as f:
        json.dump(result, f, indent=1)
    return result


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out")
    ap.add_argument("--elements", type=int, default=3000000)
    a = ap.parse_args()
    r = generate(a.out, a.elements)
    print("gen_big: %s: %d elements, %d steps, %.0f MB" % (a.out, r["elements"], r["steps"],
                                                           os.path.getsize(a.out) / 1e6))


if __name__ == "__main__":
    main()
