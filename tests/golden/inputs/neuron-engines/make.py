#!/usr/bin/env python3
"""Writes the hand-made capture `capture/` for `kernels --by-engine` /
`--by-opcode` (golden cases kernels-engines-*, oracle neuron_engines.py).

The process folder is fixtures/capture-rmsnorm-fused's (trace.json, NEFF,
NTFF, system profile, copied) with its device-profile export replaced by
one written here, plus a second export of another NEFF in the same folder.
Only the Instruction fields of profile-schema-reference.rst / the legacy
JSON of neuron-formats.md §3.4a are used (`engine` with Explorer's engine
names, else `label` / `timeline_track`; `timestamp` + `duration`, or
`start_ts` + `end_ts`, or `start_ts` + `duration_ns`; `opcode` with the
documented examples MATMUL and DRAIN and the opcodes of the other
fixtures), so several opcodes run on one engine and one instruction has no
opcode. Times are ns (summary total_time, s, matches their span).

    python3 tests/golden/inputs/neuron-engines/make.py
"""
import json
import os
import shutil

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.join(HERE, "..", "..", "..", "..")
FUSED = "fixtures/capture-rmsnorm-fused/i-0a1b2c3d4e5f60718_pid_41700/1767225600912347678"
OUT = os.path.join(HERE, "capture", "i-0a1b2c3d4e5f60718_pid_41700", "1767225600912347678")
NEFF_A = "4395835815383055965"  # the NEFF of the copied capture
NEFF_B = "9130000000000000001"  # a second NEFF: a device export only


def ins(start, dur, engine=None, opcode=None, form=0, label=None, track=None):
    """One instruction row, its times in one of the documented forms."""
    e = {}
    if form == 0:
        e.update(timestamp=start, duration=dur)
    elif form == 1:
        e.update(start_ts=start, end_ts=start + dur)
    else:
        e.update(start_ts=start, duration_ns=dur)
    for k, v in (("engine", engine), ("label", label), ("timeline_track", track), ("opcode", opcode)):
        if v is not None:
            e[k] = v
    e.update(hlo_name="fusion.1", layer="aten.mul")
    return e


def export(neff, instructions, dma):
    span = max(max(i.get("end_ts", i.get("start_ts", i.get("timestamp", 0)) + i.get("duration", i.get("duration_ns", 0)))
                   for i in instructions),
               max(d["timestamp"] + d["duration"] for d in dma))
    return {
        "summary": [{"total_time": span / 1e9}],
        "metadata": [{"first_hw_timestamp": 5914194026, "neuroncore_idx": 0,
                      "neuron_stats_synthetic": "hand-written by tests/golden/inputs/neuron-engines/make.py"}],
        "profile_info": [{"ntff_filename": "profile_nc_0_session_1.ntff", "neff_name": "neff_%s_vnc_0.neff" % neff}],
        "instruction": instructions,
        "dma": dma,
    }


def main():
    shutil.rmtree(os.path.join(HERE, "capture"), ignore_errors=True)
    os.makedirs(OUT)
    for name in os.listdir(os.path.join(SRC, FUSED)):
        if not name.startswith("profile_nc_0_session_1__"):
            shutil.copy(os.path.join(SRC, FUSED, name), OUT)
    a = [
        ins(0, 30000, engine="tensor", opcode="MATMUL"),
        ins(30500, 31000, engine="tensor", opcode="MATMUL", form=1),
        ins(62000, 29001, engine="tensor", opcode="MATMUL", form=2),
        ins(91500, 700, engine="tensor", opcode="DRAIN"),
        ins(92500, 900, engine="tensor", opcode="DRAIN", form=1),
        ins(93500, 31000, track="TensorMatrix", opcode="MATMUL"),
        ins(31000, 2000, engine="scalar", opcode="ACTIVATE"),
        ins(64000, 2003, label="Activation", opcode="ACTIVATE", form=1),
        ins(0, 4000, engine="vector", opcode="TENSOR_TENSOR"),
        ins(5000, 4001, engine="vector", opcode="TENSOR_TENSOR", form=2),
        ins(10000, 6000, engine="vector", opcode="TENSOR_SCALAR"),
        ins(17000, 1500, engine="vector"),
        ins(20000, 1100, engine="gpsimd", opcode="IOTA"),
        ins(19000, 600, engine="sync", opcode="NOP"),
        ins(125000, 650, engine="sync", opcode="NOP", form=1),
    ]
    b = [
        ins(0, 12000, engine="tensor", opcode="MATMUL"),
        ins(12500, 800, engine="tensor", opcode="DRAIN"),
        ins(13500, 3000, engine="scalar", opcode="ACTIVATE"),
        ins(17000, 5000, engine="vector", opcode="TENSOR_TENSOR", form=1),
    ]
    dma = [{"timestamp": 0, "duration": 2500, "dma_queue": "qSyncIO0"},
           {"timestamp": 120000, "duration": 4000, "dma_queue": "qSyncIO0"},
           {"timestamp": 124500, "duration": 3001, "dma_queue": "qSyncIO0"}]
    for neff, rows, d in ((NEFF_A, a, dma), (NEFF_B, b, dma[:1])):
        with open(os.path.join(OUT, "profile_nc_0_session_1__neff_%s.json" % neff), "w") as f:
            json.dump(export(neff, rows, d), f, indent=1)
            f.write("\n")


if __name__ == "__main__":
    main()
