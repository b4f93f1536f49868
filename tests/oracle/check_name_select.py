#!/usr/bin/env python3
"""The analyses' event-name filters (--include, --exclude, --hide-annotations;
docs/report.md "Filters") against what they must mean, on a real trace
(tests/oracle/meson.build).

    check_name_select.py NEURON_STATS TRACE

* `kernels --include R` (and `--exclude R`): exactly the rows of plain
  `kernels` whose kernel name matches R (does not), read in Python with
  `re.search`, each with the same count, total, mean, median, min, max and
  stddev; the share is of the kept rows' total (it must add up to 100% and
  equal total / sum of totals);
* `stacks --hide-annotations` (the call tree, where annotations are
  frames) equals `stacks --category` with every category of the trace but
  user_annotation and gpu_user_annotation (the same events dropped another
  way), and plain `stacks` differs from it (the filter does something).

TRACE may start with @CORPUS@ as in run_one.py; a missing one is a skip (77).
"""
import gzip
import json
import re
import sys

import oracle_check as oc

D = oc.D
PATTERNS = ("gemm", "^void at::native::", "elementwise|reduce")
STATS = ("rank", "count", "total_us", "mean_us", "median_us", "min_us", "max_us", "stddev_us")
ANNOTATIONS = ("user_annotation", "gpu_user_annotation")
NOT_SELECTABLE = ("ac2g", "fwdbwd")  # flow categories, which --category refuses


def check_kernels(ck, binary, path):
    every = {r["name"]: r for r in oc.run_json(binary, ["kernels", path])}
    for pattern in PATTERNS:
        for opt, want_match in (("--include", True), ("--exclude", False)):
            got = oc.run_json(binary, ["kernels", path, opt, pattern])
            names = sorted(n for n in every if bool(re.search(pattern, n)) == want_match)
            if sorted(r["name"] for r in got) != names:
                ck.fail("kernels %s %r: rows %s, want %s" % (opt, pattern, sorted(r["name"] for r in got), names))
                continue
            total = sum(D(str(r["total_us"])) for r in got)
            for r in got:
                if r["type"] != every[r["name"]]["type"]:
                    ck.fail("kernels %s %r %s: type %s, want %s" % (opt, pattern, r["name"][:40], r["type"],
                                                                    every[r["name"]]["type"]))
                for k in STATS:
                    ck.eq("kernels %s %r %s %s" % (opt, pattern, r["name"][:40], k), every[r["name"]][k], r[k])
                ck.eq("kernels %s %r %s share" % (opt, pattern, r["name"][:40]),
                      (D(str(r["total_us"])) * 100 / total).quantize(D("0.001")), r["share_pct"], D("0.001"))


def trace_categories(path):
    """The "cat" values of the trace's events, read in Python."""
    with (gzip.open(path, "rt") if path.endswith(".gz") else open(path)) as f:
        doc = json.load(f)
    events = doc["traceEvents"] if isinstance(doc, dict) else doc
    return sorted({e["cat"] for e in events if isinstance(e.get("cat"), str)})


def check_hide(ck, binary, path):
    """stacks (the op tree, where annotations are frames), as the call tree."""
    hidden = oc.run_json(binary, ["stacks", path, "--hide-annotations"])
    others = [c for c in trace_categories(path) if c not in ANNOTATIONS + NOT_SELECTABLE]
    by_category = oc.run_json(binary, ["stacks", path, "--category", ",".join(others)])
    ck.n += 1
    if hidden != by_category:
        ck.fail("stacks --hide-annotations differs from --category without the annotations")
    if oc.run_json(binary, ["stacks", path]) == hidden:
        ck.fail("stacks --hide-annotations changed nothing")


def main():
    binary, trace = sys.argv[1], sys.argv[2]
    path = oc.trace_or_skip(binary, trace)
    if path is None:
        return 77
    ck = oc.Check(source="expected")
    check_kernels(ck, binary, path)
    check_hide(ck, binary, path)
    return ck.finish("%d values as the filters must give" % ck.n)


if __name__ == "__main__":
    sys.exit(main())
