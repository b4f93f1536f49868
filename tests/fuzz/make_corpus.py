#!/usr/bin/env python3
"""(Re)build the seed corpora of the fuzz targets: tests/fuzz/corpus/NAME/.

    python3 tests/fuzz/make_corpus.py

Seeds come from the fixtures (fixtures/*/trace.json), the damaged inputs
(tools/gen_damaged.py), the oracle's spec example, the real NEFF and a few
events cut from real traces in ../shared/corpus (else the copy vendored in
tests/data), plus small
hand-written samples. The folders are rewritten from scratch (the output is
deterministic); fuzzing runs keep what they find elsewhere
(tests/fuzz/run_fuzzers.py: BUILD/fuzz-work/NAME/corpus). Seeds are kept under
64 KiB so libFuzzer's default -max_len stays small.
"""

import functools
import gzip
import hashlib
import io
import json
import os
import shutil
import struct
import sys
import tarfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402  (tests/data/corpus.py: the full corpus, else the vendored copy)
CORPUS = corpus.corpus_root()
sys.path.insert(0, os.path.join(SRC, "tools"))
import gen_damaged  # noqa: E402

MAX_SEED = 64 << 10


def put(target, data, label=""):
    if len(data) > MAX_SEED:
        return
    d = os.path.join(HERE, "corpus", target)
    os.makedirs(d, exist_ok=True)
    name = (label + "-" if label else "") + hashlib.sha1(data).hexdigest()[:16]
    with open(os.path.join(d, name), "wb") as f:
        f.write(data)


def read(path):
    with open(path, "rb") as f:
        return f.read()


@functools.lru_cache(maxsize=None)
def damaged():
    return gen_damaged.damaged()


def trimmed(path, n=40):
    """The top-level keys and the first n events of a corpus trace."""
    raw = read(path)
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    doc = json.loads(raw)
    if isinstance(doc, list):
        return json.dumps(doc[:n], separators=(", ", ": ")).encode()
    doc["traceEvents"] = doc.get("traceEvents", [])[:n]
    return json.dumps(doc, separators=(", ", ": ")).encode()


@functools.lru_cache(maxsize=None)
def traces():
    out = {}
    for name in ("legacy-array", "legacy-autograd", "rmsnorm-fused", "rmsnorm-compiled"):
        p = os.path.join(SRC, "fixtures", name, "trace.json")
        if os.path.exists(p):
            out["fixture-" + name] = read(p)
    out["spec-example"] = read(os.path.join(SRC, "tests", "oracle", "spec_example.json"))
    for name, data in damaged().items():
        if not name.startswith("bomb"):
            out["damaged-" + name.split(".")[0]] = data
    for rel in ("AMD-AGI-TraceLens/tests/traces/h100/gaunernst_bert-small-uncased__1016001.json.gz",
                "facebookresearch-HolisticTraceAnalysis/tests/data/mtia_inference_trace/mtia_inference_rank_0.json.gz",
                "facebookresearch-HolisticTraceAnalysis/tests/data/ns_resolution_trace/rank-0.Apr_03_18_51_38.1102.pt.trace.json.gz",
                "facebookresearch-HolisticTraceAnalysis/tests/data/call_stack/backward_thread.json",
                "HazyResearch-zoology/at-0f98dfe9/trace.json",
                "pytorch-kineto/at-f68ff75c/tb_plugin/samples/resnet50_num_workers_0/worker0.pt.trace.json.gz"):
        p = os.path.join(CORPUS, rel)
        if os.path.exists(p):
            # (owner, then the file name: one repository gives several seeds)
            out["corpus-%s-%s" % (rel.split("/")[0], os.path.basename(rel).split(".")[0])] = trimmed(p)
    return out


SMALL_JSON = [
    b"", b"{}", b"[]", b"[{}]", b'{"traceEvents": []}', b'{"traceEvents": [{}]}',
    b'{"a": [1, 2.5e-3, -0, true, false, null, NaN, Infinity, -Infinity], "b": {"c": "d\\u00e9\\ud83d\\ude00"}}',
    b'["\\"", "\\\\", "\\/", "\\b\\f\\n\\r\\t", "\\u0000", "\\ud800", "\\uZZZZ", "\\x"]',
    b'{"traceEvents": [\n{"ph": "X", "cat": "cpu_op", "name": "a", "pid": 1, "tid": 1, "ts": 1, "dur": 2},\n',
    b'{"traceEvents": [{"ph": "X"}]}\x00\x00\x00',
    b"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]]",
    # CUPTI range-profiler counters (docs/report.md "Counter-mode traces")
    b'{"traceEvents": [{"ph": "X", "cat": "cuda_profiler_range", "name": "k", "pid": 0, "tid": 0, "ts": 1, '
    b'"dur": 5, "args": {"a.sum": 9223372036854775807, "b.sum": 1.5, "c": "x", "d": [1], "e": NaN}}, '
    b'{"ph": "X", "cat": "cuda_profiler_range", "name": "k", "pid": 0, "tid": 0, "ts": 6, "dur": 5, '
    b'"args": {"a.sum": 1, "b.sum": -2e300}}]}',
    # the legacy autograd profiler's export, a launch flow included
    b'[{"name": "aten::add", "ph": "X", "ts": 3, "dur": 4, "tid": 1, "pid": "CPU functions", "args": {}}, '
    b'{"name": "aten::add", "ph": "s", "ts": 3, "tid": 1, "pid": "CPU functions", "id": 0, "cat": "cpu_to_cuda", '
    b'"args": {}}, {"name": "x", "ph": "X", "ts": 4, "dur": 1, "tid": " node_id:0, thread_id:1 ", '
    b'"pid": "CPU functions", "args": {}}]',
]

NUMBERS = [
    b"0", b"-0", b"1", b"-1", b"1.5", b"1.0005", b"1.0015", b"0.0005", b"1e3", b"1E-3", b"-2.5e+2",
    b"1730000000000000.123", b"9223372036854775807", b"-9223372036854775808", b"9223372036854775808",
    b"18446744073709551616", b"9223372036854775.807", b"9223372036854775.808", b"12.0", b"12.5",
    b'"42"', b'"-7"', b"00012", b"1.", b".5", b"-", b"+1", b"1e", b"1e-400", b"1e400", b"NaN", b"inf",
    b"0.00000000000000000000000000000000000000000001", b"123456789012345678901234567890123456789",
]


def tar_bytes(members, fmt=tarfile.USTAR_FORMAT):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w", format=fmt) as t:
        for name, data in members:
            info = tarfile.TarInfo(name)
            info.size = len(data)
            info.mtime = 0
            t.addfile(info, io.BytesIO(data))
    return buf.getvalue()


def neff_members():
    """The small members of the real matmul_small.neff (big ones cut)."""
    p = os.path.join(CORPUS, "aws-neuron-nkipy/at-1dc349f/spike/tests/artifacts/matmul_small.neff")
    if not os.path.exists(p):
        return [("./kelf-0.json", b'{"graphs": [{"name": "sg00", "definition": "sg00/def.json"}]}'),
                ("./sg00/def.json", b'{"version": "1", "var": {}}')]
    d = read(p)
    hs, ds = struct.unpack("<Q", d[8:16])[0], struct.unpack("<Q", d[16:24])[0]
    raw = gzip.GzipFile(fileobj=io.BytesIO(d[hs:hs + ds])).read()
    out = []
    with tarfile.open(fileobj=io.BytesIO(raw)) as t:
        for m in t.getmembers():
            name = m.name[2:] if m.name.startswith("./") else m.name
            if not m.isfile() or name.startswith("sg01") or "debug" in name or "table" in name:
                continue
            data = t.extractfile(m).read()
            if m.size > 4096 or name.endswith(".bin"):
                data = data[:128]
            out.append(("./" + name, data))
    return out


def neff_file(tar, gzipped=True):
    payload = gzip.compress(tar, mtime=0) if gzipped else tar
    head = bytearray(1024)
    struct.pack_into("<QQQQQ", head, 0, 2, 1024, len(payload), 2, 0)
    head[0xA8] = 1
    head[0xDC:0xDC + 9] = b"file.neff"
    return bytes(head) + payload


def main():
    root = os.path.join(HERE, "corpus")
    if os.path.isdir(root):
        shutil.rmtree(root)
    for label, data in traces().items():
        put("ingest", data, label)
        put("scan", data, label)
    for i, data in enumerate(SMALL_JSON):
        put("ingest", data, "small%d" % i)
        put("scan", data, "small%d" % i)
    for label in ("spec-example", "damaged-base"):
        data = traces()[label]
        put("ingest", gzip.compress(data, mtime=0), label + "-gz")
        put("ingest", gen_damaged.zst(data), label + "-zst")
    for tok in NUMBERS:
        put("numparse", tok)
    base = gen_damaged.BASE
    put("source", base, "plain")
    put("source", gzip.compress(base, mtime=0), "gz")
    put("source", gzip.compress(base, mtime=0)[:500], "gz-cut")
    put("source", gzip.compress(base[:2000], mtime=0) + gzip.compress(base[2000:], mtime=0), "gz-two")
    put("source", gen_damaged.zst(base), "zst")
    put("source", gen_damaged.zst(base)[:300], "zst-cut")
    put("source", b"\x1f\x8b", "gz-magic")
    put("source", b"\x28\xb5\x2f\xfd", "zst-magic")

    members = neff_members()
    tar = tar_bytes(members)
    put("neff-tar", b"\x00" + tar, "raw")
    put("neff-tar", b"\x01" + tar, "gz")
    put("neff-tar", b"\x00" + tar_bytes(members[:4], tarfile.PAX_FORMAT), "pax")
    put("neff-tar", b"\x00" + tar_bytes([("./" + "d/" * 60 + "long.json", b"{}")], tarfile.GNU_FORMAT), "gnu-long")
    put("neff", neff_file(tar), "mini")
    put("neff", neff_file(tar, gzipped=False), "mini-raw")
    for rel in ("aws-neuron-nkipy/at-1dc349f/spike/tests/artifacts/matmul_small.neff",):
        p = os.path.join(CORPUS, rel)
        if os.path.exists(p):
            put("neff", read(p), "matmul-small")
            put("neff", read(p)[:1024], "header-only")

    names = [
        "trace.json\nworker0.1623143089861.pt.trace.json.gz\nrank-0.pt.trace.json.zst\nnotes.txt\n.hidden.json",
        "i-0b1ea78ca2865fd32_pid_1765325/1776672348756756905/profile_nc_0_session_1.ntff\n"
        "i-0b1ea78ca2865fd32_pid_1765325/1776672348756756905/neff_14382885777943380728_vnc_0.neff\n"
        "i-0b1ea78ca2865fd32_pid_1765325/1776672348756756905/ntrace.pb\n"
        "i-0b1ea78ca2865fd32_pid_1765325/1776672348756756905/trace_info.pb\n"
        "i-0b1ea78ca2865fd32_pid_1765325/1776672348756756905/trace.json",
        "i-0abc_pid_7/14382885777943380728_instid_0_vnc_10.ntff\ni-0abc_pid_7/neff_14382885777943380728.neff\n"
        "i-0abc_pid_7/cpu_util.pb\ni-0abc_pid_7/host_mem.pb",
        "neffs/graph_ab12CD.neff\nprofile.ntff\nprofile_rank_3.ntff\nprofile_exec_2.ntff\n"
        "model_1_pid_2_vnc_3_inst_4_20250101_120000.ntff",
        "system_profile.json\ndevice_profile_model_7.json\nntff.json\n"
        "i-0abc_pid_7_nc_0_session_1.json\ni-0abc_pid_7_nc_0_model_123.json\nsystem_profile.pftrace\nx.parquet",
        "neff_.neff\nneff_12_vnc_.neff\ngraph_.neff\nneff_0x1f_vnc_1.neff\n../../etc/passwd.json\n/abs/path.json\n"
        "a\x01b\x1b[31m.json\n" + "d/" * 40 + "deep.json",
    ]
    for n in names:
        put("names", n.encode())

    export_samples = [
        (0, b'{"summary": [{"total_time": 0.5, "event_count": 3}], "metadata": [{"last_hw_timestamp": 100}],'
            b' "instruction": [{"timestamp": 10261883214, "duration": 148, "label": "TensorMatrix",'
            b' "hlo_name": "%add.1", "opcode": "MATMUL"}], "dma": [{"timestamp": 10261883300, "duration": 889,'
            b' "queue_type": "instruction", "transfer_size": 65536}], "active_time": [{"engine": "pe",'
            b' "start_ts": 100, "end_ts": 250}], "profile_info": [{"ntff_filename": "profile_nc_0_session_1.ntff"}]}'),
        (1, b'{"n_7792fe1daf87c456c04c96497296393233c1c7b1": {"tensor_engine_active_time_percent": 0.110,'
            b' "tensor_engine_instruction_count": 55, "total_time": 0.25, "throttle_active_nc5_time_ns": 22297550}}'),
        (2, b'{"system_profile_metadata": [{"first_ts_ns": "1766072156592459000", "ntff_version": 2}],'
            b' "device_profile_list": [{"nc_id": 0, "device_profile_name": "p_nc_0"}], "trace_event": ['
            b'{"name": "nc_exec_running", "timestamp": 1766072156592459482, "duration": 5000, "id": 7,'
            b' "parent_id": 3, "type": 1, "group": "nrt-nc-000", "process_id": "41", "thread_id": 41234,'
            b' "nc_idx": "0", "exec_id": 5, "model_name": "m"}]}'),
        (3, b'{"events":[{"event_type":"nc_exec_running","phase":"start","id":7,"nc_idx":0,"tracking_id":'
            b'1125899906842627,"thread_id":41234,"timestamp_ns":1766072156592459482,"data":{"device_core_idx":0,'
            b'"exec_id":5,"nc_timestamp_ns":93412000,"cpu_timestamp_ns":1766072156592459000}},{"event_type":'
            b'"nc_exec_running","phase":"stop","id":8,"nc_idx":0,"tracking_id":1125899906842627,'
            b'"timestamp_ns":1766072156592469482}],"data_version":2}'),
        (4, b"\x00" * 200),
        (12, b"PAR1" + b"\x00" * 64),
    ]
    for sel, data in export_samples:
        put("ntff", bytes([sel]) + data)
        put("ntff", bytes([sel]) + data[: len(data) // 2], "cut")

    # parquet: every fixture table parquet-wasm wrote (tools/parquet-fixtures)
    for d, _, fs in sorted(os.walk(os.path.join(SRC, "fixtures"))):
        for f in sorted(fs):
            if f.endswith(".parquet"):
                put("parquet", read(os.path.join(d, f)))

    argvs = [
        [0, "trace.json", "--sort", "self_cuda_time_total", "-n", "10", "--format", "csv"],
        [0, "-s", "count", "--row-limit=-1", "--group-by", "shape,stack=3", "--time-unit", "ms", "--", "-x.json"],
        [0, "--help"], [0, "-h"], [0, "--unknown"], [0, "-n"], [0, "-n", "99999999999999999999"],
        [1, "dir", "-o", "out.db", "--strict", "-q"], [1, "-oout.db", "x"], [2, "a.json", "b.json", "--threshold", "5"],
        [3, "db", "SELECT 1", "--format", "json"], [4, "x.neff", "--members", "-f", "json"],
        [0, "x", "--quiet=1"], [0, "x", "-g", "overload,shape,name,stack=0"],
    ]
    for a in argvs:
        put("opt", bytes([a[0]]) + b"\0".join(s.encode() for s in a[1:]))
    print("corpus:", ", ".join("%s %d" % (d, len(os.listdir(os.path.join(HERE, "corpus", d))))
                               for d in sorted(os.listdir(os.path.join(HERE, "corpus")))))


if __name__ == "__main__":
    main()
