#!/usr/bin/env python3
"""The plain-Python baseline for bench/run.sh.

    python3 bench/baseline.py TRACE [--row-limit N] [--quiet]

It does what a user without neuron-stats would write: stdlib json.load of
the whole file, then key_averages + table. The analysis code is the reference
implementation in tests/oracle/key_averages.py, run with the cyclic garbage
collector switched off (gc.disable()). That code parses numbers
exactly (parse_float=Decimal), which it needs in order to print the same table
as PyTorch. The table goes to stdout. Phase timings go to stderr.

With --plain-floats the file is loaded with a bare json.load (floats), for
comparison. The times in the table are then computed from doubles, so they
can differ from PyTorch in the last digit.
"""

import argparse
import gc
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "oracle"))

import key_averages as ka  # noqa: E402


def main(argv=None):
    ap = argparse.ArgumentParser()
    ap.add_argument("trace")
    ap.add_argument("--row-limit", type=int, default=100)
    ap.add_argument("--plain-floats", action="store_true")
    ap.add_argument("--quiet", action="store_true", help="do not print the table")
    a = ap.parse_args(argv)
    # A careful user switches the cyclic GC off for a big json.load: it is
    # 3-4x faster (the loaded trace holds millions of containers and no cycles).
    gc.disable()
    t0 = time.perf_counter()
    if a.plain_floats:
        with open(a.trace, "rb") as f:
            data = json.load(f)
    else:
        data = ka.load_trace(a.trace)
    t1 = time.perf_counter()
    tr = ka.Trace(data)
    del data
    events = ka.build_tree(tr.events)
    rows = ka.key_averages(events, tr.use_device)
    t2 = time.perf_counter()
    out = ka.build_table(rows, tr.use_device, ka.device_label_for(tr.use_device), tr.profile_memory,
                         row_limit=a.row_limit)
    t3 = time.perf_counter()
    if not a.quiet:
        sys.stdout.write(out)
    sys.stderr.write("baseline: load %.2fs, events+tree+averages %.2fs, table %.2fs, total %.2fs\n"
                     % (t1 - t0, t2 - t1, t3 - t2, t3 - t0))
    return 0


if __name__ == "__main__":
    sys.exit(main())
