#!/usr/bin/env python3
"""Reference ("oracle") implementation of PyTorch's key_averages().table().

Reads a Kineto trace.json (object form, or the legacy top-level array form;
plain or .gz) and prints the table that the NEWEST PyTorch (era C+ of
/work/shared/reference/key-averages-spec.md) prints for
``prof.key_averages(...).table(...)``.

It is deliberately written from the spec, in plain Python (stdlib only), so
that it can serve as an independent check of the C implementation and as the
honest "what a user would write in Python" baseline in bench/.

Usage:
    python3 tests/oracle/key_averages.py TRACE [--sort KEY] [--row-limit N]
        [--device-name NAME] [--top-level-only] [--time-unit s|ms|us]
        [--group-by shape|overload|stack=N]

Rules that the spec leaves open and that the C side makes identically
(keep both sides in sync when changing any of them):

* Timestamps are parsed from the JSON *text*: json.load(parse_float=Decimal,
  parse_int=int); ns = round_half_even(Decimal_us * 1000).  A trace is
  "ns-era" if it has a baseTimeNanoseconds key or any ts token with a
  fraction.  start_us = (ts_ns - T0_ns) / 1000 (Python int true division).
  T0 = ts of the first X event with cat "Trace" whose name starts with
  "PyTorch Profiler"; without one, the smallest ts of a kept CPU event, else
  of any kept event, else 0.
* Legacy categories map Operator->cpu_op, Runtime->cuda_runtime,
  Kernel->kernel, Memcpy->gpu_memcpy, Memset->gpu_memset,
  gpu_user_Annotation->gpu_user_annotation; "async"/"ac2g" are flows.
  Unknown categories are ignored; python_function and Trace are not rows.
* use_device: PrivateUse1 if any privateuse1_runtime/privateuse1_driver event
  (label "NEURON" unless --device-name); else cuda if any cuda_runtime/
  cuda_driver/kernel/gpu_memcpy/gpu_memset event or a cuda_runtime_version/
  hip_runtime_version/roctracer_version key; else xpu (xpu_runtime), mtia
  (mtia_*), hpu (hpu_op); else None.  --device-name overrides the label of
  whatever backend was inferred (upper-cased); it never creates one.
* Device work in ns-era traces (docs/report.md "Rules checked against
  PyTorch"): a kernel/gpu_memcpy/gpu_memset/cuda_sync event with an
  "External id" L counts toward EVERY kept CPU event, not async, whose
  PyTorch id is L: a cpu_op/user_annotation's id is its External id, a
  runtime/driver call's its "correlation", an "overhead" event's that of the
  event open on the main thread when it starts (PyTorch's C++ build_tree
  replayed over the main thread's torch ops and unlinked Kineto CPU events,
  i.e. those with no External id: sorted by (start, torch ops first, file
  order); the lowest open event whose end < start leaves the stack with all
  above it; zero-length events are never parents); no such event: nothing.
  A user_annotation named "nccl:", "gloo:", "mpi:", "ucc:" or "xccl:"... is
  async (c10d's Work record): no self CPU, no device time, no kernels, not
  in the tree, CPU total % printed as 0.
* Linking device/runtime events to the op that launched them otherwise
  (runtime calls always; device events without an External id, or of an
  integer-µs trace), by precedence:
    (1) ns-era trace and the event's "External id" names a cpu_op's
        External id -> that op (if that op was dropped -- filtered name or
        unfinished -- the event is attached to nothing);
    (2) else by "correlation": the runtime/driver event (cuda_runtime,
        cuda_driver, xpu_runtime, mtia_runtime, privateuse1_runtime,
        privateuse1_driver) with the same args.correlation (first in file
        order); a runtime event is its own runtime.  The op is then the
        innermost cpu_op (cat cpu_op only, never user_annotation) on the
        runtime's (pid, tid) with op.ts <= rt.ts <= op.ts + op.dur (ns);
        "innermost" = latest start, then shortest, then later in file order;
        dropped cpu_ops take part in this search and, if found, the event is
        attached to nothing;
    (3) else (a device event whose correlation finds no runtime event, or that
        has none) via the ac2g flow: the "f" at the device event's
        pid/tid/ts -> the "s" with the same id -> the runtime/driver event on
        the s's pid/tid starting at the s's ts -> innermost op as in (2).
  Only kernel, gpu_memcpy, gpu_memset and cuda_sync events are attached
  (gpu_user_annotation never is).  pid/tid are compared as str(value).
* Kineto CPU activities (everything CPU-typed except cpu_op/user_annotation,
  e.g. runtime/driver/overhead) move to the thread of their op (as linked
  above); unlinked
  ones go to the main thread: (pid, pid) where pid is that of the first
  cpu_op in file order (first user_annotation if there is no cpu_op); if no
  torch event lives on (pid, pid), the first cpu_op's own thread; with no
  torch events at all, one shared pseudo thread.
* gpu_user_annotation widening undo: ns-era: ts -= 1 ns, dur -= 2 ns; integer
  µs era: ts -= 1 µs, dur -= 1 µs; only when the (original) ts + margin
  equals the ts of a kernel/gpu_memcpy/gpu_memset on the same pid/tid.
* Event order: the kept X events are stably sorted by (start_ns, file order);
  unused [memory] rows (in that same order) and then every [OutOfMemory]
  row are appended (as PyTorch appends them), then the whole list is stably
  sorted by (start_us, -end_us).  "Ev Idx" is not used.
* Memory records are assigned with inclusive ns bounds, any thread, to every
  CPU event (torch ops, annotations, runtime calls ...).
* Names: demangled with c++filt when they look like "_Z..." mangled symbols
  (PyTorch uses __cxa_demangle), then ProfilerStep#N -> ProfilerStep*.
  With --group-by overload, cpu_op names "ns::op.overload" are split into
  name "ns::op" + overload "overload" (PyTorch's capture_overload_names).
* Stacks (--group-by stack=N) come from args "Call stack" split on ';' with
  PyTorch's _filter_stack_entry applied; backward ops do not inherit forward
  stacks (scope is not in the JSON).
* CLI only: --sort also accepts neuron-stats' aliases ("neuron" in a key reads
  as "device", and self_neuron / self_device mean self_device_time_total).
* If PyTorch would raise (a share whose total is 0 but value isn't), the oracle
  prints an error to stderr and exits with status 3.
"""

import argparse
import bisect
import decimal
import gc
import gzip
import json
import shutil
import subprocess
import sys

# --------------------------------------------------------------------------
# constants

FILTERED_NAMES = frozenset([
    "[memory]", "[OutOfMemory]",
    "profiler::_record_function_enter", "profiler::_record_function_enter_new",
    "profiler::_record_function_exit",
    "aten::is_leaf", "aten::output_nr", "aten::_version",
])

LEGACY_CATS = {
    "Operator": "cpu_op",
    "Runtime": "cuda_runtime",
    "Kernel": "kernel",
    "Memcpy": "gpu_memcpy",
    "Memset": "gpu_memset",
    "gpu_user_Annotation": "gpu_user_annotation",
}

FLOW_CATS = frozenset(["ac2g", "async"])

# c10d names the RecordFunction of a collective's Work "<backend>:<op>" and
# makes it async (Work::Work, torch/csrc/distributed/c10d/Work.cpp)
C10D_WORK_PREFIXES = ("nccl:", "gloo:", "mpi:", "ucc:", "xccl:")

# Kineto activity-type names that become FunctionEvents (ph "X").
DEVICE_GPU_CATS = frozenset(["kernel", "gpu_memcpy", "gpu_memset", "cuda_sync",
                             "gpu_user_annotation", "cuda_profiler_range"])
MTIA_CATS = frozenset(["mtia_ccp_events", "mtia_insight", "mtia_counters"])
HPU_CATS = frozenset(["hpu_op"])
TORCH_CATS = frozenset(["cpu_op", "user_annotation"])
CPU_ACTIVITY_CATS = frozenset([
    "cuda_runtime", "cuda_driver", "cpu_instant_event", "external_correlation",
    "glow_runtime", "mtia_runtime", "xpu_runtime", "xpu_driver",
    "privateuse1_runtime", "privateuse1_driver", "overhead", "cuda_event",
    "collective_comm", "xpu_scope_profiler", "xpu_sync", "hardware_counters",
])
KNOWN_ROW_CATS = DEVICE_GPU_CATS | MTIA_CATS | HPU_CATS | TORCH_CATS | CPU_ACTIVITY_CATS

RUNTIME_CATS = frozenset(["cuda_runtime", "cuda_driver", "xpu_runtime", "mtia_runtime",
                          "privateuse1_runtime", "privateuse1_driver"])
LINKABLE_DEVICE_CATS = frozenset(["kernel", "gpu_memcpy", "gpu_memset", "cuda_sync"])
WIDEN_TARGET_CATS = frozenset(["kernel", "gpu_memcpy", "gpu_memset"])

# Device types (strings are only used for grouping keys).
CPU, CUDA, PRIVATEUSE1, XPU, MTIA, HPU = "CPU", "CUDA", "PrivateUse1", "XPU", "MTIA", "HPU"

CPU_MEM_TYPES = frozenset([0, 2, 5])          # CPU, MKLDNN, IDEEP
DEVICE_MEM_TYPES = frozenset([1, 20, 6, 12])  # CUDA, PrivateUse1, HIP, XPU

_STACK_FILTER = [
    ("autograd/__init__", "_make_grads"),
    ("autograd/__init__", "backward"),
    ("torch/tensor", "backward"),
    ("_internal/common_utils", "prof_callable"),
    ("_internal/common_utils", "prof_func_call"),
    ("_internal/common_utils", "prof_meth_call"),
]


class OracleError(Exception):
    pass


def nsum(values):
    """Naive left-to-right sum starting at int 0, like Python <= 3.11 sum()."""
    s = 0
    for v in values:
        s += v
    return s


# --------------------------------------------------------------------------
# loading


def load_trace(path):
    opener = gzip.open if _is_gzip(path) else open
    with opener(path, "rb") as f:
        return json.load(f, parse_float=decimal.Decimal, parse_int=int)


def _is_gzip(path):
    with open(path, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


_CTX = decimal.Context(prec=60, rounding=decimal.ROUND_HALF_EVEN)


def us_token_to_ns(tok, ns_era):
    """Exact conversion of a ts/dur token (µs) to integer ns."""
    if tok is None:
        return 0
    if isinstance(tok, bool):
        return int(tok) * 1000
    if isinstance(tok, int):
        return tok * 1000
    if isinstance(tok, decimal.Decimal):
        if not tok.is_finite():
            return 0
        return int(_CTX.multiply(tok, 1000).to_integral_value(rounding=decimal.ROUND_HALF_EVEN))
    if isinstance(tok, float):  # not produced by our json.load, kept for callers
        return us_token_to_ns(decimal.Decimal(repr(tok)), ns_era)
    raise OracleError("non-numeric timestamp %r" % (tok,))


def _demangle_all(names):
    """Demangle "_Z..." names with c++filt (same libiberty code as
    __cxa_demangle). Returns a dict name -> demangled."""
    cand = sorted(n for n in names if len(n) > 1 and n.startswith("_Z")
                  and all(c.isalnum() or c in "_$." for c in n))
    if not cand:
        return {}
    exe = shutil.which("c++filt")
    if exe is None:
        sys.stderr.write("key_averages.py: warning: c++filt not found, names not demangled\n")
        return {}
    out = subprocess.run([exe, "-i"], input="\n".join(cand) + "\n", capture_output=True,
                         text=True, check=True).stdout.split("\n")
    return {n: (out[i] if i < len(out) and out[i] else n) for i, n in enumerate(cand)}


# --------------------------------------------------------------------------
# FunctionEvent


class FunctionEvent(object):
    __slots__ = ("name", "overload_name", "device_type", "is_user_annotation", "thread",
                 "start_ns", "end_ns", "start_us", "end_us", "kernels", "children",
                 "parent", "cpu_memory_usage", "device_memory_usage", "input_shapes",
                 "stack", "cat", "file_idx", "_dev_total", "is_async", "launcher")

    def __init__(self):
        self.overload_name = ""
        self.kernels = []
        self.children = []
        self.parent = None
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.input_shapes = []
        self.stack = []
        self.is_user_annotation = False
        self.is_async = False
        self._dev_total = None
        self.launcher = None  # device events: the op _link attributed them to (stacks.py)

    # A4 metrics -----------------------------------------------------------
    @property
    def cpu_time_total(self):
        if self.device_type == CPU:
            return self.end_us - self.start_us
        return 0

    @property
    def self_cpu_time_total(self):
        if self.is_async or self.device_type != CPU:
            return 0
        return self.cpu_time_total - nsum([c.cpu_time_total for c in self.children])

    @property
    def self_cpu_memory_usage(self):
        if self.is_async or self.device_type != CPU:
            return 0
        return self.cpu_memory_usage - nsum([c.cpu_memory_usage for c in self.children])

    @property
    def self_device_memory_usage(self):
        if self.is_async or self.device_type != CPU:
            return 0
        return self.device_memory_usage - nsum([c.device_memory_usage for c in self.children])


def compute_device_totals(events, use_device):
    """Memoised device_time_total (iterative post-order, no recursion limit)."""
    for ev in events:
        if ev._dev_total is not None:
            continue
        stack = [(ev, False)]
        while stack:
            e, done = stack.pop()
            if e._dev_total is not None:
                continue
            if not use_device or e.is_async:
                e._dev_total = 0
                continue
            if e.device_type != CPU:
                e._dev_total = e.end_us - e.start_us
                continue
            if not done:
                stack.append((e, True))
                for c in e.children:
                    if c._dev_total is None:
                        stack.append((c, False))
                continue
            e._dev_total = nsum(e.kernels) + nsum(c._dev_total for c in e.children)


def self_device_time_total(ev):
    if ev.is_async:
        return 0
    if ev.device_type != CPU:
        return ev._dev_total
    return ev._dev_total - nsum([c._dev_total for c in ev.children])


# --------------------------------------------------------------------------
# trace -> FunctionEvents (spec A2 / Part C)


def _input_shapes(args):
    dims = args.get("Input Dims")
    if dims is None:
        dims = args.get("Input dims")
    if not isinstance(dims, list):
        return []
    shapes = []
    for d in dims:
        if isinstance(d, list) and all(isinstance(x, int) and not isinstance(x, bool) for x in d):
            shapes.append(list(d))
        else:
            shapes.append([])
    return shapes


def _stack(args):
    cs = args.get("Call stack")
    if not isinstance(cs, str) or not cs:
        return []
    entries = [e for e in cs.split(";") if e]
    return [e for e in entries if all(not (a in e and b in e) for a, b in _STACK_FILTER)]


def _int_arg(args, key):
    v = args.get(key)
    if isinstance(v, bool):
        return None
    if isinstance(v, int):
        return v
    if isinstance(v, decimal.Decimal) and v == v.to_integral_value():
        return int(v)
    if isinstance(v, str):
        try:
            return int(v)
        except ValueError:
            return None
    return None


def infer_use_device(top, cats_seen):
    if cats_seen & {"privateuse1_runtime", "privateuse1_driver"}:
        return "privateuse1"
    if cats_seen & {"cuda_runtime", "cuda_driver", "kernel", "gpu_memcpy", "gpu_memset"}:
        return "cuda"
    if isinstance(top, dict) and any(k in top for k in ("cuda_runtime_version", "hip_runtime_version",
                                                        "roctracer_version")):
        return "cuda"
    if "xpu_runtime" in cats_seen:
        return "xpu"
    if cats_seen & MTIA_CATS or "mtia_runtime" in cats_seen:
        return "mtia"
    if "hpu_op" in cats_seen:
        return "hpu"
    return None


class Trace(object):
    """FunctionEvents built from one trace file."""

    def __init__(self, data, split_overloads=False):
        if isinstance(data, list):
            top, raw = None, data
        elif isinstance(data, dict):
            top, raw = data, data.get("traceEvents")
            if not isinstance(raw, list):
                raise OracleError("no traceEvents array (not a Kineto trace)")
        else:
            raise OracleError("top level is neither an object nor an array")
        self.top = top
        self._build(raw, split_overloads)

    def _build(self, raw, split_overloads):
        # ---- pass 1: classify -------------------------------------------
        cats_seen = set()
        ns_era = isinstance(self.top, dict) and "baseTimeNanoseconds" in self.top
        xs = []        # (file_idx, event dict, cat)
        mems = []      # (file_idx, event dict, is_oom)
        flows_s = {}   # id -> first "s" event
        flows_f = {}   # (pid, tid, ts_ns) -> first "f" id ; filled after ns_era known
        f_events = []
        span = None
        has_memory_events = False
        for i, e in enumerate(raw):
            if not isinstance(e, dict):
                continue
            cat = e.get("cat")
            if isinstance(cat, str):
                cat = LEGACY_CATS.get(cat, cat)
                cats_seen.add(cat)
            ts = e.get("ts")
            if isinstance(ts, decimal.Decimal):
                ns_era = True
            ph = e.get("ph")
            name = e.get("name")
            if ph == "i" and name in ("[memory]", "[OutOfMemory]"):
                mems.append((i, e, name == "[OutOfMemory]"))
                has_memory_events = True
                continue
            if ph in ("s", "f") and cat in FLOW_CATS:
                if ph == "s":
                    fid = e.get("id")
                    if fid not in flows_s:
                        flows_s[fid] = e
                else:
                    f_events.append(e)
                continue
            if ph != "X":
                continue
            if cat == "Trace":
                if span is None and isinstance(name, str) and name.startswith("PyTorch Profiler"):
                    span = e
                continue
            if cat not in KNOWN_ROW_CATS:
                continue
            if not isinstance(ts, (int, decimal.Decimal)) or isinstance(ts, bool):
                continue
            xs.append((i, e, cat))
        self.ns_era = ns_era
        self.use_device = infer_use_device(self.top, cats_seen)
        pm = self.top.get("profile_memory") if isinstance(self.top, dict) else None
        self.profile_memory = bool(pm) or has_memory_events
        backend = self.use_device

        def to_ns(tok):
            return us_token_to_ns(tok, ns_era)

        for e in f_events:
            key = (str(e.get("pid")), str(e.get("tid")), to_ns(e.get("ts")))
            if key not in flows_f:
                flows_f[key] = e.get("id")

        # ---- device-event start set for the annotation un-widening -------
        dev_starts = set()
        for i, e, cat in xs:
            if cat in WIDEN_TARGET_CATS:
                dev_starts.add((str(e.get("pid")), str(e.get("tid")), to_ns(e.get("ts"))))
        margin = 1 if ns_era else 1000
        dur_margin = 2 if ns_era else 1000

        # ---- names ----------------------------------------------------------
        demangled = _demangle_all(set(e.get("name") for _, e, _ in xs
                                      if isinstance(e.get("name"), str)))

        # ---- records: every X event with its ns interval --------------------
        recs = []  # dicts for all X events (incl. dropped ones, for linking)
        for i, e, cat in xs:
            args = e.get("args")
            if not isinstance(args, dict):
                args = {}
            ts_ns = to_ns(e.get("ts"))
            dur_ns = to_ns(e.get("dur"))
            pid, tid = str(e.get("pid")), str(e.get("tid"))
            if cat == "gpu_user_annotation" and (pid, tid, ts_ns + margin) in dev_starts:
                ts_ns += margin
                dur_ns -= dur_margin
            name = e.get("name")
            if not isinstance(name, str):
                name = "" if name is None else str(name)
            recs.append({
                "i": i, "e": e, "cat": cat, "args": args, "name": name, "pid": pid, "tid": tid,
                "ts": ts_ns, "end": ts_ns + dur_ns, "fe": None,
                "unfinished": cat in TORCH_CATS and args.get("finished") is False,
            })
        _finish_unfinished(recs)
        for r in recs:
            r["dropped"] = r["unfinished"] or r["name"] in FILTERED_NAMES

        # ---- T0 ----------------------------------------------------------------
        if span is not None:
            t0 = to_ns(span.get("ts"))
        else:
            cpu_ts = [r["ts"] for r in recs if not r["dropped"] and self._dev_type(r["cat"], backend) == CPU]
            any_ts = [r["ts"] for r in recs if not r["dropped"]]
            t0 = min(cpu_ts) if cpu_ts else (min(any_ts) if any_ts else 0)
        self.t0_ns = t0

        # ---- FunctionEvents in file order ---------------------------------------
        for r in recs:
            if r["dropped"]:
                continue
            fe = FunctionEvent()
            name = demangled.get(r["name"], r["name"])
            if name.startswith("ProfilerStep#"):
                name = "ProfilerStep*"
            if split_overloads and r["cat"] == "cpu_op":
                name, fe.overload_name = _split_overload(name)
            fe.name = name
            fe.cat = r["cat"]
            fe.device_type = self._dev_type(r["cat"], backend)
            fe.is_user_annotation = r["cat"] in ("user_annotation", "gpu_user_annotation")
            fe.is_async = r["cat"] == "user_annotation" and name.startswith(C10D_WORK_PREFIXES)
            fe.thread = (r["pid"], r["tid"])
            fe.start_ns, fe.end_ns = r["ts"], r["end"]
            fe.start_us = (r["ts"] - t0) / 1000
            fe.end_us = (r["end"] - t0) / 1000
            fe.file_idx = r["i"]
            if r["cat"] in TORCH_CATS:
                fe.input_shapes = _input_shapes(r["args"])
                fe.stack = _stack(r["args"])
            r["fe"] = fe

        # ---- linking (B7) -------------------------------------------------------
        self._link(recs, flows_s, flows_f, to_ns)

        # ---- order: stable by (start_ns, file order) ------------------------------
        kept = [r for r in recs if r["fe"] is not None]
        kept.sort(key=lambda r: r["ts"])  # recs are in file order; sort is stable
        # attach kernels in event-list order (PyTorch's corr_map order)
        by_id = self._by_pytorch_id(kept) if self.ns_era else {}
        for r in kept:
            if r["cat"] not in LINKABLE_DEVICE_CATS or r["fe"].device_type not in (CUDA, PRIVATEUSE1, XPU):
                continue
            ext = _int_arg(r["args"], "External id") if self.ns_era else None
            if ext is not None:
                takers = by_id.get(ext, [])
            else:
                takers = [r["op"]] if r.get("op") is not None else []
            for op in takers:
                op.kernels.append(r["fe"].end_us - r["fe"].start_us)
        for r in kept:
            if r["fe"].device_type != CPU:
                r["fe"].launcher = r.get("op")
        events = [r["fe"] for r in kept]

        # ---- memory (A2.7) ---------------------------------------------------------
        events += self._memory(events, mems, to_ns, t0)

        # ---- final stable sort by (start_us, -end_us) --------------------------------
        events.sort(key=lambda ev: (ev.start_us, -ev.end_us))
        self.events = events

    def _by_pytorch_id(self, kept):
        """ns era: FunctionEvent id -> the CPU FunctionEvents (not async) with it.
        A torch op's id is its External id, a runtime call's its correlation,
        an overhead's that of the event open on the main thread when it starts
        (PyTorch's C++ build_tree replayed over torch ops and unlinked Kineto
        events: the lowest open event with end < start leaves with all above)."""
        ids = {}
        for r in kept:
            if r["fe"].device_type != CPU:
                continue
            if r["cat"] in TORCH_CATS:
                ids[r["i"]] = _int_arg(r["args"], "External id")
            elif r["cat"] in RUNTIME_CATS:
                ids[r["i"]] = _int_arg(r["args"], "correlation")
        tree = [r for r in kept if r["fe"].device_type == CPU and r["fe"].thread == self.main_thread and
                (r["cat"] in TORCH_CATS or _int_arg(r["args"], "External id") is None)]
        tree.sort(key=lambda r: (r["ts"], 0 if r["cat"] in TORCH_CATS else 1, r["i"]))
        stack = []
        for r in tree:
            for d, o in enumerate(stack):
                if o["end"] < r["ts"]:
                    del stack[d:]
                    break
            if r["cat"] == "overhead":
                ids[r["i"]] = ids.get(stack[-1]["i"]) if stack else None
            if r["end"] > r["ts"]:
                stack.append(r)
        by_id = {}
        for r in kept:
            v = ids.get(r["i"])
            if v is not None and v > 0 and not r["fe"].is_async:
                by_id.setdefault(v, []).append(r["fe"])
        return by_id

    @staticmethod
    def _dev_type(cat, backend):
        if cat in DEVICE_GPU_CATS:
            if backend == "privateuse1":
                return PRIVATEUSE1
            if backend == "xpu" and cat in ("kernel", "gpu_memcpy", "gpu_memset"):
                return XPU
            return CUDA
        if cat in MTIA_CATS:
            return MTIA
        if cat in HPU_CATS:
            return HPU
        return CPU

    def _link(self, recs, flows_s, flows_f, to_ns):
        # cpu_op lookup tables (dropped ones included)
        ext_to_op = {}
        ops_by_thread = {}
        first_cpu_op = None
        first_ua = None
        torch_threads = set()
        for r in recs:
            if r["cat"] == "cpu_op":
                if first_cpu_op is None:
                    first_cpu_op = r
                ext = _int_arg(r["args"], "External id")
                if ext is not None and ext not in ext_to_op:
                    ext_to_op[ext] = r
                ops_by_thread.setdefault((r["pid"], r["tid"]), []).append(r)
            elif r["cat"] == "user_annotation" and first_ua is None:
                first_ua = r
            if r["cat"] in TORCH_CATS and not r["dropped"]:
                torch_threads.add((r["pid"], r["tid"]))
        main_src = first_cpu_op if first_cpu_op is not None else first_ua
        if main_src is None:
            main_thread = ("<main>", "<main>")
        elif (main_src["pid"], main_src["pid"]) in torch_threads:
            main_thread = (main_src["pid"], main_src["pid"])
        else:
            main_thread = (main_src["pid"], main_src["tid"])
        self.main_thread = main_thread

        # runtime lookup tables
        rt_by_corr = {}
        rt_by_start = {}
        for r in recs:
            if r["cat"] in RUNTIME_CATS:
                c = _int_arg(r["args"], "correlation")
                if c is not None and c not in rt_by_corr:
                    rt_by_corr[c] = r
                k = (r["pid"], r["tid"], r["ts"])
                if k not in rt_by_start:
                    rt_by_start[k] = r

        # innermost-op queries, answered per thread by a sweep
        queries = {}  # (pid, tid) -> list of (ts, rt record)

        def want_innermost(rt):
            queries.setdefault((rt["pid"], rt["tid"]), []).append(rt)

        # decide for each event which runtime it goes through
        plan = []  # (record, ("op", oprec) | ("rt", rtrec) | None)
        for r in recs:
            cat = r["cat"]
            if cat in RUNTIME_CATS or cat in LINKABLE_DEVICE_CATS:
                pass
            else:
                continue
            if r["fe"] is None and cat in RUNTIME_CATS:
                continue
            target = None
            ext = _int_arg(r["args"], "External id") if self.ns_era else None
            if ext is not None and ext in ext_to_op:
                target = ("op", ext_to_op[ext])
            elif cat in RUNTIME_CATS:
                target = ("rt", r)
            else:
                corr = _int_arg(r["args"], "correlation")
                rt = rt_by_corr.get(corr) if corr is not None else None
                if rt is None:
                    fid = flows_f.get((r["pid"], r["tid"], r["ts"]))
                    s = flows_s.get(fid) if fid is not None else None
                    if s is not None:
                        rt = rt_by_start.get((str(s.get("pid")), str(s.get("tid")), to_ns(s.get("ts"))))
                if rt is not None:
                    target = ("rt", rt)
            if target is not None and target[0] == "rt":
                want_innermost(target[1])
            plan.append((r, target))

        innermost = {}  # id(rt record) -> op record or None
        for thr, qs in queries.items():
            ops = ops_by_thread.get(thr, [])
            ops_sorted = sorted(ops, key=lambda o: (o["ts"], -o["end"]))  # stable: file order
            qs_sorted = sorted(qs, key=lambda q: q["ts"])
            stack = []
            j = 0
            for q in qs_sorted:
                t = q["ts"]
                while j < len(ops_sorted) and ops_sorted[j]["ts"] <= t:
                    stack.append(ops_sorted[j])
                    j += 1
                while stack and stack[-1]["end"] < t:
                    stack.pop()
                innermost[id(q)] = stack[-1] if stack else None

        for r, target in plan:
            op = None
            if target is not None:
                op = target[1] if target[0] == "op" else innermost.get(id(target[1]))
            if op is not None and op["dropped"]:
                op = None
            r["op"] = op["fe"] if op is not None else None

        # re-thread Kineto CPU activities
        for r in recs:
            fe = r["fe"]
            if fe is None or fe.device_type != CPU or r["cat"] in TORCH_CATS:
                continue
            op = r.get("op")
            fe.thread = op.thread if op is not None else main_thread

    def _memory(self, events, mems, to_ns, t0):
        recs = []   # (ts_ns, seq, bytes, dev_type, pid, tid, is_oom)
        for seq, (i, e, is_oom) in enumerate(mems):
            args = e.get("args") if isinstance(e.get("args"), dict) else {}
            b = _int_arg(args, "Bytes") or 0
            dt = _int_arg(args, "Device Type")
            recs.append((to_ns(e.get("ts")), seq, b, dt, str(e.get("pid")), str(e.get("tid")), is_oom))
        recs.sort(key=lambda x: (x[0], x[1]))
        mem = [r for r in recs if not r[6]]
        oom = [r for r in recs if r[6]]
        ts_list = [r[0] for r in mem]
        cpu_pre = [0]
        dev_pre = [0]
        for r in mem:
            cpu_pre.append(cpu_pre[-1] + (r[2] if r[3] in CPU_MEM_TYPES else 0))
            dev_pre.append(dev_pre[-1] + (r[2] if r[3] in DEVICE_MEM_TYPES else 0))
        cover = [0] * (len(mem) + 1)
        if mem:
            for ev in events:
                if ev.device_type != CPU:
                    continue
                lo = bisect.bisect_left(ts_list, ev.start_ns)
                hi = bisect.bisect_right(ts_list, ev.end_ns)
                if lo < hi:
                    ev.cpu_memory_usage += cpu_pre[hi] - cpu_pre[lo]
                    ev.device_memory_usage += dev_pre[hi] - dev_pre[lo]
                    cover[lo] += 1
                    cover[hi] -= 1
        out = []
        run = 0
        for k, r in enumerate(mem):
            run += cover[k]
            if run == 0:
                out.append(_mem_event("[memory]", r, t0))
        for r in oom:
            out.append(_mem_event("[OutOfMemory]", r, t0))
        return out


def _mem_event(name, r, t0):
    fe = FunctionEvent()
    fe.name = name
    fe.cat = "cpu_instant_event"
    fe.device_type = CPU
    fe.thread = (r[4], r[5])
    fe.start_ns = fe.end_ns = r[0]
    fe.start_us = fe.end_us = (r[0] - t0) / 1000
    fe.file_idx = -1
    fe.cpu_memory_usage = r[2] if r[3] in CPU_MEM_TYPES else 0
    fe.device_memory_usage = r[2] if r[3] in DEVICE_MEM_TYPES else 0
    return fe


def _split_overload(name):
    # "ns::op.overload" -> ("ns::op", "overload")
    if "::" not in name or " " in name:
        return name, ""
    head, sep, tail = name.rpartition(".")
    if not sep or "::" not in head or not tail or not all(c.isalnum() or c == "_" for c in tail):
        return name, ""
    return head, tail


# --------------------------------------------------------------------------
# tree (A3)


NEVER_ENDS = float("inf")  # an unfinished op with no finished ancestor


def _finish_unfinished(recs):
    """An op the profiler stopped inside of ("finished": false, stretched to
    the window end by Kineto) takes the end of the event enclosing it on its
    thread, as PyTorch's C++ build_tree and torchOpEndNS give it; with no
    finished ancestor it stays unfinished (dropped). build_tree's stacks hold
    torch ops and Python calls; an end before a later start pops."""
    tree = [r for r in recs if r["cat"] in TORCH_CATS or r["cat"] == "python_function"]
    if not any(r["unfinished"] for r in tree):
        return
    tree.sort(key=lambda r: (r["pid"], r["tid"], r["ts"], r["unfinished"],
                             0 if r["unfinished"] else r["ts"] - r["end"], r["i"]))
    stack, thread = [], None
    for r in tree:
        if (r["pid"], r["tid"]) != thread:
            stack, thread = [], (r["pid"], r["tid"])
        while stack and stack[-1] < r["ts"]:
            stack.pop()
        end = r["end"]
        if r["unfinished"]:
            end = stack[-1] if stack and stack[-1] != NEVER_ENDS else None
            if end is not None:
                r["end"], r["unfinished"] = end, False
        if end is None or end > r["ts"]:
            stack.append(NEVER_ENDS if end is None else end)


def build_tree(events):
    cpu = [ev for ev in events if ev.device_type == CPU and not ev.is_async]
    groups = {}
    for ev in cpu:  # events are already in (start, -end) order; grouping keeps it
        groups.setdefault(ev.thread, []).append(ev)
    for thread_events in groups.values():
        stack = []
        for ev in thread_events:
            while stack:
                p = stack[-1]
                if ev.start_us >= p.end_us or ev.end_us > p.end_us:
                    stack.pop()
                else:
                    p.children.append(ev)
                    ev.parent = p
                    break
            stack.append(ev)
    # _remove_dup_nodes
    while True:
        to_delete = set()
        for idx in range(len(events)):
            ev = events[idx]
            p = ev.parent
            if p is not None and p.name == ev.name and len(p.children) == 1:
                p.children = ev.children
                p.kernels = ev.kernels
                for ch in ev.children:
                    ch.parent = p
                to_delete.add(idx)
        if not to_delete:
            break
        events[:] = [ev for i, ev in enumerate(events) if i not in to_delete]
    return events


# --------------------------------------------------------------------------
# key_averages (A5)


class Row(object):
    __slots__ = ("key", "overload_name", "device_type", "is_user_annotation", "cpu_parent",
                 "input_shapes", "stack", "cpu_time_total", "device_time_total",
                 "self_cpu_time_total", "self_device_time_total", "cpu_memory_usage",
                 "device_memory_usage", "self_cpu_memory_usage", "self_device_memory_usage",
                 "count", "node_id", "flops", "is_legacy", "is_async")

    def __init__(self):
        self.key = None
        self.cpu_time_total = 0
        self.device_time_total = 0
        self.self_cpu_time_total = 0
        self.self_device_time_total = 0
        self.cpu_memory_usage = 0
        self.device_memory_usage = 0
        self.self_cpu_memory_usage = 0
        self.self_device_memory_usage = 0
        self.count = 0
        self.node_id = -1
        self.flops = 0
        self.is_legacy = False
        self.is_async = False

    @property
    def cpu_time(self):
        return 0.0 if self.count == 0 else self.cpu_time_total / self.count

    @property
    def device_time(self):
        return 0.0 if self.count == 0 else self.device_time_total / self.count


ROW_ATTRS = frozenset([
    "cpu_time_total", "device_time_total", "self_cpu_time_total", "self_device_time_total",
    "cpu_memory_usage", "device_memory_usage", "self_cpu_memory_usage",
    "self_device_memory_usage", "count", "node_id", "flops", "cpu_time", "device_time", "key",
])


def key_averages(events, use_device, group_by_shapes=False, group_by_stack_n=0,
                 group_by_overload=False):
    compute_device_totals(events, use_device)
    stats = {}
    for ev in events:
        key = [ev.name, "-1", ev.device_type, "False", str(ev.is_user_annotation)]
        if group_by_overload:
            key.append(ev.overload_name)
        if group_by_shapes:
            key.append(str(ev.input_shapes))
        if group_by_stack_n > 0:
            key += ev.stack[:group_by_stack_n]
        key = tuple(key)
        row = stats.get(key)
        if row is None:
            row = stats[key] = Row()
            row.key = ev.name
            row.overload_name = ev.overload_name
            row.device_type = ev.device_type
            row.is_user_annotation = ev.is_user_annotation
            row.cpu_parent = ev.parent
            row.input_shapes = ev.input_shapes
            row.stack = ev.stack
            row.is_async = ev.is_async
        row.cpu_time_total += ev.cpu_time_total
        row.device_time_total += ev._dev_total
        row.self_cpu_time_total += ev.self_cpu_time_total
        row.self_device_time_total += self_device_time_total(ev)
        row.cpu_memory_usage += ev.cpu_memory_usage
        row.device_memory_usage += ev.device_memory_usage
        row.self_cpu_memory_usage += ev.self_cpu_memory_usage
        row.self_device_memory_usage += ev.self_device_memory_usage
        row.count += 1
    rows = list(stats.values())
    for r in rows:
        r.stack = r.stack[:group_by_stack_n]
        if not group_by_shapes:
            r.input_shapes = ""
        if not group_by_overload:
            r.overload_name = ""
    return rows


# --------------------------------------------------------------------------
# table (A6)


def format_time(us):
    if us >= 1000.0 * 1000.0:
        return "%.3fs" % (us / (1000.0 * 1000.0))
    if us >= 1000.0:
        return "%.3fms" % (us / 1000.0)
    return "%.3fus" % us


def format_time_unit(us, unit):
    if unit == "s":
        return "%.3fs" % (us / (1000.0 * 1000.0))
    if unit == "ms":
        return "%.3fms" % (us / 1000.0)
    if unit == "us":
        return "%.3fus" % us
    return format_time(us)


def format_share(v, total):
    if total == 0:
        if v != 0:
            raise OracleError("PyTorch would raise AssertionError: Expected time_us == 0 but got %r" % (v,))
        return "NaN"
    return "%.2f%%" % (v * 100.0 / total)


def format_memory(n):
    K = 1024
    M = 1024 * K
    G = 1024 * M
    if abs(n) >= G:
        return "%.2f GB" % (n * 1.0 / G)
    if abs(n) >= M:
        return "%.2f MB" % (n * 1.0 / M)
    if abs(n) >= K:
        return "%.2f KB" % (n * 1.0 / K)
    return str(n) + " B"


def build_table(rows, use_device, device_label, profile_memory, sort_by=None, row_limit=100,
                max_src_column_width=75, max_name_column_width=55, max_shapes_column_width=80,
                header=None, top_level_events_only=False, time_unit=None):
    if len(rows) == 0:
        return ""
    has_device_time = any(r.self_device_time_total > 0 for r in rows)
    has_device_mem = any(r.self_device_memory_usage > 0 for r in rows)
    if not use_device and has_device_time:
        raise OracleError("use_device is None, but there is device performance data.")
    has_input_shapes = any(r.input_shapes is not None and len(r.input_shapes) > 0 for r in rows)
    has_overload_names = any(r.overload_name is not None and len(r.overload_name) > 0 for r in rows)

    if sort_by is not None:
        attr = sort_by.replace("cuda", "device").replace("xpu", "device").replace("privateuse1", "device")
        if attr not in ROW_ATTRS:
            raise OracleError("unknown sort key %r" % sort_by)
        rows = sorted(rows, key=lambda r: getattr(r, attr), reverse=True)

    name_w = max(len(r.key) for r in rows) + 4
    if max_name_column_width is not None:
        name_w = min(name_w, max_name_column_width)
    shapes_w = max(len(str(r.input_shapes)) for r in rows) + 4
    if max_shapes_column_width is not None:
        shapes_w = min(shapes_w, max_shapes_column_width)
    W = 12
    stacks = [r.stack for r in rows if r.stack is not None and len(r.stack) > 0]
    has_stack = len(stacks) > 0
    src_w = None
    if has_stack:
        src_w = max(max(len(e) for e in s) for s in stacks) + 4
        if max_src_column_width is not None:
            src_w = min(src_w, max_src_column_width)

    headers = ["Name"]
    if has_overload_names:
        headers.append("Overload Name")
    headers += ["Self CPU %", "Self CPU", "CPU total %", "CPU total", "CPU time avg"]
    D = device_label if use_device else "None"
    if has_device_time:
        headers += ["Self %s" % D, "Self %s %%" % D, "%s total" % D, "%s time avg" % D]
    if profile_memory:
        headers += ["CPU Mem", "Self CPU Mem"]
        if use_device and has_device_mem:
            headers += ["%s Mem" % D, "Self %s Mem" % D]
    headers.append("# of Calls")
    append_node_id = any(r.node_id != -1 for r in rows)
    if append_node_id:
        headers.append("Node ID")

    fmt = [""]
    sep = [""]
    line_len = [-2]

    def add_column(w, d=">"):
        fmt[0] += "{: " + d + str(w) + "}" + "  "
        sep[0] += "-" * w + "  "
        line_len[0] += w + 2

    add_column(name_w)
    if has_overload_names:
        add_column(name_w)
    for _ in headers[1 + int(has_overload_names):]:
        add_column(W)
    if has_input_shapes:
        headers.append("Input Shapes")
        add_column(shapes_w)
    if has_stack:
        headers.append("Source Location")
        add_column(src_w, "<")
    row_format, header_sep, line_length = fmt[0], sep[0], line_len[0]

    out = []

    def append(s):
        out.append(s)
        out.append("\n")

    sum_self_cpu = 0
    sum_self_dev = 0
    for r in rows:
        sum_self_cpu += r.self_cpu_time_total
        if r.device_type == CPU and r.is_legacy:
            sum_self_dev += r.self_device_time_total
        elif r.device_type in (CUDA, PRIVATEUSE1, MTIA) and not r.is_user_annotation:
            sum_self_dev += r.self_device_time_total

    if header is not None:
        append("=" * line_length)
        append(header)
    if top_level_events_only:
        append("=" * line_length)
        append("This report only display top-level ops statistics")
    append(header_sep)
    append(row_format.format(*headers))
    append(header_sep)

    def trim_path(path):
        if len(path) > src_w:
            path = path[len(path) - src_w:]
            if len(path) > 3:
                path = "..." + path[3:]
        return path

    def t(us):
        return format_time_unit(us, time_unit)

    limit = 0
    for r in rows:
        if limit == row_limit:
            break
        if top_level_events_only and r.cpu_parent is not None:
            continue
        limit += 1
        name = r.key
        if max_name_column_width is not None and len(name) >= max_name_column_width - 3:
            name = name[:max_name_column_width - 3] + "..."
        vals = [name]
        if has_overload_names:
            ov = r.overload_name
            if max_name_column_width is not None and len(ov) >= max_name_column_width - 3:
                ov = ov[:max_name_column_width - 3] + "..."
            vals.append(ov)
        vals += [
            format_share(r.self_cpu_time_total, sum_self_cpu),
            t(r.self_cpu_time_total),
            format_share(r.cpu_time_total, sum_self_cpu) if not r.is_async else 0,
            t(r.cpu_time_total),
            t(r.cpu_time),
        ]
        if has_device_time:
            vals += [
                t(r.self_device_time_total),
                format_share(r.self_device_time_total, sum_self_dev),
                t(r.device_time_total),
                t(r.device_time),
            ]
        if profile_memory:
            vals += [format_memory(r.cpu_memory_usage), format_memory(r.self_cpu_memory_usage)]
            if use_device and has_device_mem:
                vals += [format_memory(r.device_memory_usage), format_memory(r.self_device_memory_usage)]
        vals.append(r.count)
        if append_node_id:
            vals.append(r.node_id)
        if has_input_shapes:
            vals.append(str(r.input_shapes)[:shapes_w])
        if has_stack:
            vals.append(trim_path(r.stack[0]) if len(r.stack) > 0 else "")
        append(row_format.format(*vals))
        if has_stack:
            empty = [""] * (len(headers) - 1)
            for entry in r.stack[1:]:
                append(row_format.format(*(empty + [trim_path(entry)])))
            empty.append("")
            append(row_format.format(*empty))

    append(header_sep)
    append("Self CPU time total: %s" % t(sum_self_cpu))
    if has_device_time:
        append("Self %s time total: %s" % (D, t(sum_self_dev)))
    return "".join(out)


# --------------------------------------------------------------------------
# driver


def device_label_for(use_device, device_name=None):
    if not use_device:
        return None
    if device_name:
        return device_name.upper()
    if use_device == "privateuse1":
        return "NEURON"
    return use_device.upper()


def table_for_data(data, sort_by=None, row_limit=100, device_name=None, top_level_only=False,
                   time_unit=None, group_by=()):
    shapes = False
    overload = False
    stack_n = 0
    for g in group_by:
        for part in g.split(","):
            part = part.strip()
            if not part:
                continue
            if part in ("shape", "shapes", "input_shape", "input_shapes"):
                shapes = True
            elif part in ("overload", "overload_name"):
                overload = True
            elif part.startswith("stack="):
                stack_n = int(part[len("stack="):])
            else:
                raise OracleError("unknown --group-by %r" % part)
    tr = Trace(data, split_overloads=overload)
    events = build_tree(tr.events)
    rows = key_averages(events, tr.use_device, shapes, stack_n, overload)
    return build_table(rows, tr.use_device, device_label_for(tr.use_device, device_name),
                       tr.profile_memory, sort_by=sort_by, row_limit=row_limit,
                       top_level_events_only=top_level_only, time_unit=time_unit)


def table_for_file(path, **kw):
    return table_for_data(load_trace(path), **kw)


def main(argv=None):
    ap = argparse.ArgumentParser(description="PyTorch key_averages().table() from a Kineto trace (reference)")
    ap.add_argument("trace")
    ap.add_argument("--sort", default=None)
    ap.add_argument("--row-limit", type=int, default=100)
    ap.add_argument("--device-name", default=None)
    ap.add_argument("--top-level-only", action="store_true")
    ap.add_argument("--time-unit", choices=["s", "ms", "us"], default=None)
    ap.add_argument("--group-by", action="append", default=[])
    a = ap.parse_args(argv)
    gc.disable()   # no cycles need collecting; makes json.load of big traces 3-4x faster
    sort_by = a.sort
    if sort_by is not None:
        # neuron-stats' own aliases (not PyTorch attributes): self_neuron, neuron_time_total, ...
        sort_by = sort_by.replace("neuron", "device")
        if sort_by not in ROW_ATTRS and sort_by + "_time_total" in ROW_ATTRS:
            sort_by += "_time_total"      # self_neuron -> self_device_time_total
    try:
        out = table_for_file(a.trace, sort_by=sort_by, row_limit=a.row_limit, device_name=a.device_name,
                             top_level_only=a.top_level_only, time_unit=a.time_unit, group_by=a.group_by)
    except OracleError as ex:
        sys.stderr.write("key_averages.py: error: %s\n" % ex)
        return 3
    except (ValueError, OSError) as ex:
        sys.stderr.write("key_averages.py: error: %s: %s\n" % (a.trace, ex))
        return 1
    sys.stdout.write(out)
    return 0


if __name__ == "__main__":
    sys.exit(main())
