#!/usr/bin/env python3
"""Run the libFuzzer targets of a -Dfuzzers=true build and summarise them.

    python3 tests/fuzz/run_fuzzers.py BUILD_DIR [--seconds 60] [--jobs 2]
        [--work DIR] [--only NAME,...] [-- extra libFuzzer flags]

For each target fuzz-NAME in BUILD_DIR/tests/fuzz/ it runs

    fuzz-NAME WORK/NAME/corpus tests/fuzz/corpus/NAME tests/fuzz/regressions/NAME
        -max_total_time=SECONDS -timeout=20 -rss_limit_mb=2560
        -artifact_prefix=WORK/NAME/ -print_final_stats=1

(new coverage goes to WORK/NAME/corpus, which persists between runs, so
long runs resume; the committed seeds are only read). --jobs targets run at
once. The summary gives executions, seconds and exec/s per target and lists
every crash/leak/timeout/OOM input left in WORK/NAME/, then each such
target's report and its inputs of up to 4 KiB in base64. Exit status 1 if any
target left one (copy it to tests/fuzz/regressions/NAME/ once fixed, so
`meson test` replays it from then on).
"""

import argparse
import base64
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def run_one(build, name, seconds, work, extra):
    exe = os.path.join(build, "tests", "fuzz", "fuzz-" + name)
    wdir = os.path.join(work, name)
    cdir = os.path.join(wdir, "corpus")
    os.makedirs(cdir, exist_ok=True)
    for old in glob.glob(os.path.join(wdir, "fuzz-*.log")):
        os.remove(old)
    dirs = [cdir, os.path.join(HERE, "corpus", name)]
    reg = os.path.join(HERE, "regressions", name)
    if os.path.isdir(reg):
        dirs.append(reg)
    args = [exe] + dirs + ["-max_total_time=%d" % seconds, "-timeout=20", "-rss_limit_mb=2560",
                           "-artifact_prefix=%s/" % wdir, "-print_final_stats=1"]
    if name == "opt":
        args.append("-close_fd_mask=2")  # the usage messages of ns_opt_parse
    args += extra
    log_path = os.path.join(wdir, "fuzz.log")
    t0 = time.time()
    with open(log_path, "w") as log:
        rc = subprocess.call(args, stdout=log, stderr=subprocess.STDOUT,
                             env=dict(os.environ, ASAN_OPTIONS=os.environ.get("ASAN_OPTIONS", "detect_leaks=1")))
    secs = time.time() - t0
    text = open(log_path, errors="replace").read()
    m = re.findall(r"stat::number_of_executed_units:\s*(\d+)", text)
    execs = int(m[-1]) if m else 0
    m = re.findall(r"#\d+\s+DONE\s+cov: (\d+) ft: (\d+) corp: (\d+)/", text)
    cov = m[-1] if m else ("?", "?", "?")
    found = sorted(p for p in glob.glob(os.path.join(wdir, "*"))
                   if re.match(r"(crash|leak|timeout|oom|slow-unit)-", os.path.basename(p)))
    return dict(name=name, rc=rc, execs=execs, secs=secs, cov=cov[0], ft=cov[1], corpus=cov[2],
                found=found, log=log_path)


def report_tail(log_path, max_lines=60):
    """The report in a fuzz log: from its first sanitizer, libFuzzer or
    FUZZ_CHECK error line, else the log's last lines."""
    lines = open(log_path, errors="replace").read().splitlines()
    start = next((i for i, line in enumerate(lines)
                  if re.search(r"==\d+==ERROR|ERROR: libFuzzer|runtime error:|check failed: ", line)),
                 max(len(lines) - max_lines, 0))
    return "\n".join(lines[start:start + max_lines])


def describe_findings(r, max_input=4096):
    """A target's report and, for inputs up to max_input bytes, the input
    in base64: a CI log is all that a CI run leaves."""
    out = ["", "---- fuzz-%s: the report in %s ----" % (r["name"], r["log"]), report_tail(r["log"])]
    for path in r["found"]:
        data = open(path, "rb").read()
        if len(data) <= max_input:
            out.append("---- %s (%d bytes; base64 -d to replay it) ----" % (os.path.basename(path), len(data)))
            out.append(base64.b64encode(data).decode())
    return "\n".join(out)


def main():
    argv = sys.argv[1:]
    extra = []
    if "--" in argv:
        extra = argv[argv.index("--") + 1:]
        argv = argv[:argv.index("--")]
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("build")
    ap.add_argument("--seconds", type=int, default=60)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--work", default=None, help="default: BUILD/fuzz-work")
    ap.add_argument("--only", default="")
    a = ap.parse_args(argv)
    work = a.work or os.path.join(a.build, "fuzz-work")
    names = sorted(os.path.basename(p)[5:] for p in glob.glob(os.path.join(a.build, "tests", "fuzz", "fuzz-*"))
                   if os.access(p, os.X_OK) and not p.endswith(".p"))
    if a.only:
        want = a.only.split(",")
        names = [n for n in names if n in want]
    if not names:
        sys.exit("run_fuzzers: no fuzz-* targets in %s/tests/fuzz (configure with -Dfuzzers=true, CC=clang)" % a.build)
    with concurrent.futures.ThreadPoolExecutor(max_workers=a.jobs) as pool:
        results = list(pool.map(lambda n: run_one(a.build, n, a.seconds, work, extra), names))
    print("%-10s %12s %8s %9s %6s %7s %7s  %s" % ("target", "executions", "seconds", "exec/s", "cov", "ft",
                                                  "corpus", "result"))
    bad = 0
    for r in results:
        status = "ok" if not r["found"] and r["rc"] == 0 else "FOUND %s (rc %d, log %s)" % (
            ", ".join(os.path.basename(p) for p in r["found"]) or "-", r["rc"], r["log"])
        bad += status != "ok"
        print("%-10s %12d %8.0f %9.0f %6s %7s %7s  %s" % (r["name"], r["execs"], r["secs"],
                                                         r["execs"] / max(r["secs"], 1e-9), r["cov"], r["ft"],
                                                         r["corpus"], status))
    print("total      %12d" % sum(r["execs"] for r in results))
    for r in results:
        if r["found"] or r["rc"] != 0:
            print(describe_findings(r))
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
