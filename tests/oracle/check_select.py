#!/usr/bin/env python3
"""The golden cases of --category, --steps, --rank and --hide-annotations
(tests/golden/cases/report-select-*), checked against the Python reference, not
against the tool.

The selection is re-implemented here over the trace's raw JSON events, from the
rules of docs/report.md "Filters", then the reference (tests/oracle/key_averages.py)
builds its table from what is left:

  --steps A..B  a step is a "user_annotation" event "ProfilerStep#N", A <= N <= B, with
                the interval [ts, ts + dur); a host event is kept when its ts lies in a
                step; device work (a category PyTorch gives a device type) when the host
                event that launched it is kept: the host event with its args
                "correlation", else one with its "External id"; with neither, by its
                own ts;
  --category    then only events of those categories ("ph":"M" metadata, flows and the
                profiler's own "Trace" span always stay);
  --rank        the traces of those ranks (distributedInfo.rank, else the position in
                the directory, files in name order);
  --hide-annotations  the rows of user annotations are left out before the table is
                built, so they are in neither the totals nor the percentages.

The one trace a case selects gives a table that must equal the case's expected.out
byte for byte.
Usage: check_select.py"""
import copy
import decimal
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CASES = os.path.join(SRC, "tests", "golden", "cases")
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import case_args  # noqa: E402
import corpus  # noqa: E402
import key_averages as ka  # noqa: E402

LEGACY = {"Operator": "cpu_op", "Runtime": "cuda_runtime", "Kernel": "kernel", "Memcpy": "gpu_memcpy",
          "Memset": "gpu_memset", "gpu_user_Annotation": "gpu_user_annotation", "async": "ac2g"}
DEVICE = {"kernel", "gpu_memcpy", "gpu_memset", "cuda_sync", "gpu_user_annotation", "cuda_profiler_range",
          "mtia_ccp_events", "mtia_insight", "mtia_counters", "hpu_op"}
ALWAYS = {"ac2g", "fwdbwd", "Trace"}


def parse_args(args):
    o = {"category": None, "steps": None, "rank": None, "hide": False, "sort": None, "limit": 100, "path": None}
    it = iter(args)
    for a in it:
        if a == "--category":
            o["category"] = set(next(it).split(","))
        elif a == "--steps":
            first, last = next(it).split("..")
            o["steps"] = (int(first), int(last))
        elif a == "--rank":
            o["rank"] = set()
            for item in next(it).split(","):
                first, _, last = item.partition("-")
                o["rank"] |= set(range(int(first), int(last or first) + 1))
        elif a == "--hide-annotations":
            o["hide"] = True
        else:
            case_args.table_option(a, it, o, "path")
    return o


def cat_of(e):
    c = e.get("cat")
    return LEGACY.get(c, c)


def ts_of(e):
    return decimal.Decimal(e.get("ts", 0))


def step_of(e):
    name = str(e.get("name", ""))
    if cat_of(e) != "user_annotation" or e.get("ph") != "X" or not name.startswith("ProfilerStep#"):
        return None
    n = name[len("ProfilerStep#"):]
    return int(n) if n.isdigit() else None


def id_arg(e, *keys):
    args = e.get("args") or {}
    for k in keys:
        if isinstance(args.get(k), int) and not isinstance(args.get(k), bool):
            return args[k]
    return None


def keep_steps(events, first, last):
    steps = [(ts_of(e), ts_of(e) + decimal.Decimal(e.get("dur", 0))) for e in events
             if step_of(e) is not None and first <= step_of(e) <= last]
    if not steps:
        raise SystemExit("no step %d..%d" % (first, last))

    def in_steps(e):
        return any(a <= ts_of(e) < b for a, b in steps)

    by_corr, by_ext = {}, {}
    for e in events:
        if cat_of(e) in DEVICE or e.get("ph") not in ("X", "i", "I"):
            continue
        kept = in_steps(e)
        for table, key in ((by_corr, id_arg(e, "correlation")), (by_ext, id_arg(e, "External id", "external id"))):
            if key is not None:
                table[key] = table.get(key, False) or kept
    out = []
    for e in events:
        if e.get("ph") in ("M", "s", "f", "t") or cat_of(e) in ALWAYS:
            out.append(e)
        elif cat_of(e) not in DEVICE:
            if in_steps(e):
                out.append(e)
        else:
            corr, ext = id_arg(e, "correlation"), id_arg(e, "External id", "external id")
            launched = by_corr.get(corr) if corr in by_corr else by_ext.get(ext) if ext in by_ext else None
            if launched is True or (launched is None and in_steps(e)):
                out.append(e)
    return out


def select(data, o):
    events = data["traceEvents"]
    if o["steps"]:
        events = keep_steps(events, *o["steps"])
    if o["category"]:
        events = [e for e in events if e.get("ph") in ("M", "s", "f", "t") or cat_of(e) in ALWAYS
                  or cat_of(e) in o["category"]]
    data = copy.copy(data)
    data["traceEvents"] = events
    return data


def table(data, o):
    tr = ka.Trace(data)
    rows = ka.key_averages(ka.build_tree(tr.events), tr.use_device)
    if o["hide"]:
        rows = [r for r in rows if not r.is_user_annotation]
    return ka.build_table(rows, tr.use_device, ka.device_label_for(tr.use_device), tr.profile_memory,
                          sort_by=o["sort"], row_limit=o["limit"], max_name_column_width=None)


def traces(o):
    """[(path, rank or None)] of the case's input, after --rank."""
    if not os.path.isdir(o["path"]):
        return [(o["path"], None)]
    names = sorted(n for n in os.listdir(o["path"]) if ".json" in n)
    out = []
    for i, n in enumerate(names):
        path = os.path.join(o["path"], n)
        info = ka.load_trace(path).get("distributedInfo") or {}
        rank = info.get("rank", i)
        if o["rank"] is None or rank in o["rank"]:
            out.append((path, rank if "rank" in info or o["rank"] is not None else None))
    return out


def expected(o):
    kept = traces(o)
    if len(kept) != 1:
        raise SystemExit("the cases select one trace, not %d" % len(kept))
    return table(select(ka.load_trace(kept[0][0]), o), o)


def main():
    fails = 0
    names = sorted(n for n in os.listdir(CASES) if n.startswith("report-select-"))
    root = corpus.corpus_root()
    for name in names:
        with open(os.path.join(CASES, name, "args")) as f:
            args = [a.replace("@CORPUS@", root).replace("@SRC@", SRC) for a in f.read().split("\n") if a]
        o = parse_args(args)
        if not os.path.exists(o["path"]):
            print("skip: %s: %s not found" % (name, o["path"]))
            continue
        with open(os.path.join(CASES, name, "expected.out")) as f:
            got = f.read()
        want = expected(o)
        if got != want:
            print("FAIL %s: expected.out is not the reference's table of the selected events" % name)
            fails += 1
        else:
            print("ok   %s" % name)
    if not names:
        print("FAIL no report-select-* cases")
        return 1
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
