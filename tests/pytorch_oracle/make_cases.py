#!/usr/bin/env python3
"""Profile small models with PyTorch itself and keep what PyTorch printed.

Run where torch is installed (a CUDA build with Kineto for the CUDA cases;
any build for the CPU cases):

    python3 tests/pytorch_oracle/make_cases.py OUTDIR

For each case it writes OUTDIR/CASE/trace.json (prof.export_chrome_trace),
OUTDIR/CASE/tables.json (PyTorch's own key_averages(...).table(...) text for
each variant below, with the arguments used) and OUTDIR/CASE/meta.json
(torch version, device, what the profiler was asked to record). Nothing here
computes an expected value: every table is PyTorch's output, verbatim.
tests/pytorch_oracle/check.py compares neuron-stats with them.
"""
import json
import os
import sys
import time

import torch

OUT = sys.argv[1] if len(sys.argv) > 1 else "pytorch-oracle-out"
CUDA = torch.cuda.is_available()
DEV = "cuda" if CUDA else "cpu"
SORT_DEV = "self_cuda_time_total" if CUDA else "self_cpu_time_total"

# (variant name, key_averages kwargs, table kwargs)
VARIANTS = [
    ("default", {}, {}),
    ("all-rows-self-cpu", {}, {"sort_by": "self_cpu_time_total", "row_limit": -1}),
    ("all-rows-cpu-total", {}, {"sort_by": "cpu_time_total", "row_limit": -1}),
    ("all-rows-self-device", {}, {"sort_by": SORT_DEV, "row_limit": -1}),
    ("all-rows-count", {}, {"sort_by": "count", "row_limit": -1}),
    ("top-level", {}, {"sort_by": "self_cpu_time_total", "row_limit": -1, "top_level_events_only": True}),
    ("ms", {}, {"sort_by": "cpu_time_total", "row_limit": 20, "time_unit": "ms"}),
    ("narrow-names", {}, {"sort_by": "self_cpu_time_total", "row_limit": 15, "max_name_column_width": 20}),
    ("group-by-shape", {"group_by_input_shape": True}, {"sort_by": "self_cpu_time_total", "row_limit": -1}),
    ("group-by-stack-5", {"group_by_stack_n": 5}, {"sort_by": "self_cpu_time_total", "row_limit": -1}),
    ("group-by-overload", {"group_by_overload_name": True}, {"sort_by": "self_cpu_time_total", "row_limit": -1}),
]
if CUDA:
    VARIANTS.append(("mem-device", {}, {"sort_by": "self_cuda_memory_usage", "row_limit": -1}))
VARIANTS.append(("mem-cpu", {}, {"sort_by": "self_cpu_memory_usage", "row_limit": -1}))


# keep every step's events (torch >= 2.4 clears them at each prof.step() otherwise)
ACC = {"acc_events": True} if "acc_events" in torch.profiler.profile.__init__.__code__.co_varnames else {}


def activities(cuda):
    acts = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        acts.append(torch.profiler.ProfilerActivity.CUDA)
    return acts


def save(name, prof, meta):
    d = os.path.join(OUT, name)
    os.makedirs(d, exist_ok=True)
    prof.export_chrome_trace(os.path.join(d, "trace.json"))
    tables = []
    for vname, ka, tk in VARIANTS:
        try:
            text = prof.key_averages(**ka).table(**tk)
        except Exception as e:  # a variant this torch cannot do is recorded as such
            text = None
            meta.setdefault("variant_errors", {})[vname] = repr(e)
        tables.append({"name": vname, "key_averages": ka, "table": tk, "text": text})
    with open(os.path.join(d, "tables.json"), "w") as f:
        json.dump(tables, f, indent=1)
    meta.update({"torch": torch.__version__, "cuda": torch.version.cuda,
                 "device": torch.cuda.get_device_name(0) if meta.get("device") == "cuda" else "cpu",
                 "kineto": torch.autograd.kineto_available()})
    with open(os.path.join(d, "meta.json"), "w") as f:
        json.dump(meta, f, indent=1)
    print("wrote", d, file=sys.stderr)


def sync():
    if CUDA:
        torch.cuda.synchronize()


def mlp_train(dev, steps=3):
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(256, 512), torch.nn.ReLU(), torch.nn.Linear(512, 10)).to(dev)
    opt = torch.optim.SGD(model.parameters(), lr=0.01)
    x = torch.randn(64, 256, device=dev)
    y = torch.randint(0, 10, (64,), device=dev)
    for _ in range(2):  # warm-up outside the profiler
        opt.zero_grad()
        torch.nn.functional.cross_entropy(model(x), y).backward()
        opt.step()
    sync()
    with torch.profiler.profile(activities=activities(dev == "cuda"), record_shapes=True,
                                profile_memory=True, with_stack=True, **ACC) as prof:
        for _ in range(steps):
            with torch.profiler.record_function("train_step"):
                opt.zero_grad()
                loss = torch.nn.functional.cross_entropy(model(x), y)
                loss.backward()
                opt.step()
            sync()
            prof.step()
    return prof


def convnet(dev):
    torch.manual_seed(0)
    model = torch.nn.Sequential(
        torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.BatchNorm2d(16), torch.nn.ReLU(),
        torch.nn.MaxPool2d(2), torch.nn.Conv2d(16, 32, 3, padding=1), torch.nn.ReLU(),
        torch.nn.AdaptiveAvgPool2d(1), torch.nn.Flatten(), torch.nn.Linear(32, 10)).to(dev)
    x = torch.randn(8, 3, 32, 32, device=dev)
    model(x).sum().backward()
    sync()
    with torch.profiler.profile(activities=activities(dev == "cuda"), record_shapes=True) as prof:
        for _ in range(2):
            out = model(x)
            out.sum().backward()
        sync()
    return prof


def rmsnorm_naive(x, w, eps=1e-6):
    return x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + eps) * w


def rmsnorm(dev, fused):
    torch.manual_seed(0)
    x = torch.randn(32, 1024, device=dev)
    w = torch.ones(1024, device=dev)
    fn = (lambda: torch.nn.functional.rms_norm(x, (1024,), w, 1e-6)) if fused else (lambda: rmsnorm_naive(x, w))
    fn()
    sync()
    with torch.profiler.profile(activities=activities(dev == "cuda"), record_shapes=True) as prof:
        for _ in range(10):
            with torch.profiler.record_function("rmsnorm"):
                fn()
        sync()
    return prof


def nccl_allreduce():
    """One-rank NCCL: record_param_comms, the nccl:all_reduce annotation and its kernel."""
    import torch.distributed as dist
    os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
    os.environ.setdefault("MASTER_PORT", "29517")
    dist.init_process_group("nccl", rank=0, world_size=1)
    t = torch.ones(1 << 20, device="cuda")
    dist.all_reduce(t)
    sync()
    with torch.profiler.profile(activities=activities(True), record_shapes=True) as prof:
        for _ in range(3):
            t.mul_(2)
            dist.all_reduce(t)
        sync()
    dist.destroy_process_group()
    return prof


def compiled_rmsnorm():
    torch.manual_seed(0)
    x = torch.randn(32, 1024, device="cuda")
    w = torch.ones(1024, device="cuda")
    fn = torch.compile(rmsnorm_naive)
    fn(x, w)
    sync()
    with torch.profiler.profile(activities=activities(True), record_shapes=True) as prof:
        for _ in range(5):
            fn(x, w)
        sync()
    return prof


def main():
    os.makedirs(OUT, exist_ok=True)
    cases = [("cpu-mlp-train", lambda: mlp_train("cpu"), {"device": "cpu", "record_shapes": True, "profile_memory": True, "with_stack": True}),
             ("cpu-convnet", lambda: convnet("cpu"), {"device": "cpu", "record_shapes": True})]
    if CUDA:
        cases += [
            ("cuda-mlp-train", lambda: mlp_train("cuda"), {"device": "cuda", "record_shapes": True, "profile_memory": True, "with_stack": True}),
            ("cuda-convnet", lambda: convnet("cuda"), {"device": "cuda", "record_shapes": True}),
            ("cuda-rmsnorm-naive", lambda: rmsnorm("cuda", False), {"device": "cuda", "record_shapes": True}),
            ("cuda-rmsnorm-fused", lambda: rmsnorm("cuda", True), {"device": "cuda", "record_shapes": True}),
            ("cuda-nccl-allreduce", nccl_allreduce, {"device": "cuda", "record_shapes": True, "world_size": 1}),
            ("cuda-rmsnorm-compiled", compiled_rmsnorm, {"device": "cuda", "record_shapes": True, "torch_compile": True}),
        ]
    for name, run, meta in cases:
        t0 = time.time()
        try:
            prof = run()
        except Exception as e:
            print("case %s failed: %r" % (name, e), file=sys.stderr)
            continue
        save(name, prof, meta)
        print("%s: %.1f s" % (name, time.time() - t0), file=sys.stderr)


if __name__ == "__main__":
    main()
