#!/usr/bin/env python3
"""Writes this case's expected.out with the Python oracle, independently of
neuron-stats: `neuron-stats DIR --merge` must print one key_averages table
over the union of the 8 dlrm ranks, each rank's events linked only within its
own file. The oracle has no --merge, so this script builds the union as one
trace for it: every pid/tid is prefixed with the file's number (threads stay
apart, as ns_trace_merge keeps them), and correlation ids, External ids and
ac2g flow ids get a per-file offset (they are per-process numbers that repeat
across ranks). The first file's "PyTorch Profiler (0)" span is the origin.

    python3 tests/golden/cases/param-dlrm-merge/oracle_expected.py
"""
import glob
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.normpath(os.path.join(HERE, "..", "..", "..", ".."))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402  (tests/data/corpus.py: the full corpus, else the vendored copy)
CORPUS = corpus.corpus_root()
DLRM = os.path.join(CORPUS, "facebookresearch-param/et_replay/tests/inputs/dlrm_kineto")


def main():
    top, events = None, []
    for k, path in enumerate(sorted(glob.glob(DLRM + "/*.json"))):
        with open(path) as f:
            d = json.load(f)
        if top is None:
            top = {key: v for key, v in d.items() if key != "traceEvents"}
        off = k * 10 ** 8
        for e in d["traceEvents"]:
            e = dict(e)
            for key in ("pid", "tid"):
                if key in e:
                    e[key] = "%d:%s" % (k, e[key])
            args = e.get("args")
            if isinstance(args, dict):
                args = dict(args)
                for key in ("correlation", "External id", "external id"):
                    if isinstance(args.get(key), int):
                        args[key] += off
                e["args"] = args
            if e.get("ph") in ("s", "f") and isinstance(e.get("id"), int):
                e["id"] += off
            events.append(e)
    top["traceEvents"] = events
    row_limit = open(os.path.join(HERE, "args")).read().split("\n")
    row_limit = row_limit[row_limit.index("--row-limit") + 1]
    with tempfile.NamedTemporaryFile("w", suffix=".json") as tmp:
        json.dump(top, tmp)
        tmp.flush()
        out = subprocess.run([sys.executable, os.path.join(SRC, "tests/oracle/key_averages.py"), tmp.name,
                              "--row-limit", row_limit], check=True, capture_output=True).stdout
    with open(os.path.join(HERE, "expected.out"), "wb") as f:
        f.write(out)
    print("wrote", os.path.join(HERE, "expected.out"))


if __name__ == "__main__":
    main()
