#!/usr/bin/env python3
"""--device-detail from Parquet and from JSON (issue 17): the same capture
exported both ways gives the same report.

Usage: check_detail_parity.py NEURON_STATS
For each key (hlo, layer, opcode) and format (table, csv, json, markdown),
`report fixtures/capture-parquet-naive --device-detail KEY` prints exactly
what `report fixtures/capture-rmsnorm-naive --device-detail KEY` prints
(tools/parquet-fixtures/gen_parquet.mjs wrote the Parquet tables from that
capture's JSON exports), but for the capture's name in the trace path and
the lines naming the export files (Source lines, "device_detail_sources"),
where the Parquet profile is `<folder>/Metadata.parquet` and the JSON one
`<folder>.json`.
"""
import os
import re
import subprocess
import sys

SRC = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def masked(text):
    text = text.replace("capture-parquet-naive", "CAPTURE").replace("capture-rmsnorm-naive", "CAPTURE")
    text = re.sub(r"__neff_(\d+)(\.json|/Metadata\.parquet)", r"__neff_\1<EXPORT>", text)
    return text


def main():
    ns = os.path.abspath(sys.argv[1])
    env = dict(os.environ, LC_ALL="C")
    failures = 0
    for key in ("hlo", "layer", "opcode"):
        for fmt in ("table", "csv", "json", "markdown"):
            out = []
            for cap in ("fixtures/capture-rmsnorm-naive", "fixtures/capture-parquet-naive"):
                p = subprocess.run([ns, "report", cap, "--device-detail", key, "--format", fmt, "--no-cache"],
                                   cwd=SRC, env=env, capture_output=True, text=True)
                if p.returncode != 0:
                    print("FAIL %s %s %s: exit %d: %s" % (cap, key, fmt, p.returncode, p.stderr))
                    failures += 1
                out.append(masked(p.stdout))
            if out[0] != out[1] or "Device time per" not in out[0] and fmt in ("table", "markdown"):
                print("FAIL %s %s: the Parquet capture's report differs from the JSON one's" % (key, fmt))
                failures += 1
            else:
                print("ok %s %s" % (key, fmt))
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
