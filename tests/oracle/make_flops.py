#!/usr/bin/python3
"""Writes fixtures/flops/: a trace profiled with record_shapes=True,
with_flops=True, and PyTorch's own key_averages().table() texts of it.
Run with Debian 12's python3-torch (1.13, no Kineto):

    /usr/bin/python3 tests/oracle/make_flops.py fixtures/flops

A PyTorch without Kineto exports the legacy autograd-profiler format, whose
events have empty args (docs/report.md "What an exported trace cannot
carry"). This script writes what a Kineto trace carries into them, from
PyTorch's own FunctionEvents, matched one to one with the exported events
(same name, start and duration): "Input Dims" (FunctionEvent.input_shapes)
and "flops" (FunctionEvent.flops, where > 0: what computeFlops recorded).
aten::conv2d also gets "Concrete Inputs" as Kineto writes them ("" for a
tensor, "[2, 2]" for an int list), from the parameters of the calls below,
in call order: the FLOPs formula needs stride, padding and dilation, which
the legacy FunctionEvent does not keep.

tables.json: one entry per variant, the table() arguments and PyTorch's text.
Nothing here computes a FLOPs value or a table.
"""
import json
import os
import sys

import torch

out = sys.argv[1] if len(sys.argv) > 1 else "."
assert not torch.autograd.kineto_available(), "needs a PyTorch without Kineto (the legacy export)"
torch.manual_seed(0)

# (stride, padding, dilation, groups) of each conv2d call, in order
CONVS = [((2, 2), (1, 1), (1, 1), 1), ((1, 1), (0, 0), (2, 2), 3)]
a, b, c = torch.randn(8, 16), torch.randn(16, 4), torch.randn(4)
x, y, z = torch.randn(3, 8, 16), torch.randn(3, 16, 5), torch.randn(3, 8, 5)
img = torch.randn(2, 3, 12, 12)
w1, w2 = torch.randn(6, 3, 3, 3), torch.randn(6, 1, 3, 3)

with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True,
                            with_flops=True) as prof:
    for _ in range(2):
        with torch.profiler.record_function("step"):
            torch.mm(a, b)
            torch.addmm(c, a, b)
            torch.bmm(x, y)
            torch.baddbmm(z, x, y)
            for w, (s, p, d, g) in zip((w1, w2), CONVS):
                torch.nn.functional.conv2d(img, w, stride=s, padding=p, dilation=d, groups=g)
            torch.mul(a, a)
            torch.add(a, a)
            torch.mul(x, 2.0)

path = os.path.join(out, "trace.json")
prof.export_chrome_trace(path)
with open(path) as f:
    exported = json.load(f)
events = [e for e in prof.profiler.function_events if e.trace_name is not None]
assert len(events) == len(exported)
convs = iter(CONVS * 2)
for e, j in zip(events, exported):
    assert (j["name"], j["ts"], j["dur"]) == (e.trace_name, e.time_range.start, e.time_range.elapsed_us())
    j["args"] = {"Input Dims": e.input_shapes}
    if e.name == "aten::conv2d":
        s, p, d, g = next(convs)
        j["args"]["Concrete Inputs"] = ["", "", "", str(list(s)), str(list(p)), str(list(d)), str(g)]
    if e.flops:
        j["args"]["flops"] = e.flops
with open(path, "w") as f:
    f.write("[\n" + ",\n".join(json.dumps(j) for j in exported) + "\n]\n")

VARIANTS = [
    ("default", {}, []),
    ("self-cpu", {"sort_by": "self_cpu_time_total", "row_limit": -1},
     ["--sort", "self_cpu_time_total", "--row-limit", "-1"]),
    ("flops", {"sort_by": "flops", "row_limit": -1}, ["--sort", "flops", "--row-limit", "-1"]),
    ("count-5", {"sort_by": "count", "row_limit": 5}, ["--sort", "count", "--row-limit", "5"]),
]
tables = [{"name": n, "table": kw, "args": args, "text": prof.key_averages().table(**kw)} for n, kw, args in VARIANTS]
with open(os.path.join(out, "tables.json"), "w") as f:
    json.dump({"torch": torch.__version__, "tables": tables}, f, indent=1)
    f.write("\n")
