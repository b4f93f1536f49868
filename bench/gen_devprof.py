#!/usr/bin/env python3
"""Writes a large synthetic legacy device-profile JSON export (docs/neuron.md
"Device-profile JSON") for timing its reading and `kernels --by-engine`
(docs/performance.md "Device profiles"). Not a real capture.

    gen_devprof.py OUT.json [INSTRUCTIONS] [DMA_ROWS]    (defaults 1000000, 200000)
"""
import random
import sys

ENGINES = [("tensor", "MATMUL"), ("tensor", "DRAIN"), ("scalar", "ACTIVATE"), ("vector", "TENSOR_TENSOR"),
           ("vector", "TENSOR_SCALAR"), ("gpsimd", "IOTA"), ("sync", "NOP")]


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    n = int(sys.argv[2]) if len(sys.argv) > 2 else 1_000_000
    n_dma = int(sys.argv[3]) if len(sys.argv) > 3 else 200_000
    random.seed(19)
    with open(sys.argv[1], "w") as f:
        f.write('{"summary": [{"total_time": %s}],\n"profile_info": [{"ntff_filename": "profile_nc_0_session_1.ntff", '
                '"neff_name": "neff_4395835815383055965_vnc_0.neff"}],\n"instruction": [\n' % (n * 1000 / 1e9))
        for i in range(n):
            engine, opcode = ENGINES[i % len(ENGINES)]
            f.write('%s{"timestamp": %d, "duration": %d, "engine": "%s", "opcode": "%s", "hlo_name": "fusion.%d", '
                    '"layer": "aten.mul"}' % ("," if i else "", i * 1000, random.randint(100, 5000), engine, opcode,
                                              i % 50))
        f.write('\n],\n"dma": [\n')
        for i in range(n_dma):
            f.write('%s{"timestamp": %d, "duration": %d, "dma_queue": "qSyncIO0"}'
                    % ("," if i else "", i * 5000, random.randint(500, 4000)))
        f.write('\n]}\n')


if __name__ == "__main__":
    main()
