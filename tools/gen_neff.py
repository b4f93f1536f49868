#!/usr/bin/env python3
"""Writes the SYNTHETIC NEFF fixtures in fixtures/neff/ (made here, not by a
Neuron compiler; see fixtures/neff/README.md). Deterministic: tar mtimes are
0 and gzip is written with mtime 0, so rerunning gives the same bytes with the
same zlib.

    python3 tools/gen_neff.py [OUT_DIR]      (default: fixtures/neff)

Layout per docs/neff.md: a 1024-byte little-endian header (pkg_version 2,
header_size 1024, data_size, NEFF version 2.0, ...) then a gzip'd ustar
archive padded with zeros to a multiple of 1024, data_size counting the
padding, as in the real nkipy files.
"""
import gzip
import json
import os
import struct
import sys

UUID = bytes.fromhex("5e1f0000000040008000000000000001")  # fixed, marks the files as synthetic


def tar_entry(name, data, declared_size=None, typeflag=b"0"):
    """One ustar header block (+ data padded to 512); declared_size may lie."""
    size = len(data) if declared_size is None else declared_size
    h = bytearray(512)
    h[0:len(name)] = name.encode()
    h[100:108] = b"0000664\0"
    h[108:116] = b"0000000\0"
    h[116:124] = b"0000000\0"
    h[124:136] = b"%011o\0" % size
    h[136:148] = b"00000000000\0"
    h[156:157] = typeflag
    h[257:263] = b"ustar\0"
    h[263:265] = b"00"
    h[265:271] = b"nobody"
    h[297:303] = b"nobody"
    h[148:156] = b" " * 8
    h[148:156] = b"%06o\0 " % sum(h)
    return bytes(h) + data + b"\0" * (-len(data) % 512)


def tar(members):
    return b"".join(tar_entry(n, d) for n, d in members) + b"\0" * 1024


def header(data_size, name=b"synthetic.neff", lnc=1, feature_bits=0x1c00):
    h = bytearray(1024)
    struct.pack_into("<5Q", h, 0, 2, 1024, data_size, 2, 0)
    h[0x28:0x28 + 9] = b"synthetic"
    struct.pack_into("<I", h, 0xA8, 1)
    h[0xCC:0xDC] = UUID
    h[0xDC:0xDC + len(name)] = name
    struct.pack_into("<I", h, 0x1DC, 1)
    h[0x1E0] = 1
    struct.pack_into("<QI", h, 0x220, feature_bits, lnc)
    return bytes(h)


def neff(payload):
    padded = payload + b"\0" * (-len(payload) % 1024)
    return header(len(padded)) + padded


def js(obj):
    return json.dumps(obj, indent=1, sort_keys=True).encode()


def model_members(with_extras=True):
    """A one-subgraph model: 2 inputs (x 4x8, y 8x4 fp16) -> out (4x4 fp16)."""
    engines = [("pe", "PE", 10), ("act", "Activation", 3), ("pool", "Pool", 5),
               ("dve", "DVE", 2), ("sp", "SP", 4)]
    definition = {"name": "definition", "version": "0.6", "neff_features": ["neff_feature_vnc"],
                  "var": {"SB": {"type": "state-buffer", "var_id": 0},
                          "x": {"type": "input", "size": 64, "var_id": 1, "ops": []},
                          "y": {"type": "input", "size": 64, "var_id": 2, "ops": []},
                          "out": {"type": "output", "size": 32, "var_id": 3, "ops": []}}}
    members = [("kelf-0.json", js({"graphs": [{"definition": "sg00/def.json", "name": "sg00"}],
                                   "version": "0.5", "target": "synthetic"}))]
    for key, name, count in engines:
        definition[key] = name + ".json"
        definition[key + "_instr"] = name + ".bin"
        members.append(("sg00/%s.json" % name, js({"dma": [], "instr": name + ".bin", "name": name + ".json"})))
        # 64-byte slots whose first u16 has 0x10 as its high byte, like real binaries
        members.append(("sg00/%s.bin" % name, (b"\x01\x10" + b"\0" * 62) * count))
    members.insert(1, ("sg00/def.json", js(definition)))
    tensor = lambda kind, shape: {"dtype": "float16", "is_const": False, "kind": kind, "tf_shape": shape}
    members.append(("sg00/tensor_map.json", js({"x": tensor("input", [4, 8]), "y": tensor("input", [8, 4]),
                                                "out": tensor("output", [4, 4])})))
    if with_extras:
        members.append(("info.json", js({"tool_version": "0.0.0+synthetic", "kelp_version": "Dynamic",
                                         "name": "synthetic.neff", "num_tpb": 1})))
        members.append(("hlo_stats.json", js({"HloMacCount": 128, "Traffic": 160,
                                              "ArithmeticIntensity": 0.8, "HloInputCount": -1})))
    return members


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "fixtures", "neff")
    os.makedirs(out, exist_ok=True)
    files = {}

    good = neff(gzip.compress(tar(model_members()), 9, mtime=0))
    files["synthetic-ok.neff"] = good

    # notes, not errors: no info/hlo_stats, a binary of 100 bytes, an engine not named
    members = model_members(with_extras=False)
    members = [(n, b"\x01\x10" * 50 if n == "sg00/SP.bin" else d) for n, d in members]
    members = [(n, d) for n, d in members if n != "sg00/Pool.bin"]
    files["synthetic-notes.neff"] = neff(gzip.compress(tar(members), 9, mtime=0))

    files["truncated-header.neff"] = good[:100]

    beyond = bytearray(good)
    struct.pack_into("<Q", beyond, 16, len(good) - 1024 + 1024)
    files["data-size-beyond-file.neff"] = bytes(beyond)

    gz = gzip.compress(tar(model_members()), 9, mtime=0)
    cut = gz[:len(gz) // 2]
    files["truncated-gzip.neff"] = header(len(cut)) + cut

    # a member whose header claims 4096 bytes in an archive that ends after 512
    files["member-beyond-archive.neff"] = neff(gzip.compress(tar_entry("sg00/PE.bin", b"\x01\x10" * 32, 4096), 9, mtime=0))

    files["not-a-neff.neff"] = b'{"traceEvents": []}\n'

    for name, data in sorted(files.items()):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        print("%-28s %6d bytes" % (name, len(data)))


if __name__ == "__main__":
    main()
