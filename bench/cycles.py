#!/usr/bin/env python3
"""Where the instructions of a run go, per trace event (docs/performance.md
"Where the cycles go").

    valgrind --tool=callgrind --callgrind-out-file=cg.out \
        build-prof/src/cli/neuron-stats report --no-cache bench/out/trace-100M.json
    python3 bench/cycles.py cg.out --events 338133

The profile should come from a release build with debug info
(`meson setup build-prof --buildtype=release -Ddebug=true -Dtests=false`):
inlined code is then charged to the function it was inlined from, by file.
Each function's own instructions (exclusive counts) go to one bucket by the
rules below; the table gives instructions per event and the share.
"""
import argparse
import re
import subprocess
import sys

# (bucket, pattern over "file:function"), first match wins
RULES = [
    ("number tokens skipped (args arrays)", r"scan\.c:number_next|scan\.c:skip_number"),
    ("number parsing (ts, dur, ids)", r"numparse\.c:|kineto\.c:(time_field|int_field|is_nonfinite|is_integer_token)|strncasecmp"),
    ("key dispatch", r"kineto\.c:(event_field|args_field|event_object|name_field|span_is)|memcmp"),
    ("tokenizer (strings, structure, skipping)", r"json/(scan\.[ch]|blocks\.c):|emmintrin|immintrin|avx2intrin\.h:|kineto\.c:(walk_object|next_event|read_event)|memchr"),
    ("string interning (names, shapes, stacks)", r"intern|strtab|utf8"),
    ("input (read, copy into the window)", r"source\.c:|memmove|memcpy|read"),
    ("event model (convert, classify, keep, FLOPs)", r"kineto\.c:|common/trace\.[ch]:|flops\.c:|rows\.c:"),
    ("aggregation (FunctionEvents, key_averages)", r"aggregate|msort|qsort|i64map"),
    ("output (table)", r"report/|printf|vfprintf|stdio|grid"),
    ("allocation", r"malloc|free|realloc|calloc"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("profile")
    ap.add_argument("--events", type=int, required=True, help="trace events (the trace's .meta.json)")
    a = ap.parse_args()
    text = subprocess.run(["callgrind_annotate", "--threshold=100", "--auto=no", a.profile],
                          capture_output=True, text=True, check=True).stdout
    total = None
    buckets = {name: 0 for name, _ in RULES}
    buckets["other (start-up, kernel entry, libc)"] = 0
    for line in text.splitlines():
        m = re.match(r"\s*([\d,]+)\s+\([\s\d.]+%\)\s+(.*)$", line)
        if not m:
            continue
        count = int(m.group(1).replace(",", ""))
        what = m.group(2)
        if "PROGRAM TOTALS" in what:
            total = count
            continue
        for name, pat in RULES:
            if re.search(pat, what):
                buckets[name] += count
                break
        else:
            buckets["other (start-up, kernel entry, libc)"] += count
    if total is None:
        sys.exit("no PROGRAM TOTALS in the callgrind_annotate output")
    print(f"| part | instructions/event | share |")
    print(f"|---|---:|---:|")
    for name, count in sorted(buckets.items(), key=lambda kv: -kv[1]):
        print(f"| {name} | {count / a.events:,.0f} | {100 * count / total:.1f}% |")
    print(f"| **total** | **{total / a.events:,.0f}** | {total:,} instructions |")


if __name__ == "__main__":
    main()
