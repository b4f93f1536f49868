#!/usr/bin/env python3
"""`neuron-stats breakdown`, `breakdown --idle` and `kernels` against HTA's
own results (tests/oracle/meson.build).

    hta_breakdown.py NEURON_STATS PATH EXPECTED.json [--tolerance-us X]

EXPECTED.json was written by make_hta_breakdown.py from HTA's
get_temporal_breakdown, get_idle_time_breakdown and get_gpu_kernel_breakdown
on the traces of PATH (a trace, or a folder of one trace per rank). Checked:

* temporal: per rank, span (HTA kernel_time), idle, compute, non-compute;
* idle: per rank, stream and category, the idle time (HTA rounds it to
  0.01 µs: within 0.005 µs; a category HTA has no row for must be 0 here);
* kernels: per rank and kernel name, of HTA's types compute, communication
  and memory (HTA leaves "other" out), sum, min and max exactly, mean and
  standard deviation within 0.0005 µs (neuron-stats rounds them to the ns);
* kernel_type: per type, HTA's sum over the ranks of the union of the
  type's intervals (the sum of its rows that name the type) against the
  sum of `breakdown`'s compute, communication and memory columns.

Times are compared exactly (decimal µs), but for --tolerance-us X: each
time may differ by up to X µs (docs/analyses.md says for which trace and
why). Where EXPECTED.json was made with HTA_DISABLE_NS_ROUNDING=1 (float µs
for a ns-resolution trace), kernel_type is not compared: HTA's
_get_gpu_kernel_type_time cuts each of its segments to whole µs
(astype(int)) there. PATH may start with @CORPUS@ as in run_one.py; a missing one is a
skip (77).
"""
import sys

import oracle_check as oc

D = oc.D
HTA_TYPE = {"COMPUTATION": "compute", "COMMUNICATION": "communication", "MEMORY": "memory"}
ROUNDED = D("0.0005")  # a mean or standard deviation rounded to the ns
HTA_ROUNDED = D("0.005")  # HTA rounds the idle times to 0.01 us

# Differences from HTA that docs/analyses.md explains, with the figures of
# both: (HTA's, neuron-stats') per value; each must be exactly that.
KNOWN = {
    # HTA joins a kernel whose launch is not in the trace with the trace's
    # first event as if that were its launch (index_correlation 0)
    "tests/oracle/hta/breakdown_dlrm.json": {
        "idle rank 1 stream 7 host_wait": ("17449.0", "17356.000"),
        "idle rank 1 stream 7 kernel_wait": ("115.0", "208.000"),
        "idle rank 3 stream 7 host_wait": ("17548.0", "17465.000"),
        "idle rank 3 stream 7 kernel_wait": ("109.0", "192.000"),
    },
}


def temporal(ck, want, ours):
    got = {r["rank"]: r for r in ours}
    for rank, idle, compute, non_compute, span in want["rows"]:
        r = got.get(rank)
        if r is None:
            ck.fail("temporal: rank %d missing" % rank)
            continue
        for name, w, key in (("span", span, "kernel_time_us"), ("idle", idle, "idle_time_us"),
                             ("compute", compute, "compute_time_us"),
                             ("non-compute", non_compute, "non_compute_time_us")):
            ck.eq("temporal rank %d %s" % (rank, name), w, r[key])


def idle(ck, want, ours):
    got = {(r["rank"], r["stream"], r["idle_category"]): r["idle_time_us"] for r in ours}
    seen = set()
    for rank, stream, cat, t in want["rows"]:
        key = (rank, stream, cat)
        seen.add(key)
        if key not in got:
            ck.fail("idle: rank %d stream %d %s missing" % key)
            continue
        ck.eq("idle rank %d stream %d %s" % key, D(t), got[key], HTA_ROUNDED)
    for key, t in got.items():
        if key not in seen:
            ck.eq("idle rank %d stream %d %s (no HTA row)" % key, 0, t)


def kernels(ck, want, ours):
    got = {(r["rank"], r["type"], r["name"]): r for r in ours}
    seen = set()
    for rank, ktype, name, total, mx, mn, mean, std in want["rows"]:
        key = (rank, HTA_TYPE[ktype], name)
        seen.add(key)
        r = got.get(key)
        if r is None:
            ck.fail("kernels: rank %d %s %r missing" % key)
            continue
        what = "kernels rank %d %s %r" % key
        ck.eq(what + " sum", total, r["total_us"])
        ck.eq(what + " max", mx, r["max_us"])
        ck.eq(what + " min", mn, r["min_us"])
        ck.eq(what + " mean", mean, r["mean_us"], ROUNDED)
        ck.eq(what + " std", std, r["stddev_us"], ROUNDED)
    for key in got:
        if key[1] != "other" and key not in seen:
            ck.fail("kernels: rank %d %s %r not in HTA's table" % key)


def kernel_type(ck, want, ours):
    """HTA's rows split the time by the set of types running ("COMPUTATION
    overlapping COMMUNICATION": both); a type's union is the sum of the
    rows that name it."""
    column = {"compute": "compute_time_us", "communication": "communication_time_us", "memory": "memory_time_us"}
    union = {}
    for label, total in want["rows"]:
        for ktype in label.split(" overlapping "):
            union[HTA_TYPE[ktype]] = union.get(HTA_TYPE[ktype], D(0)) + D(total)
    for t, total in sorted(union.items()):
        ck.eq("kernel_type %s" % t, total, sum((r[column[t]] for r in ours), D(0)))


def main():
    args = sys.argv[1:]
    tolerance = D(0)
    if args[3:4] == ["--tolerance-us"] and len(args) == 5:
        tolerance = D(args[4])
        args = args[:3]
    if len(args) != 3:
        sys.exit(__doc__)
    binary, path, expected = args
    path = oc.trace_or_skip(binary, path)
    if path is None:
        return 77
    want = oc.expected(expected)
    ck = oc.Check(tolerance, KNOWN.get(expected, {}), source="HTA")
    breakdown = oc.run_json(binary, ["breakdown", path])
    temporal(ck, want["temporal"], breakdown)
    idle(ck, want["idle"], oc.run_json(binary, ["breakdown", "--idle", path]))
    kernels(ck, want["kernels"], oc.run_json(binary, ["kernels", path]))
    if want["ns_rounding"]:
        kernel_type(ck, want["kernel_type"], breakdown)
    else:
        print("kernel_type not compared: with HTA_DISABLE_NS_ROUNDING=1 HTA cuts each of its segments to whole us")
    return ck.finish("%d values equal HTA's%s (%s; largest difference %s us)%s"
                     % (ck.n - ck.n_known, " within %s us" % tolerance if tolerance else "", expected, ck.worst,
                        "; %d differ as docs/analyses.md says" % ck.n_known if ck.n_known else ""))


if __name__ == "__main__":
    sys.exit(main())
