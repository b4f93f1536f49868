#!/usr/bin/env python3
"""Generate a large, realistic (synthetic) CUDA Kineto trace for benchmarks.

    python3 bench/gen_trace.py --size 1G -o bench/out/trace-1G.json [--seed 7]

* Deterministic: the same --size/--seed always gives the same bytes.
* Streaming: the file is written step by step, so memory use stays small (a
  temporary side file holds the Kineto activities, which, as in real traces,
  come after all the torch events; it is appended at the end).
* Era-C format (baseTimeNanoseconds, µs with 3 decimals), CUDA backend, H100
  deviceProperties, profile_memory + record_shapes + with_stack metadata.
* Event mix, modelled on the real CUDA traces in /work/shared/corpus (TraceLens
  h100/*, HTA, param): about 35% cpu_op, 20% python_function, 15% cuda_runtime
  (+ a few cuda_driver), 12% kernel (+ gpu_memcpy/gpu_memset), 15% ac2g flow
  events, ~3% [memory] instants, one user_annotation ProfilerStep#N per step
  (plus Optimizer.step), a gpu_user_annotation per step (widened 1 ns, as Kineto
  writes it), a backward pass on a second (autograd) thread, and realistic
  args (Input Dims / Input type / Input Strides / Concrete Inputs, kernel
  grid/block/registers/occupancy, memcpy bytes/bandwidth).
* A sidecar FILE.meta.json records the byte size and the event counts by
  category (used by bench/run.sh for events/s).

Sizes accept K/M/G suffixes, decimal (1G = 10^9 bytes); the file stops at the
first step boundary after the target size.
"""

import argparse
import json
import os
import random
import sys

BASE_TIME_NS = 1767225600000000000
PID = 28731
MAIN_TID = 28731
BWD_TID = 28802
STREAM = 7
STREAM2 = 20


def parse_size(s):
    s = s.strip().upper().rstrip("B")
    mult = 1
    if s and s[-1] in "KMGT":
        mult = {"K": 10 ** 3, "M": 10 ** 6, "G": 10 ** 9, "T": 10 ** 12}[s[-1]]
        s = s[:-1]
    return int(float(s) * mult)


def us(ns):
    return "%d.%03d" % (ns // 1000, ns % 1000)


J = json.JSONEncoder(ensure_ascii=False, separators=(", ", ": ")).encode

# ---------------------------------------------------------------------------
# realistic payloads

GEMM_KERNELS = [
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_tn_n_tilesize128x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void cutlass::Kernel2<cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8>(cutlass_80_tensorop_bf16_s16816gemm_relu_bf16_64x64_64x4_tn_align8::Params)",
    "sm90_xmma_gemm_bf16bf16_bf16f32_f32_nn_n_tilesize64x128x64_warpgroupsize1x1x1_execute_segment_k_off_kernel__5x_cublas",
    "void cutlass::Kernel2<cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8>(cutlass_80_wmma_tensorop_bf16_s161616gemm_bf16_16x16_128x1_tn_align8::Params)",
]
EW_KERNELS = {
    "aten::add": "void at::native::vectorized_elementwise_kernel<4, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul> >(int, at::native::CUDAFunctor_add<c10::BFloat16>, std::array<char*, 3ul>)",
    "aten::mul": "void at::native::vectorized_elementwise_kernel<4, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul> >(int, at::native::BinaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::MulFunctor<float> >, std::array<char*, 3ul>)",
    "aten::gelu": "void at::native::vectorized_elementwise_kernel<4, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::GeluCUDAKernelImpl(at::TensorIteratorBase&, at::native::GeluType)::{lambda()#2}::operator()() const::{lambda()#4}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
    "aten::relu": "void at::native::vectorized_elementwise_kernel<4, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul> >(int, at::native::(anonymous namespace)::launch_clamp_scalar(at::TensorIteratorBase&, c10::Scalar, c10::Scalar, at::native::detail::ClampLimits)::{lambda()#1}::operator()() const::{lambda()#14}::operator()() const::{lambda(c10::BFloat16)#1}, std::array<char*, 2ul>)",
    "aten::div": "void at::native::vectorized_elementwise_kernel<4, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<float> >, std::array<char*, 2ul> >(int, at::native::BUnaryFunctor<c10::BFloat16, c10::BFloat16, c10::BFloat16, at::native::binary_internal::DivFunctor<float> >, std::array<char*, 2ul>)",
}
LN_KERNEL = "void at::native::(anonymous namespace)::vectorized_layer_norm_kernel<c10::BFloat16, float>(int, float, c10::BFloat16 const*, c10::BFloat16 const*, c10::BFloat16 const*, float*, float*, c10::BFloat16*)"
SOFTMAX_KERNEL = "void (anonymous namespace)::softmax_warp_forward<c10::BFloat16, c10::BFloat16, float, 9, false, false>(c10::BFloat16*, c10::BFloat16 const*, int, int, int, bool const*, int, bool)"
FLASH_KERNEL = "void pytorch_flash::flash_fwd_kernel<pytorch_flash::Flash_fwd_kernel_traits<64, 128, 128, 4, false, false, cutlass::bfloat16_t, pytorch_flash::Flash_kernel_traits<64, 128, 128, 4, cutlass::bfloat16_t> >, false, true, false, false, true, true, false, false>(pytorch_flash::Flash_fwd_params)"
REDUCE_KERNEL = "void at::native::reduce_kernel<512, 1, at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4> >(at::native::ReduceOp<float, at::native::func_wrapper_t<float, at::native::sum_functor<float, float, float>::operator()(at::TensorIterator&)::{lambda(float, float)#1}>, unsigned int, float, 4, 4>)"
SGD_KERNEL = "void at::native::(anonymous namespace)::multi_tensor_apply_kernel<at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<c10::BFloat16, 3>, double, c10::BFloat16*, double, double, bool, bool, bool, float const*, float const*>(at::native::(anonymous namespace)::TensorListMetadata<3>, at::native::(anonymous namespace)::FusedSgdMathFunctor<c10::BFloat16, 3>, double, c10::BFloat16*, double, double, bool, bool, bool, float const*, float const*)"

PY_FILES = [
    ("torch/nn/modules/module.py", 1762, "_call_impl"),
    ("torch/nn/modules/module.py", 1751, "_wrapped_call_impl"),
    ("torch/nn/modules/linear.py", 125, "forward"),
    ("torch/nn/modules/normalization.py", 217, "forward"),
    ("torch/nn/functional.py", 2910, "layer_norm"),
    ("transformers/models/bert/modeling_bert.py", 409, "forward"),
    ("transformers/models/bert/modeling_bert.py", 257, "forward"),
    ("torch/nn/modules/activation.py", 734, "forward"),
    ("torch/_tensor.py", 39, "wrapped"),
]

B, S, H, FF, HEADS = 8, 512, 1024, 4096, 16


def dims_args(dims, types, strides=None, concrete=None):
    a = {}
    if concrete is None:
        concrete = [""] * len(dims)
    a["Concrete Inputs"] = concrete
    a["Input type"] = types
    a["Input Strides"] = strides if strides is not None else [contig(d) for d in dims]
    a["Input Dims"] = dims
    return a


def contig(d):
    if not d:
        return []
    st = [1] * len(d)
    for i in range(len(d) - 2, -1, -1):
        st[i] = st[i + 1] * d[i + 1]
    return st


class Step(object):
    """Collects one profiler step's events, then writes them."""

    def __init__(self, g, number):
        self.g = g
        self.n = number
        self.torch = []   # (start, seq, line-without-evidx) ... sorted at flush
        self.acts = []    # activity lines (already formatted)
        self.seq = 0


class Gen(object):
    def __init__(self, seed):
        self.rng = random.Random(seed)
        self.cpu = 1000000000          # ns after the base
        self.t0 = self.cpu - 750000
        self.ext = 1
        self.corr = 50000
        self.ev_idx = 0
        self.py_id = 1
        self.dev_free = {STREAM: 0, STREAM2: 0}
        self.counts = {}
        self.total_alloc = 1 << 30
        self.addr = 0x7F5C40000000
        self.step = None
        self.stack = []           # open torch records on the current thread
        self.tid = MAIN_TID
        self.first_kernel = None
        self.last_kernel_end = 0
        self.seq_nr = 10000

    # -- primitives ---------------------------------------------------------
    def cnt(self, cat, n=1):
        self.counts[cat] = self.counts.get(cat, 0) + n

    def adv(self, lo, hi):
        self.cpu += self.rng.randint(lo, hi)

    def open(self, cat, name, args=None, seq_nr=False):
        rec = [cat, name, self.cpu, None, self.tid, args, None, self.step.seq]
        self.step.seq += 1
        if cat == "python_function":
            rec[6] = self.py_id
            self.py_id += 1
            rec[5] = None     # parent python id
            for p in reversed(self.stack):
                if p[0] == "python_function":
                    rec[5] = p[6]
                    break
        else:
            rec[6] = self.ext
            self.ext += 1
            if seq_nr:
                self.seq_nr += 1
                rec.append(self.seq_nr)
        self.stack.append(rec)
        self.step.torch.append(rec)
        self.cnt(cat)
        return rec

    def close(self, rec):
        top = self.stack.pop()
        assert top is rec
        rec[3] = self.cpu - rec[2]

    def cpu_op(self, name, args, body=None, pre=(800, 2500), post=(300, 1200), seq_nr=False):
        rec = self.open("cpu_op", name, args, seq_nr)
        self.adv(*pre)
        if body:
            body()
        self.adv(*post)
        self.close(rec)

    def py(self, name, body, pre=(200, 900), post=(200, 700)):
        rec = self.open("python_function", name)
        self.adv(*pre)
        body()
        self.adv(*post)
        self.close(rec)

    def mem(self, nbytes, dev_type=1):
        if self.rng.random() >= 0.3:     # the caching allocator hides most requests
            return
        self.adv(50, 300)
        self.total_alloc += nbytes
        a = self.addr
        self.addr += (abs(nbytes) + 511) // 512 * 512
        rec = ["[memory]", None, self.cpu, None, self.tid,
               {"Total Reserved": 8589934592, "Total Allocated": self.total_alloc, "Bytes": nbytes,
                "Addr": a, "Device Id": 0 if dev_type == 1 else -1, "Device Type": dev_type},
               None, self.step.seq]
        self.step.seq += 1
        self.step.torch.append(rec)
        self.cnt("[memory]")
        self.adv(50, 200)

    def builtin(self, what, fn):
        """Python tracer frame for a call into C++ (e.g. torch.add)."""
        self.py("<built-in method %s of type object at 0x7f5c9a2b1c40>" % what, fn, pre=(100, 400), post=(100, 300))

    def submodule(self, kind, fn):
        """nn.Module.__call__ frames around a submodule's forward."""
        self.mod_idx = getattr(self, "mod_idx", 0) + 1
        self.py("torch/nn/modules/module.py(1751): _wrapped_call_impl", lambda: self.py(
            "torch/nn/modules/module.py(1762): _call_impl", lambda: self.py(
                "nn.Module: %s_%d" % (kind, self.mod_idx % 48), fn, pre=(100, 300), post=(100, 300)),
            pre=(100, 400), post=(100, 300)), pre=(100, 400), post=(100, 300))

    def cur_ext(self):
        for rec in reversed(self.stack):
            if rec[0] == "cpu_op":
                return rec[6]
        return None

    def runtime(self, name, cbid, dev=None, driver=False, flow=False):
        """A runtime (or driver) call; dev = (cat, name, dur_ns, args, stream)
        enqueues a device activity linked by correlation/External id/ac2g."""
        self.adv(300, 1500)
        ts = self.cpu
        dur = self.rng.randint(2500, 9000) if dev else self.rng.randint(300, 3000)
        corr = self.corr
        self.corr += 1
        ext = self.cur_ext()
        args = {}
        if ext is not None:
            args["External id"] = ext
        args["cbid"] = cbid
        args["correlation"] = corr
        cat = "cuda_driver" if driver else "cuda_runtime"
        acts = self.step.acts
        acts.append('{"ph": "X", "cat": "%s", "name": "%s", "pid": %d, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                    % (cat, name, PID, self.tid, us(ts), us(dur), J(args)))
        self.cnt(cat)
        if dev is not None or flow:
            acts.append('{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                        % (corr, PID, self.tid, us(ts)))
            self.cnt("ac2g")
        if dev is not None:
            dcat, dname, ddur, dargs, stream = dev
            dts = max(ts + self.rng.randint(3000, 9000), self.dev_free[stream] + self.rng.randint(500, 2500))
            self.dev_free[stream] = dts + ddur
            a = {}
            if ext is not None:
                a["External id"] = ext
            if dcat == "kernel":
                a["queued"] = 0
            a["device"] = 0
            a["context"] = 1
            a["stream"] = stream
            a["correlation"] = corr
            a.update(dargs)
            acts.append('{"ph": "X", "cat": "%s", "name": %s, "pid": 0, "tid": %d, "ts": %s, "dur": %s, "args": %s}'
                        % (dcat, J(dname), stream, us(dts), us(ddur), J(a)))
            acts.append('{"ph": "f", "id": %d, "pid": 0, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g", "bp": "e"}'
                        % (corr, stream, us(dts)))
            self.cnt(dcat)
            self.cnt("ac2g")
            if stream == STREAM:
                if self.first_kernel is None:
                    self.first_kernel = dts
                self.last_kernel_end = max(self.last_kernel_end, dts + ddur)
        self.cpu = ts + dur

    def kernel_args(self, grid, block, regs, smem):
        blocks = grid[0] * grid[1] * grid[2]
        return {"registers per thread": regs, "shared memory": smem,
                "blocks per SM": round(blocks / 132.0, 6),
                "warps per SM": round(blocks * (block[0] * block[1] * block[2] // 32) / 132.0, 6),
                "grid": grid, "block": block, "est. achieved occupancy %": self.rng.choice([12, 25, 50, 75, 100])}

    def launch(self, kname, lo, hi, grid=None, block=None, stream=STREAM, driver=False):
        r = self.rng
        if r.random() < 0.45:
            name, cbid = r.choice([("cudaStreamIsCapturing", 317), ("cudaGetDevice", 17),
                                   ("cudaDeviceGetAttribute", 200), ("cudaFuncGetAttributes", 15)])
            self.runtime(name, cbid)
        grid = grid or [r.choice([64, 128, 264, 528, 1056, 4096]), r.choice([1, 1, 2, 8]), 1]
        block = block or [r.choice([128, 256, 512]), 1, 1]
        dev = ("kernel", kname, r.randint(lo, hi), self.kernel_args(grid, block, r.choice([16, 32, 64, 128, 168]),
                                                                     r.choice([0, 0, 4096, 49152, 98304])), stream)
        if driver:
            self.runtime("cuLaunchKernel", 307, dev, driver=True)
        else:
            self.runtime(r.choice(["cudaLaunchKernel"] * 6 + ["cudaLaunchKernelExC"]),
                         211, dev)

    # -- op templates --------------------------------------------------------
    def t_linear(self, out_f=None, in_f=None):
        r = self.rng
        in_f = in_f or r.choice([H, FF])
        out_f = out_f or r.choice([H, FF, 3 * H])
        x = [B, S, in_f]
        w = [out_f, in_f]

        def linear():
            def t():
                self.cpu_op("aten::transpose", dims_args([w, [], []], ["c10::BFloat16", "Scalar", "Scalar"],
                                                           None, ["", "0", "1"]),
                            lambda: self.cpu_op("aten::as_strided",
                                                dims_args([w, [], [], []], ["c10::BFloat16", "", "", ""],
                                                          None, ["", "[%d, %d]" % (in_f, out_f), "[1, %d]" % in_f, ""]),
                                                pre=(300, 800), post=(100, 300)),
                            pre=(400, 900), post=(100, 400))
            self.cpu_op("aten::t", dims_args([w], ["c10::BFloat16"]), t, pre=(500, 1200), post=(100, 300))

            def addmm():
                self.mem(B * S * out_f * 2)
                self.launch(r.choice(GEMM_KERNELS), 8000, 180000, grid=[r.choice([66, 132, 264]), r.choice([1, 2, 4]), 1],
                            block=[384, 1, 1])
            self.cpu_op("aten::addmm", dims_args([[out_f], [B * S, in_f], [in_f, out_f], [], []],
                                                 ["c10::BFloat16", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"],
                                                 None, ["", "", "", "1", "1"]), addmm, pre=(2000, 6000))
            self.cpu_op("aten::view", dims_args([[B * S, out_f], []], ["c10::BFloat16", "ScalarList"], None,
                                                ["", "[%d, %d, %d]" % (B, S, out_f)]), pre=(400, 900), post=(100, 300))
        self.submodule("Linear", lambda: self.py("torch/nn/modules/linear.py(125): forward",
                lambda: self.builtin("linear", lambda: self.cpu_op("aten::linear", dims_args([x, w, [out_f]], ["c10::BFloat16"] * 3), linear,
                                    seq_nr=True))))

    def t_elementwise(self):
        r = self.rng
        name = r.choice(list(EW_KERNELS))
        shape = [B, S, r.choice([H, FF])]

        def body():
            self.mem(shape[0] * shape[1] * shape[2] * 2)
            self.launch(EW_KERNELS[name], 2000, 30000)
        n_in = 1 if name in ("aten::gelu", "aten::relu") else 2
        types = ["c10::BFloat16"] * n_in
        dims = [shape] * n_in
        conc = [""] * n_in
        if name == "aten::add":
            dims.append([])
            types.append("Scalar")
            conc.append("1")
        self.builtin(name[len("aten::"):], lambda: self.cpu_op(name, dims_args(dims, types, None, conc), body, seq_nr=True))

    def t_views(self):
        r = self.rng
        for _ in range(r.randint(1, 2)):
            name = r.choice(["aten::view", "aten::reshape", "aten::permute", "aten::slice", "aten::unsqueeze",
                             "aten::contiguous", "aten::detach", "aten::expand"])
            if name == "aten::slice":
                a = dims_args([[B, S], [], [], [], []], ["long int", "Scalar", "Scalar", "Scalar", "Scalar"], None,
                              ["", "0", "0", "9223372036854775807", "1"])
            elif name == "aten::permute":
                a = dims_args([[B, S, HEADS, H // HEADS], []], ["c10::BFloat16", "ScalarList"], None,
                              ["", "[0, 2, 1, 3]"])
            else:
                a = dims_args([[B, S, H], []], ["c10::BFloat16", "ScalarList"], None, ["", "[%d, %d, %d, %d]" % (B, S, HEADS, H // HEADS)])

            def inner(name=name):
                if name in ("aten::reshape", "aten::contiguous") and r.random() < 0.5:
                    self.cpu_op("aten::view" if name == "aten::reshape" else "aten::clone",
                                dims_args([[B, S, H], []], ["c10::BFloat16", "ScalarList"]),
                                pre=(300, 800), post=(100, 300))
                if name == "aten::slice" or name == "aten::expand":
                    self.cpu_op("aten::as_strided", dims_args([[B, S], [], [], []], ["long int", "", "", ""]),
                                pre=(200, 600), post=(100, 200))
            if r.random() < 0.6:
                self.py("<built-in method %s of Tensor object at 0x7f5c61e3a0f0>" % name[len("aten::"):],
                        lambda name=name, a=a, inner=inner: self.cpu_op(name, a, inner, pre=(400, 1500), post=(100, 500)),
                        pre=(100, 300), post=(100, 300))
            else:
                self.cpu_op(name, a, inner, pre=(400, 1500), post=(100, 500))
            # bookkeeping ops that PyTorch filters out of the table
            if r.random() < 0.05:
                self.cpu_op(r.choice(["aten::is_leaf", "aten::output_nr", "aten::_version"]),
                            dims_args([[B, S, H]], ["c10::BFloat16"]), pre=(100, 300), post=(50, 100))

    def t_layer_norm(self):
        r = self.rng
        x = [B, S, H]

        def native():
            self.cpu_op("aten::empty_like", dims_args([x, [], [], [], [], []], ["c10::BFloat16", "", "", "", "", ""]),
                        lambda: self.cpu_op("aten::empty_strided", dims_args([[], [], [], [], [], []],
                                                                             ["ScalarList", "ScalarList", "Scalar", "", "Device", "Scalar"],
                                                                             None, ["[8, 512, 1024]", "[524288, 1024, 1]", "15", "", "cuda:0", "False"])),
                        pre=(300, 900))
            self.mem(B * S * H * 2)
            self.cpu_op("aten::empty", dims_args([[], [], [], [], [], []], ["ScalarList", "Scalar", "", "Device", "Scalar", ""]),
                        lambda: self.mem(B * S * 4), pre=(300, 800))
            self.cpu_op("aten::empty", dims_args([[], [], [], [], [], []], ["ScalarList", "Scalar", "", "Device", "Scalar", ""]),
                        lambda: self.mem(B * S * 4), pre=(300, 800))
            self.launch(LN_KERNEL, 3000, 25000)

        def ln():
            self.cpu_op("aten::layer_norm", dims_args([x, [], [H], [H], [], []], ["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar", "Scalar"],
                                                      None, ["", "[1024]", "", "", "1e-12", "True"]),
                        lambda: self.cpu_op("aten::native_layer_norm", dims_args([x, [], [H], [H], []], ["c10::BFloat16", "ScalarList", "c10::BFloat16", "c10::BFloat16", "Scalar"]),
                                            native, seq_nr=True), seq_nr=True)
        self.submodule("LayerNorm", lambda: self.py("torch/nn/modules/normalization.py(217): forward",
                lambda: self.py("torch/nn/functional.py(2910): layer_norm", ln)))

    def t_attention(self):
        r = self.rng
        q = [B, HEADS, S, H // HEADS]

        def fa():
            self.cpu_op("aten::empty", dims_args([[], [], [], [], [], []], ["ScalarList", "Scalar", "", "Device", "Scalar", ""]),
                        lambda: self.mem(B * S * H * 2), pre=(300, 800))
            self.launch(FLASH_KERNEL, 20000, 160000, grid=[4, B * HEADS, 1], block=[128, 1, 1])

        def sdpa():
            self.cpu_op("aten::_scaled_dot_product_flash_attention", dims_args([q, q, q, [], [], [], []],
                                                                               ["c10::BFloat16"] * 3 + ["Scalar", "Scalar", "Scalar", ""]),
                        lambda: self.cpu_op("aten::_flash_attention_forward", dims_args([q, q, q] + [[]] * 7, ["c10::BFloat16"] * 3 + [""] * 7), fa),
                        seq_nr=True)
        self.cpu_op("aten::scaled_dot_product_attention", dims_args([q, q, q, [], [], [], [], []],
                                                                    ["c10::BFloat16"] * 3 + ["", "Scalar", "Scalar", "", "Scalar"],
                                                                    None, ["", "", "", "", "0.0", "False", "", "False"]), sdpa)
        if r.random() < 0.3:
            def sm():
                self.mem(B * HEADS * S * S * 2)
                self.launch(SOFTMAX_KERNEL, 5000, 40000)
            self.cpu_op("aten::softmax", dims_args([[B, HEADS, S, S], [], []], ["c10::BFloat16", "Scalar", ""], None, ["", "-1", ""]),
                        lambda: self.cpu_op("aten::_softmax", dims_args([[B, HEADS, S, S], [], []], ["c10::BFloat16", "Scalar", "Scalar"]), sm))

    def t_copy(self):
        r = self.rng
        nbytes = r.choice([4, 8, 4096, 65536, B * S * 8])
        kind = r.choice(["HtoD", "DtoH"])

        def copy_():
            name = "Memcpy HtoD (Pageable -> Device)" if kind == "HtoD" else "Memcpy DtoH (Device -> Pinned)"
            dur = r.randint(1500, 9000)
            self.runtime("cudaMemcpyAsync", 41, ("gpu_memcpy", name, dur,
                                                 {"bytes": nbytes, "memory bandwidth (GB/s)": round(nbytes / dur, 6)}, STREAM))
            self.runtime("cudaStreamSynchronize", 131, flow=True)

        def to_copy():
            self.cpu_op("aten::empty_strided", dims_args([[], [], [], [], [], []], ["ScalarList", "ScalarList", "Scalar", "", "Device", "Scalar"]),
                        lambda: self.mem(nbytes, 1 if kind == "HtoD" else 0), pre=(500, 1500))
            self.cpu_op("aten::copy_", dims_args([[B, S], [B, S], []], ["long int", "long int", "Scalar"], None, ["", "", "False"]), copy_)
        self.cpu_op("aten::to", dims_args([[B, S], [], [], [], [], []], ["long int", "", "Scalar", "", "", ""]),
                    lambda: self.cpu_op("aten::_to_copy", dims_args([[B, S], [], [], [], [], [], []], ["long int"] + [""] * 6), to_copy))

    def t_misc_runtime(self):
        r = self.rng
        name, cbid = r.choice([("cudaStreamIsCapturing", 317), ("cudaGetDevice", 17), ("cudaDeviceGetAttribute", 200),
                               ("cudaFuncSetAttribute", 273), ("cudaPeekAtLastError", 4)])

        def body():
            self.runtime(name, cbid)
            if r.random() < 0.5:
                self.mem(-r.choice([4096, 65536, 1048576]))
            if r.random() < 0.4:
                self.runtime("cudaMemsetAsync", 51, ("gpu_memset", "Memset (Device)", r.randint(800, 3000),
                                                     {"bytes": 4096, "memory bandwidth (GB/s)": 2.1}, STREAM))
            if r.random() < 0.5:
                self.launch(REDUCE_KERNEL, 2000, 20000, driver=r.random() < 0.3)
        self.cpu_op(r.choice(["aten::sum", "aten::zero_", "aten::fill_", "aten::index_select"]),
                    dims_args([[B, S, H], []], ["c10::BFloat16", "Scalar"]), body, seq_nr=True)

    def module(self, idx):
        r = self.rng

        def body():
            self.py("torch/nn/modules/module.py(1751): _wrapped_call_impl", lambda: self.py(
                "torch/nn/modules/module.py(1762): _call_impl", lambda: self.py(
                    "transformers/models/bert/modeling_bert.py(409): forward", block)))

        def block():
            for _ in range(r.randint(8, 14)):
                x = r.random()
                if x < 0.30:
                    self.t_linear()
                elif x < 0.55:
                    self.t_elementwise()
                elif x < 0.80:
                    self.t_views()
                elif x < 0.88:
                    self.t_layer_norm()
                elif x < 0.94:
                    self.t_attention()
                elif x < 0.97:
                    self.t_misc_runtime()
                else:
                    self.t_copy()
        self.py("nn.Module: BertLayer_%d" % idx, body)

    def backward(self, nops):
        """The backward pass: autograd engine ops on the autograd thread."""
        r = self.rng
        saved = self.tid
        self.tid = BWD_TID
        for _ in range(nops):
            fn = r.choice(["AddmmBackward0", "MulBackward0", "NativeLayerNormBackward0", "GeluBackward0",
                           "ViewBackward0", "AddBackward0", "ScaledDotProductFlashAttentionBackward0"])

            def inner(fn=fn):
                def node():
                    if fn in ("ViewBackward0", "AddBackward0"):
                        self.cpu_op("aten::reshape", dims_args([[B * S, H], []], ["c10::BFloat16", "ScalarList"]),
                                    lambda: self.cpu_op("aten::view", dims_args([[B * S, H], []], ["c10::BFloat16", "ScalarList"]),
                                                        pre=(200, 600), post=(100, 200)), pre=(300, 800))
                        return
                    if fn == "AddmmBackward0":
                        for _ in range(2):
                            self.cpu_op("aten::mm", dims_args([[B * S, H], [H, FF]], ["c10::BFloat16"] * 2),
                                        lambda: (self.mem(B * S * H * 2), self.launch(r.choice(GEMM_KERNELS), 10000, 200000)))
                        return
                    self.cpu_op("aten::" + fn[:-len("Backward0")].lower() + "_backward",
                                dims_args([[B, S, H], [B, S, H]], ["c10::BFloat16"] * 2),
                                lambda: (self.mem(B * S * H * 2), self.launch(r.choice(list(EW_KERNELS.values())), 3000, 40000)))
                self.cpu_op(fn, {}, node, seq_nr=True)
            self.cpu_op("autograd::engine::evaluate_function: " + fn, {}, inner, pre=(1500, 4000))
            if r.random() < 0.3:
                self.mem(-B * S * H * 2)
        self.tid = saved

    def optimizer(self):
        r = self.rng
        rec = self.open("user_annotation", "Optimizer.step#SGD.step")
        self.adv(2000, 6000)
        self.cpu_op("aten::_foreach_add_", dims_args([[[H, H], [H]], [[H, H], [H]], []], ["TensorList", "TensorList", "Scalar"]),
                    lambda: self.launch(SGD_KERNEL, 30000, 90000))
        self.cpu_op("aten::_fused_sgd_", dims_args([[[H, H], [H]], [[H, H], [H]], [], [], []], ["TensorList", "TensorList", "Scalar", "Scalar", "Scalar"]),
                    lambda: self.launch(SGD_KERNEL, 30000, 90000))
        self.adv(1000, 3000)
        self.close(rec)
        self.cpu_op("aten::zero_", dims_args([[H, H]], ["c10::BFloat16"]),
                    lambda: self.launch(EW_KERNELS["aten::mul"], 1000, 5000))

    # -- a whole step ----------------------------------------------------------
    def run_step(self, number, modules):
        self.step = Step(self, number)
        self.first_kernel = None
        self.last_kernel_end = 0
        step_rec = self.open("user_annotation", "ProfilerStep#%d" % number)
        self.adv(20000, 60000)
        self.py("train.py(88): train_step", lambda: [self.module(i) for i in range(modules)])
        self.adv(5000, 20000)
        # the backward pass runs on the autograd thread, overlapping in time
        fwd_end = self.cpu
        self.cpu = fwd_end + 2000
        self.backward(modules * 4)
        bwd_end = self.cpu
        self.cpu = max(bwd_end, fwd_end) + 3000
        self.optimizer()
        self.adv(10000, 30000)
        self.close(step_rec)
        step_ext = step_rec[6]
        if self.first_kernel is not None:
            # Kineto widens gpu_user_annotation by 1 ns each side
            self.step.acts.append('{"ph": "X", "cat": "gpu_user_annotation", "name": "ProfilerStep#%d", "pid": 0, '
                                  '"tid": %d, "ts": %s, "dur": %s, "args": {"External id": %d}}'
                                  % (number, STREAM, us(self.first_kernel - 1),
                                     us(self.last_kernel_end - self.first_kernel + 2), step_ext))
            self.cnt("gpu_user_annotation")
        self.adv(30000, 90000)   # Python between steps
        return self.step

    def torch_lines(self, step):
        out = []
        recs = sorted(step.torch, key=lambda x: (x[2], x[7]))
        for rec in recs:
            if rec[0] == "[memory]":
                a = dict(rec[5])
                a["Ev Idx"] = self.ev_idx
                out.append('{"ph": "i", "cat": "cpu_instant_event", "s": "t", "name": "[memory]", "pid": %d, '
                           '"tid": %d, "ts": %s, "args": %s}' % (PID, rec[4], us(rec[2]), J(a)))
            elif rec[0] == "python_function":
                a = {"Python parent id": rec[5], "Python id": rec[6], "Python thread": 0, "Ev Idx": self.ev_idx}
                out.append('{"ph": "X", "cat": "python_function", "name": %s, "pid": %d, "tid": %d, "ts": %s, '
                           '"dur": %s, "args": %s}' % (J(rec[1]), PID, rec[4], us(rec[2]), us(rec[3]), J(a)))
            else:
                a = {"External id": rec[6], "Record function id": 0}
                if len(rec) > 8:
                    a["Sequence number"] = rec[8]
                    a["Fwd thread id"] = 1 if rec[4] == BWD_TID else 0
                if rec[5]:
                    a.update(rec[5])
                a["Ev Idx"] = self.ev_idx
                out.append('{"ph": "X", "cat": "%s", "name": %s, "pid": %d, "tid": %d, "ts": %s, "dur": %s, '
                           '"args": %s}' % (rec[0], J(rec[1]), PID, rec[4], us(rec[2]), us(rec[3]), J(a)))
            self.ev_idx += 1
        return out


HEADER = [
    ("schemaVersion", 1),
    ("deviceProperties", [{"id": 0, "name": "NVIDIA H100 80GB HBM3", "totalGlobalMem": 85029158912,
                           "computeMajor": 9, "computeMinor": 0, "maxThreadsPerBlock": 1024,
                           "maxThreadsPerMultiprocessor": 2048, "regsPerBlock": 65536, "warpSize": 32,
                           "sharedMemPerBlock": 49152, "numSms": 132, "regsPerMultiprocessor": 65536,
                           "sharedMemPerBlockOptin": 232448, "sharedMemPerMultiprocessor": 233472}]),
    ("neuron_stats_synthetic", "generated by bench/gen_trace.py; synthetic benchmark input, not a real capture"),
    ("cupti_version", 24), ("cuda_runtime_version", 12040), ("cuda_driver_version", 12040),
    ("profile_memory", 1), ("record_shapes", 1), ("with_stack", 1),
    ("trace_id", "5A1B7C3D9E2F40618293A4B5C6D7E8F9"),
    ("displayTimeUnit", "ms"), ("baseTimeNanoseconds", BASE_TIME_NS),
]


def generate(path, target, seed=7, modules=12, quiet=False):
    g = Gen(seed)
    side_path = path + ".acts.tmp"
    written = 0
    n_events = 0
    with open(path, "w", newline="\n") as f, open(side_path, "w", newline="\n") as side:
        head = "{\n" + "".join("  %s: %s,\n" % (J(k), J(v)) for k, v in HEADER) + '  "traceEvents": [\n'
        f.write(head)
        written += len(head)
        first = True
        number = 1
        side_bytes = 0
        while written + side_bytes < target:
            step = g.run_step(number, modules)
            lines = g.torch_lines(step)
            chunk = ("" if first else ",\n") + ",\n".join("  " + l for l in lines)
            first = False
            f.write(chunk)
            written += len(chunk.encode()) if not chunk.isascii() else len(chunk)
            s = ",\n" + ",\n".join("  " + l for l in step.acts)
            side.write(s)
            side_bytes += len(s)
            n_events += len(lines) + len(step.acts)
            number += 1
            if not quiet and number % 50 == 0:
                sys.stderr.write("\rgen_trace: %d steps, %.0f MB" % (number - 1, (written + side_bytes) / 1e6))
        # the profiler's final synchronize: no linked op
        g.adv(20000, 50000)
        corr = g.corr
        tail_acts = ['{"ph": "X", "cat": "cuda_runtime", "name": "cudaDeviceSynchronize", "pid": %d, "tid": %d, '
                     '"ts": %s, "dur": %s, "args": {"cbid": 165, "correlation": %d}}'
                     % (PID, MAIN_TID, us(g.cpu), us(max(g.dev_free.values()) - g.cpu + 5000 if max(g.dev_free.values()) > g.cpu else 6000), corr),
                     '{"ph": "s", "id": %d, "pid": %d, "tid": %d, "ts": %s, "cat": "ac2g", "name": "ac2g"}'
                     % (corr, PID, MAIN_TID, us(g.cpu))]
        g.cnt("cuda_runtime")
        g.cnt("ac2g")
        end = max(g.cpu, max(g.dev_free.values())) + 50000
        t0 = us(g.t0)
        meta = []
        for name, pid, tid, args in [
                ("process_name", PID, 0, {"name": "python3"}), ("process_labels", PID, 0, {"labels": "CPU"}),
                ("process_sort_index", PID, 0, {"sort_index": PID}),
                ("process_name", 0, 0, {"name": "python3"}), ("process_labels", 0, 0, {"labels": "GPU 0"}),
                ("process_sort_index", 0, 0, {"sort_index": 5000000}),
                ("thread_name", 0, STREAM, {"name": "stream %d " % STREAM}),
                ("thread_sort_index", 0, STREAM, {"sort_index": STREAM}),
                ("thread_name", 0, STREAM2, {"name": "stream %d " % STREAM2}),
                ("thread_sort_index", 0, STREAM2, {"sort_index": STREAM2}),
                ("thread_name", PID, MAIN_TID, {"name": "thread %d (python3)" % MAIN_TID}),
                ("thread_sort_index", PID, MAIN_TID, {"sort_index": MAIN_TID}),
                ("thread_name", PID, BWD_TID, {"name": "thread %d (pt_autograd_0)" % BWD_TID}),
                ("thread_sort_index", PID, BWD_TID, {"sort_index": BWD_TID})]:
            meta.append('{"name": "%s", "ph": "M", "ts": %s, "pid": %d, "tid": %d, "args": %s}'
                        % (name, t0, pid, tid, J(args)))
        meta.append('{"ph": "X", "cat": "Trace", "ts": %s, "dur": %s, "pid": "Spans", "tid": "PyTorch Profiler", '
                    '"name": "PyTorch Profiler (0)", "args": {"Op count": 0}}' % (t0, us(end - g.t0)))
        meta.append('{"name": "process_sort_index", "ph": "M", "ts": %s, "pid": "Spans", "tid": 0, '
                    '"args": {"sort_index": 536870912}}' % t0)
        meta.append('{"name": "Iteration Start: PyTorch Profiler", "ph": "i", "s": "g", "pid": "Traces", '
                    '"tid": "Trace PyTorch Profiler", "ts": %s}' % t0)
        meta.append('{"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": %s}' % us(end + 1000))
        s = ",\n" + ",\n".join("  " + l for l in tail_acts)
        side.write(s)
        n_events += len(tail_acts) + len(meta)
    # append the activities, then the trailer
    with open(path, "a", newline="\n") as f, open(side_path, "r") as side:
        while True:
            buf = side.read(1 << 22)
            if not buf:
                break
            f.write(buf)
        f.write(",\n" + ",\n".join("  " + l for l in meta))
        f.write('\n],\n  "traceName": %s\n}\n' % J(os.path.basename(path)))
    os.unlink(side_path)
    size = os.path.getsize(path)
    counts = dict(sorted(g.counts.items()))
    counts["(metadata/markers)"] = len(meta)
    meta_info = {"path": os.path.basename(path), "bytes": size, "events": n_events, "steps": number - 1,
                 "seed": seed, "by_category": counts}
    with open(path + ".meta.json", "w") as f:
        f.write(json.dumps(meta_info, indent=1) + "\n")
    if not quiet:
        sys.stderr.write("\rgen_trace: %s: %d bytes, %d events, %d steps\n" % (path, size, n_events, number - 1))
    return meta_info


def main(argv=None):
    ap = argparse.ArgumentParser(description="generate a large synthetic Kineto trace (deterministic)")
    ap.add_argument("--size", default="100M", help="target size, e.g. 100M, 1G (decimal units)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--modules", type=int, default=12, help="transformer blocks per step")
    ap.add_argument("--quiet", action="store_true")
    a = ap.parse_args(argv)
    info = generate(a.output, parse_size(a.size), a.seed, a.modules, a.quiet)
    if not a.quiet:
        tot = sum(v for k, v in info["by_category"].items())
        print(" ".join("%s=%.1f%%" % (k, 100.0 * v / tot) for k, v in info["by_category"].items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
