#!/usr/bin/env python3
"""diff --test on the mixed-op pair (gen_mix_pair.py): expected values from outside the C code.

    python3 tests/diff/test_mix_pair.py NEURON_STATS [MIX_DIR]

The generator's truth.json holds every call's and every step's value (ns). From them this
script computes the p-values, medians and MADs the diff must print: p with
scipy.stats.mannwhitneyu when scipy is installed, else with the plain-Python test below
(the same definition: the normal approximation with tie and continuity corrections above
40 values in all, the exact permutation distribution up to 40, as docs/diff.md states;
where scipy is present both are computed and must agree). It checks:

  - per-step (the default): aten::mm's kernel is NOT flagged (the varying mix hides it);
  - per-call and per-step-call: it is flagged as regressed, decided by that comparison;
  - aten::add (unchanged per call) is flagged by none; --fail-on regression exits 0 / 4;
  - --ranks match on mix-ranks/: rank i against rank i by distributedInfo.rank (not by file
    order): rank 0 unchanged, rank 1 regressed, the gate trips on rank 1 alone.
"""

import json
import math
import os
import shutil
import statistics
import subprocess
import sys

try:
    from scipy.stats import mannwhitneyu
except ImportError:  # the plain-Python reference below stands alone
    mannwhitneyu = None

HERE = os.path.dirname(os.path.abspath(__file__))
MM = "neuron_graph::mm_f32_512x1024x4096"
ADD = "neuron_graph::add_f32_512x4096"
ALPHA, THRESHOLD = 0.05, 5.0
failures = []


def check(what, ok, detail=""):
    print("%s %s%s" % ("ok  " if ok else "FAIL", what, (": " + detail) if detail else ""))
    if not ok:
        failures.append(what)


def close(a, b, rel=2e-4):
    return abs(a - b) <= rel * max(abs(a), abs(b), 1e-300)


def us3(ns):
    return round(ns / 1000.0, 3)


def median_mad(v):
    m = statistics.median(v)
    return m, statistics.median([abs(x - m) for x in v])


def mid_ranks(pooled):
    """1-based mid-ranks of pooled values, and the tie term sum(t^3 - t)."""
    order = sorted(range(len(pooled)), key=lambda i: pooled[i])
    ranks, ties, i = [0.0] * len(pooled), 0, 0
    while i < len(order):
        j = i
        while j + 1 < len(order) and pooled[order[j + 1]] == pooled[order[i]]:
            j += 1
        for k in range(i, j + 1):
            ranks[order[k]] = (i + j + 2) / 2.0
        t = j - i + 1
        ties += t * t * t - t
        i = j + 1
    return ranks, ties


def plain_p(a, b):
    """Two-sided Mann-Whitney U p-value of a vs b, from the definition."""
    na, nb = len(a), len(b)
    n = na + nb
    ranks, ties = mid_ranks(list(a) + list(b))
    u = sum(ranks[:na]) - na * (na + 1) / 2.0
    if n <= 40:
        # exact: the distribution of the sum of na of the n (doubled) mid-ranks
        ways = [dict() for _ in range(na + 1)]
        ways[0][0] = 1
        for r in ranks:
            r2 = int(round(2 * r))
            for k in range(na, 0, -1):
                for s, c in ways[k - 1].items():
                    ways[k][s + r2] = ways[k].get(s + r2, 0) + c
        obs = int(round(2 * sum(ranks[:na])))
        total = sum(ways[na].values())
        below = sum(c for s, c in ways[na].items() if s <= obs)
        above = sum(c for s, c in ways[na].items() if s >= obs)
        return min(1.0, 2.0 * min(below, above) / total)
    mean = na * nb / 2.0
    var = na * nb / 12.0 * ((n + 1) - ties / (n * (n - 1.0)))
    z = max(abs(u - mean) - 0.5, 0.0) / math.sqrt(var)
    return min(1.0, math.erfc(z / math.sqrt(2.0)))


def reference_p(a, b):
    p = plain_p(a, b)
    if mannwhitneyu is not None:
        method = "exact" if len(a) + len(b) <= 40 else "asymptotic"
        p_scipy = mannwhitneyu(a, b, alternative="two-sided", method=method, use_continuity=True).pvalue
        check("scipy and the plain-Python test agree (n %d + %d)" % (len(a), len(b)), close(p, p_scipy, 1e-9),
              "%g vs %g" % (p, p_scipy))
        return p_scipy
    return p


def run_diff(ns, mix, test, fail_on=False):
    cmd = [ns, "diff", os.path.join(mix, "base"), os.path.join(mix, "new"), "--no-cache", "--format", "json"]
    if test:
        cmd += ["--test", test]
    if fail_on:
        cmd += ["--fail-on", "regression"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    return p.returncode, json.loads(p.stdout)


def device_metric(doc, name):
    row = [r for r in doc["rows"] if r["name"] == name and r["on"] == "device"][0]
    return row, row["self_device"]


def expect_stats(label, got, base, new, p_ref, scale=1.0, tol=0.0):
    """got: the JSON's statistics object; base/new: the values compared (ns, / scale);
    tol: how far (us) a median may be off (per-step-call: the C code keeps each step's
    quotient rounded to the picosecond, so a median can sit on the other side of a half)."""
    bm, bmad = median_mad(base)
    nm, nmad = median_mad(new)
    check(label + " base median", abs(got["base_median_us"] - us3(bm / scale)) <= tol + 1e-9,
          "%s vs %s" % (got["base_median_us"], us3(bm / scale)))
    check(label + " new median", abs(got["new_median_us"] - us3(nm / scale)) <= tol + 1e-9,
          "%s vs %s" % (got["new_median_us"], us3(nm / scale)))
    check(label + " base MAD", abs(got["base_mad_us"] - us3(bmad / scale)) <= 0.0011)
    check(label + " new MAD", abs(got["new_mad_us"] - us3(nmad / scale)) <= 0.0011)
    check(label + " p", close(got["p"], p_ref), "diff %g, scipy %g" % (got["p"], p_ref))
    return (nm - bm) * 100 / bm, p_ref


def check_ranks(ns, ranks_dir):
    cmd = [ns, "diff", os.path.join(ranks_dir, "base"), os.path.join(ranks_dir, "new"), "--no-cache", "--format",
           "json", "--ranks", "match", "--test", "per-call", "--fail-on", "regression"]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, universal_newlines=True)
    doc = json.loads(p.stdout)
    check("ranks: schema", doc["schema"] == "neuron-stats-diff-ranks/1")
    pairs = [(r["rank"], os.path.basename(r["diff"]["base"]["input"]), os.path.basename(r["diff"]["new"]["input"]))
             for r in doc["ranks"]]
    check("ranks: matched by distributedInfo.rank", pairs == [(0, "rank0.json", "b.json"), (1, "rank1.json", "a.json")],
          str(pairs))
    verdicts = [device_metric(r["diff"], MM)[0]["verdict"] for r in doc["ranks"]]
    check("ranks: mm kernel unchanged on rank 0, regressed on rank 1", verdicts == ["unchanged", "regressed"],
          str(verdicts))
    check("ranks: the aggregate sums both", doc["aggregate"]["base"]["traces"] == 2)
    outcomes = [(o["rank"], o["regressed"], o["base_self_device_us"], o["new_self_device_us"])
                for o in doc["rank_verdicts"]]
    want = [(r["rank"], r["diff"]["verdicts"]["regressed"], r["diff"]["totals"]["self_device"]["base_us"],
             r["diff"]["totals"]["self_device"]["new_us"]) for r in doc["ranks"]]
    check("ranks: rank_verdicts has each pair's regressed count and Self device totals", outcomes == want,
          "%s != %s" % (outcomes, want))
    check("ranks: --fail-on regression exits 4", p.returncode == 4, str(p.returncode))


def check_reservoir(ns):
    """More than NS_DIFF_CALL_SAMPLES calls: 4096 kept per run, the same ones every run."""
    import tempfile
    sys.path.insert(0, HERE)
    from gen_mix_pair import MixSide, SLOWDOWN, K as KERNELS
    tmp = tempfile.mkdtemp()
    for seed, run in enumerate(("base", "new")):
        scale = {(KERNELS["mm"], "self_device"): SLOWDOWN} if run == "new" else {}
        side = MixSide(seed + 7, [(410, 1)] * 12, scale)
        side.generate()
        os.makedirs(os.path.join(tmp, run))
        with open(os.path.join(tmp, run, "trace.json"), "w") as f:
            f.write(side.render("reservoir-" + run))
    outs = [run_diff(ns, tmp, "per-call")[1] for _ in range(2)]
    shutil.rmtree(tmp)
    row, m = device_metric(outs[0], MM)
    check("reservoir: 4920 calls, 4096 kept per run", (row["calls"]["base"], m["compared"]["base_n"],
                                                         m["compared"]["new_n"]) == (4920, 4096, 4096))
    check("reservoir: the same sample every run", outs[0]["rows"] == outs[1]["rows"])
    check("reservoir: regressed, per-call", (row["verdict"], row["decided_by"]) == ("regressed", "per-call"))
    check("reservoir: the median moves by about 40%", 35 < m["compared"]["change_pct"] < 45,
          str(m["compared"]["change_pct"]))


def main():
    ns = sys.argv[1]
    mix = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "mix")
    with open(os.path.join(mix, "truth.json")) as f:
        truth = json.load(f)
    key = MM + "|device|self_device"
    calls = {s: truth["per_call"][s][key] for s in ("base", "new")}
    steps = {s: truth["per_step"][s][key] for s in ("base", "new")}
    n_calls = truth["per_step_calls"]
    per_step_call = {s: [t / c for t, c in zip(steps[s], n_calls[s]["aten::mm"]) if c] for s in ("base", "new")}

    # per-step sums (the default rule): the mix hides the slowdown
    rc, doc = run_diff(ns, mix, None, fail_on=True)
    row, m = device_metric(doc, MM)
    pct, p = expect_stats("per-step", m["steps"], steps["base"], steps["new"],
                          reference_p(steps["base"], steps["new"]))
    check("per-step: not significant", not (abs(pct) > THRESHOLD and p < ALPHA), "%.1f%%, p %.4g" % (pct, p))
    check("per-step: mm kernel unchanged", row["verdict"] == "unchanged", row["verdict"])
    check("per-step: no decided_by column (default form)", "decided_by" not in row)
    check("per-step: --fail-on regression exits 0", rc == 0, str(rc))

    # per-call durations
    rc, doc = run_diff(ns, mix, "per-call", fail_on=True)
    row, m = device_metric(doc, MM)
    pct, p = expect_stats("per-call", m["compared"], calls["base"], calls["new"],
                          reference_p(calls["base"], calls["new"]))
    check("per-call: values compared", (m["compared"]["base_n"], m["compared"]["new_n"]) ==
          (len(calls["base"]), len(calls["new"])))
    check("per-call: normal approximation", m["compared"]["p_exact"] is False)
    check("per-call: significant", abs(pct) > THRESHOLD and p < ALPHA, "%.1f%%, p %.4g" % (pct, p))
    check("per-call: mm kernel regressed, decided by per-call",
          (row["verdict"], row["decided_by"], m["judged_on"]) == ("regressed", "per-call", "per-call"))
    add_row, add_m = device_metric(doc, ADD)
    add_calls = {s: truth["per_call"][s][ADD + "|device|self_device"] for s in ("base", "new")}
    expect_stats("per-call add", add_m["compared"], add_calls["base"], add_calls["new"],
                 reference_p(add_calls["base"], add_calls["new"]))
    check("per-call: add kernel unchanged", add_row["verdict"] == "unchanged", add_row["verdict"])
    check("per-call: --fail-on regression exits 4", rc == 4, str(rc))

    # per-step time per call
    rc, doc = run_diff(ns, mix, "per-step-call")
    row, m = device_metric(doc, MM)
    pct, p = expect_stats("per-step-call", m["compared"], per_step_call["base"], per_step_call["new"],
                          reference_p(per_step_call["base"], per_step_call["new"]), tol=0.001)
    check("per-step-call: exact", m["compared"]["p_exact"] is True)
    check("per-step-call: mm kernel regressed, decided by per-step-call",
          (row["verdict"], row["decided_by"]) == ("regressed", "per-step-call"))

    check_ranks(ns, os.path.join(os.path.dirname(mix), "mix-ranks"))
    check_reservoir(ns)
    print("%d failure(s)" % len(failures))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
