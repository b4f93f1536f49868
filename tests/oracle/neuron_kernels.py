#!/usr/bin/env python3
"""`neuron-stats kernels --by-neff` on a Neuron capture against the
executions its system-profile exports hold (tests/oracle/meson.build).

    neuron_kernels.py NEURON_STATS CAPTURE_DIR

Reads every `system_profile.json` under CAPTURE_DIR here, with json, and
takes its hardware `nc_exec_running` executions as docs/neuron.md
("Correlation", step 1) says AWS's exports write them: a complete event
(its `duration`), or `start`/`stop` halves paired by `tracking_id`, whose
duration is the device-clock difference of their `nc_timestamp_ns`
(`data.sync_info`). Each is named by its `model_name` and carries its
`neff_hash`. Per trace (the `trace.json` beside the export; its rank is
`distributedInfo.rank`, else its position by path) and (name, NEFF): the
count, total, min and max must equal neuron-stats' exactly, the mean,
median and sample standard deviation within 0.0005 µs (neuron-stats
rounds them to the ns). Only captures with one core per process and
no logical-core pairing (LNC 1). A missing CAPTURE_DIR is a skip (77).
"""
import json
import os
import statistics
import sys

import oracle_check as oc

D = oc.D


def executions(path):
    """[(name, neff, duration ns)] of a system-profile export."""
    with open(path) as f:
        events = json.load(f)["trace_event"]
    out, start = [], {}
    for e in events:
        if e.get("name") != "nc_exec_running":
            continue
        key = (e.get("model_name"), e.get("neff_hash"))
        if "duration" in e:
            out.append(key + (int(e["duration"]),))
        elif e.get("phase") == "start":
            start[e["tracking_id"]] = e
        elif e.get("phase") == "stop" and e["tracking_id"] in start:
            s = start.pop(e["tracking_id"])
            out.append(key + (e["data"]["sync_info"]["nc_timestamp_ns"] - s["data"]["sync_info"]["nc_timestamp_ns"],))
    return out


def reference(capture):
    rows = {}
    exports = sorted(os.path.join(d, "system_profile.json") for d, _, files in os.walk(capture)
                     if "system_profile.json" in files and "trace.json" in files)
    for position, export in enumerate(exports):
        with open(os.path.join(os.path.dirname(export), "trace.json")) as f:
            rank = json.load(f).get("distributedInfo", {}).get("rank", position)
        for name, neff, dur in executions(export):
            rows.setdefault((rank, name, neff), []).append(dur)
    return rows


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, capture = sys.argv[1], oc.trace_or_skip(sys.argv[1], sys.argv[2])
    if capture is None:
        return 77
    want = reference(capture)
    got = {(r["rank"], r["name"], r["neff"]): r for r in oc.run_json(binary, ["kernels", "--by-neff", capture])}
    ck = oc.Check(source="export")
    for key in sorted(set(got) - set(want)):
        ck.fail("%s: a row the exports do not have" % (key,))
    for key, durs in sorted(want.items()):
        r = got.get(key)
        if r is None:
            ck.fail("%s: no row" % (key,))
            continue
        us = [D(d) / 1000 for d in durs]
        for what, w, field, slack in (("count", len(us), "count", 0), ("total", sum(us), "total_us", 0),
                                      ("min", min(us), "min_us", 0), ("max", max(us), "max_us", 0),
                                      ("mean", statistics.mean(us), "mean_us", D("0.0005")),
                                      ("median", statistics.median(us), "median_us", D("0.0005")),
                                      ("stddev", statistics.stdev(us) if len(us) > 1 else D(0), "stddev_us",
                                       D("0.0005"))):
            ck.eq("%s %s" % (key, what), w, r[field], D(slack))
    return ck.finish("%d values of %d rows equal the system profiles' executions" % (ck.n, len(want)))


if __name__ == "__main__":
    sys.exit(main())
