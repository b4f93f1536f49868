#!/usr/bin/env python3
"""neuron-stats beside HTA and other tools, on the same trace files (issues 19, 22).

    python3 bench/hta_bench.py TRACE... [--repeat N] [--bin BIN] [--hta-src DIR]
                               [--suites tools,analyses] [--doc docs/performance.md]

For each TRACE (one benchmark trace of bench/gen_trace.py), in rounds, each
command run once per round in a fresh process, so that the tools alternate on the
same file while the machine's load drifts:

  tools (issue 22):
    neuron-stats report --no-cache TRACE
    HTA: TraceAnalysis(trace_dir=DIR) + get_gpu_kernel_breakdown (the "kernels" child below)
    python3 bench/baseline.py TRACE --quiet        (json.load + tests/oracle/key_averages.py)
    jq (sum of dur per name over traceEvents, JQ_PROGRAM below)
    bench/parse_floor TRACE  (simdjson's On Demand API walking every event on two
                              threads: the parse floor; built from bench/parse_floor.cpp
                              into bench/out/ when g++ and libsimdjson-dev are installed)
    cat TRACE > /dev/null
    wc -l TRACE
  (jq, parse_floor, cat and wc read a gzip'd TRACE through gzip -dc)
  analyses (issue 19), neuron-stats ... --no-cache TRACE against HTA on DIR:
    kernels            get_gpu_kernel_breakdown(visualize=False, num_kernels=2**40,
                                                duration_ratio=1.0, include_memory_kernels=True)
    breakdown          get_temporal_breakdown(visualize=False)
    breakdown --idle   get_idle_time_breakdown(ranks=[all], visualize=False)
    overlap            get_comm_comp_overlap(visualize=False)
    launches           get_cuda_kernel_launch_stats(visualize=False)

DIR is a temporary folder holding a symlink to TRACE (HTA reads a folder of
traces). HTA runs from its source (HTA_SRC, default /tmp/hta) with
/usr/bin/python3 (HTA_PYTHON) and Debian's python3-pandas, python3-numpy,
python3-plotly, python3-networkx; its default parser backend (json) is used.
Each HTA process imports HTA, loads the trace and runs one analysis: its CPU
time and peak RSS are the whole process's; it also reports the CPU and wall time
of the analysis alone (the load excluded), from getrusage inside the process.

Measured per process: CPU seconds (user + sys) and peak RSS from the kernel
(wait4's rusage, to the microsecond) and GNU /usr/bin/time (peak RSS), wall time from the clock around it. The table gives the median of
the runs (the minimum too). Ratios are of CPU seconds (a shared machine's wall
time says more about its neighbours than about the tool) and of peak RSS.

Environment:
  HTA_CAP_MIN     stop an HTA process after this many minutes (default 20); the row
                  then says "stopped after N min"
  HTA_MEM_GB      address-space limit of an HTA process, GiB (default 14), so that it
                  cannot take the machine's memory from others; a MemoryError is reported
  HTA_MAX         skip HTA on traces larger than this (bytes, K/M/G suffixes; default: no limit)
  BASELINE_MAX    skip the Python baseline and jq on larger traces (default 2G)
  HTA_ONCE_OVER   run HTA only in the first round on traces larger than this (default 200M)
"""

import argparse
import json
import os
import resource
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

from gen_trace import parse_size  # (bench/: the sizes the traces were made with)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)

JQ_PROGRAM = ('reduce (.traceEvents[] | select(.dur != null)) as $e ({}; .[$e.name] += $e.dur)'
              ' | to_entries[] | "\\(.key)\\t\\(.value)"')

FLOOR_SRC = os.path.join(HERE, "parse_floor.cpp")
FLOOR_BIN = os.path.join(HERE, "out", "parse_floor")

# neuron-stats arguments and the HTA analysis each is compared with (a child mode below)
ANALYSES = [
    ("kernels", ["kernels"], "get_gpu_kernel_breakdown"),
    ("breakdown", ["breakdown"], "get_temporal_breakdown"),
    ("idle", ["breakdown", "--idle"], "get_idle_time_breakdown"),
    ("overlap", ["overlap"], "get_comm_comp_overlap"),
    ("launches", ["launches"], "get_cuda_kernel_launch_stats"),
]


# --- the HTA child: one process, one analysis ------------------------------------------------

def cpu_now():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def hta_child(analysis, trace_dir, report):
    t0, c0 = time.perf_counter(), cpu_now()
    sys.path.insert(0, os.environ.get("HTA_SRC", "/tmp/hta"))
    from hta.trace_analysis import TraceAnalysis
    t1, c1 = time.perf_counter(), cpu_now()
    ta = TraceAnalysis(trace_dir=trace_dir)
    t2, c2 = time.perf_counter(), cpu_now()
    if analysis == "kernels":
        out = ta.get_gpu_kernel_breakdown(visualize=False, num_kernels=1 << 40, duration_ratio=1.0,
                                          include_memory_kernels=True)[1]
    elif analysis == "breakdown":
        out = ta.get_temporal_breakdown(visualize=False)
    elif analysis == "idle":
        ranks = sorted(int(r) for r in ta.t.traces.keys())
        out = ta.get_idle_time_breakdown(ranks=ranks, visualize=False)[0]
    elif analysis == "overlap":
        out = ta.get_comm_comp_overlap(visualize=False)
    elif analysis == "launches":
        out = ta.get_cuda_kernel_launch_stats(visualize=False)
        out = sum(len(df) for df in out.values())
    elif analysis == "load":
        out = None
    else:
        raise SystemExit("unknown analysis " + analysis)
    t3, c3 = time.perf_counter(), cpu_now()
    with open(report, "w") as f:
        json.dump({"import_cpu": c1 - c0, "load_cpu": c2 - c1, "analysis_cpu": c3 - c2,
                   "import_wall": t1 - t0, "load_wall": t2 - t1, "analysis_wall": t3 - t2,
                   "rows": out if isinstance(out, int) else (0 if out is None else len(out))}, f)


# --- measuring ---------------------------------------------------------------------------------

def measure(cmd, cap_s=None, stdout=subprocess.DEVNULL, preexec=None):
    """Run cmd under GNU time: {cpu, user, sys, wall, rss_mib} or {stopped: why}.

    CPU times: wait4's rusage of the time process, which holds its child's, to the
    microsecond (GNU time prints hundredths; time's own share is about a millisecond).
    Peak RSS: GNU time's %M, the command's own (a process forked from this Python
    would carry this Python's peak RSS over its exec)."""
    err = tempfile.TemporaryFile()
    fd, tf = tempfile.mkstemp(prefix="hta_bench.time.")
    os.close(fd)
    t0 = time.perf_counter()
    p = subprocess.Popen(["/usr/bin/time", "-f", "%M", "-o", tf] + cmd, stdout=stdout, stderr=err, start_new_session=True, preexec_fn=preexec)
    while True:
        pid, status, ru = os.wait4(p.pid, os.WNOHANG)
        if pid:
            break
        if cap_s is not None and time.perf_counter() - t0 > cap_s:
            os.killpg(p.pid, signal.SIGKILL)
            os.wait4(p.pid, 0)
            p.returncode = -9  # reaped here, not by Popen
            os.unlink(tf)
            return {"stopped": "stopped after %.0f min" % (cap_s / 60), "wall": time.perf_counter() - t0}
        time.sleep(0.005)
    wall = time.perf_counter() - t0
    p.returncode = os.waitstatus_to_exitcode(status)
    with open(tf) as f:
        lines = [ln for ln in f.read().split("\n") if ln.strip()]
    os.unlink(tf)
    if p.returncode != 0:
        err.seek(0)
        msg = err.read()
        tail = msg.decode(errors="replace").strip().split("\n")[-1:]
        why = "MemoryError (HTA_MEM_GB)" if b"MemoryError" in msg else "failed (exit %d)" % p.returncode
        sys.stderr.write("hta_bench: %s: %s: %s\n" % (" ".join(cmd[:3]), why, tail))
        return {"stopped": why, "wall": wall}
    return {"cpu": ru.ru_utime + ru.ru_stime, "user": ru.ru_utime, "sys": ru.ru_stime, "wall": wall,
            "rss_mib": int(lines[-1]) / 1024}


def floor_binary():
    """bench/out/parse_floor, built from bench/parse_floor.cpp when it is older; None (and why, on
    stderr) without g++ or simdjson's headers."""
    if os.path.exists(FLOOR_BIN) and os.path.getmtime(FLOOR_BIN) >= os.path.getmtime(FLOOR_SRC):
        return FLOOR_BIN
    if not shutil.which("g++") or not os.path.exists("/usr/include/simdjson.h"):
        sys.stderr.write("hta_bench: no g++ or libsimdjson-dev: the parse floor is not run\n")
        return None
    os.makedirs(os.path.dirname(FLOOR_BIN), exist_ok=True)
    r = subprocess.run(["g++", "-O2", "-std=c++17", "-o", FLOOR_BIN, FLOOR_SRC, "-lsimdjson", "-pthread"],
                       capture_output=True, text=True)
    if r.returncode != 0:
        sys.stderr.write("hta_bench: building %s failed: the parse floor is not run\n%s" % (FLOOR_SRC, r.stderr))
        return None
    return FLOOR_BIN


def hta_limits(mem_gb):
    def f():
        lim = int(mem_gb * (1 << 30))
        resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    return f


class Bench:
    def __init__(self, a):
        self.a = a
        self.hta_py = os.environ.get("HTA_PYTHON", "/usr/bin/python3")
        self.cap_s = float(os.environ.get("HTA_CAP_MIN", "20")) * 60
        self.mem_gb = float(os.environ.get("HTA_MEM_GB", "14"))
        self.hta_max = parse_size(os.environ["HTA_MAX"]) if os.environ.get("HTA_MAX") else None
        self.base_max = parse_size(os.environ.get("BASELINE_MAX", "2G"))
        self.hta_once = parse_size(os.environ.get("HTA_ONCE_OVER", "200M"))
        self.runs = {}    # (trace, key) -> [result]
        self.phases = {}  # (trace, hta analysis) -> [child report]
        self.skipped = {}  # (trace, key) -> why it did not run
        src = os.environ.get("HTA_SRC", "/tmp/hta")
        self.hta_src_ok = os.path.exists(os.path.join(src, "hta", "trace_analysis.py"))
        self.floor_bin = floor_binary() if "tools" in a.suites and not a.from_raw else None
        if not self.hta_src_ok:
            sys.stderr.write("hta_bench: no HTA source at %s (set HTA_SRC): HTA is not run\n" % src)

    def hta(self, trace, tdir, analysis):
        fd, rep = tempfile.mkstemp(prefix="hta_bench.rep.")
        os.close(fd)
        env_cmd = ["env", "OPENBLAS_NUM_THREADS=1", "OMP_NUM_THREADS=1",
                   self.hta_py, os.path.join(HERE, "hta_bench.py"), "--hta-child", analysis, tdir, rep]
        r = measure(env_cmd, cap_s=self.cap_s, preexec=hta_limits(self.mem_gb))
        if "stopped" not in r:
            with open(rep) as f:
                self.phases.setdefault((trace, analysis), []).append(json.load(f))
        os.unlink(rep)
        return r

    def commands(self, trace, tdir, first_round):
        """(key, label, run) for one round, in the order they alternate."""
        b, size = self.a.bin, os.path.getsize(trace)
        suites = self.a.suites
        hta_ok = self.hta_src_ok and (self.hta_max is None or size <= self.hta_max) and (first_round or size <= self.hta_once)
        base_ok = size <= self.base_max
        out = []
        if "tools" in suites:
            # (a gzip'd trace: jq, parse_floor, cat and wc read it through gzip -dc, in one shell whose rusage
            # counts the pipeline)
            gz = is_gzip(trace)
            piped = lambda tail: ["sh", "-c", 'gzip -dc -- "$1" | ' + tail, "sh", trace]
            out.append(("report", lambda: measure([b, "report", "--no-cache", trace])))
            if base_ok:
                out.append(("baseline", lambda: measure([sys.executable, os.path.join(HERE, "baseline.py"),
                                                         trace, "--quiet"])))
                out.append(("jq", lambda: measure(piped('jq -r "$2"') + [JQ_PROGRAM] if gz
                                                  else ["jq", "-r", JQ_PROGRAM, trace])))
            fb = self.floor_bin
            if fb:
                out.append(("floor", lambda: measure(piped('"$2" -') + [fb] if gz else [fb, trace])))
            out.append(("cat", lambda: measure(piped("cat") if gz else ["cat", trace])))
            out.append(("wc", lambda: measure(piped("wc -l") if gz else ["wc", "-l", trace])))
        for key, args, _ in ANALYSES:
            if key == "kernels" or "analyses" in suites:
                out.append(("ns-" + key, lambda args=args: measure([b] + args + ["--no-cache", trace])))
            if hta_ok and (key == "kernels" or "analyses" in suites):
                out.append(("hta-" + key, lambda key=key: self.hta(trace, tdir, key)))
        return out

    def run(self):
        for trace in self.a.traces:
            with open(trace, "rb") as f:  # the page cache
                while f.read(1 << 24):
                    pass
            tdir = tempfile.mkdtemp(prefix="hta_bench.")
            os.symlink(os.path.abspath(trace), os.path.join(tdir, os.path.basename(trace)))
            stopped = set()
            try:
                big = os.path.getsize(trace) > self.hta_once
                for i in range(self.a.repeat_large if big else self.a.repeat):
                    for key, fn in self.commands(trace, tdir, i == 0):
                        if key in stopped:
                            continue
                        r = fn()
                        self.runs.setdefault((trace, key), []).append(r)
                        sys.stderr.write("hta_bench: %s round %d %s: %s\n" % (os.path.basename(trace), i + 1,
                                                                              key, fmt_run(r)))
                        if "stopped" in r:
                            stopped.add(key)
                            if key.startswith("hta-"):
                                # every HTA analysis starts with the same load: skip the others
                                for k, _, _ in ANALYSES:
                                    self.skipped.setdefault((trace, "hta-" + k),
                                                            "not run (%s: %s)" % (key, r["stopped"]))
                                    stopped.add("hta-" + k)
            finally:
                shutil.rmtree(tdir)


def fmt_run(r):
    if "stopped" in r:
        return r["stopped"]
    return "cpu %.3f s (user %.3f, sys %.3f), wall %.3f s, %.0f MiB" % (r["cpu"], r["user"], r["sys"],
                                                                          r["wall"], r["rss_mib"])


# --- tables ------------------------------------------------------------------------------------

def summary(runs):
    """(median cpu, min cpu, median wall, max rss, n) or None; stopped: the reason."""
    ok = [r for r in runs if "stopped" not in r]
    if not ok:
        return runs[0]["stopped"] if runs else None
    cpu = [r["cpu"] for r in ok]
    return {"cpu": statistics.median(cpu), "cpu_min": min(cpu), "wall": statistics.median(r["wall"] for r in ok),
            "rss": max(r["rss_mib"] for r in ok), "n": len(ok)}


def cell_cpu(s):
    if s is None:
        return "not run"
    if isinstance(s, str):
        return s
    return "%.3f (%.3f)" % (s["cpu"], s["cpu_min"]) if s["n"] > 1 else "%.3f" % s["cpu"]


def is_gzip(trace):
    with open(trace, "rb") as f:
        return f.read(2) == b"\x1f\x8b"


def label(trace):
    meta = trace + ".meta.json"
    size = os.path.getsize(trace)
    ev = ""
    if os.path.exists(meta):
        with open(meta) as f:
            ev = ", %d events" % json.load(f)["events"]
    gz = ", gzip'd (jq, the parse floor, cat and `wc -l` read it through `gzip -dc`)" if is_gzip(trace) else ""
    return "%.0f MB%s%s" % (size / 1e6, ev, gz)


TOOL_ROWS = [
    ("report", "`neuron-stats report --no-cache`"),
    ("hta-kernels", "HTA: load + `get_gpu_kernel_breakdown`"),
    ("baseline", "Python baseline (`bench/baseline.py`)"),
    ("jq", "`jq` (sum of `dur` per name)"),
    ("floor", "simdjson walking every event, 2 threads (`bench/parse_floor.cpp`)"),
    ("cat", "`cat FILE > /dev/null`"),
    ("wc", "`wc -l FILE`"),
]


def tools_table(b, trace):
    s = {k: summary(b.runs.get((trace, k), [])) for k, _ in TOOL_ROWS}
    ns = s["report"]
    out = ["| %s | tool | CPU s, median (min) | wall s, median | peak RSS MiB | CPU vs neuron-stats |" % label(trace),
           "|---|---|---:|---:|---:|---:|"]
    for k, name in TOOL_ROWS:
        x = s[k]
        if x is None:
            continue
        if isinstance(x, str):
            out.append("| | %s | %s | | | |" % (name, x))
            continue
        rel = "1x" if k == "report" else (
            "%.1fx" % (x["cpu"] / ns["cpu"]) if isinstance(ns, dict) and ns["cpu"] > 0 else "")
        out.append("| | %s | %s | %.3f | %.0f | %s |" % (name, cell_cpu(x), x["wall"], x["rss"], rel))
    out.append("")
    ratios = []
    for k, name in (("hta-kernels", "HTA / neuron-stats"), ("baseline", "Python / neuron-stats")):
        if isinstance(s[k], dict) and isinstance(ns, dict):
            ratios.append("%s: %.0fx the CPU time, %.0fx the peak RSS" % (name, s[k]["cpu"] / ns["cpu"],
                                                                          s[k]["rss"] / ns["rss"]))
    if isinstance(s["floor"], dict) and isinstance(ns, dict) and s["floor"]["cpu"] > 0:
        ratios.append("neuron-stats / the simdjson walk: %.1fx the CPU time, %.1fx the wall time" % (
            ns["cpu"] / s["floor"]["cpu"], ns["wall"] / s["floor"]["wall"]))
    if isinstance(s["wc"], dict) and isinstance(ns, dict) and s["wc"]["cpu"] > 0:
        ratios.append("neuron-stats / `wc -l`: %.1fx the CPU time" % (ns["cpu"] / s["wc"]["cpu"]))
    if ratios:
        out.append("Ratios (medians): " + "; ".join(ratios) + ".")
        out.append("")
    return out


def analyses_table(b, trace):
    out = ["| %s | neuron-stats CPU s | HTA CPU s (load + analysis) | HTA analysis alone, CPU s | "
           "CPU ratio | peak RSS MiB: neuron-stats / HTA | RSS ratio |" % label(trace),
           "|---|---:|---:|---:|---:|---:|---:|"]
    for key, args, fn in ANALYSES:
        ns = summary(b.runs.get((trace, "ns-" + key), []))
        h = summary(b.runs.get((trace, "hta-" + key), [])) or b.skipped.get((trace, "hta-" + key))
        ph = b.phases.get((trace, key), [])
        alone = ("%.3f" % statistics.median(p["analysis_cpu"] for p in ph)) if ph else ""
        if isinstance(ns, dict) and isinstance(h, dict) and ns["cpu"] > 0:
            cr = "**%.0fx**" % (h["cpu"] / ns["cpu"])
            rr = "1/%.0f" % (h["rss"] / ns["rss"])
            mem = "%.0f / %.0f" % (ns["rss"], h["rss"])
        else:
            cr = rr = ""
            mem = "%.0f / -" % ns["rss"] if isinstance(ns, dict) else ""
        out.append("| `%s` vs `%s` | %s | %s | %s | %s | %s | %s |" % (
            " ".join(args), fn, cell_cpu(ns), cell_cpu(h), alone, cr, mem, rr))
    loads = [p["load_cpu"] for key, _, _ in ANALYSES for p in b.phases.get((trace, key), [])]
    imports = [p["import_cpu"] for key, _, _ in ANALYSES for p in b.phases.get((trace, key), [])]
    if loads:
        out.append("")
        out.append("HTA's `TraceAnalysis(trace_dir=DIR)` load: %.1f-%.1f CPU s over its %d processes; "
                   "`import hta`: %.1f-%.1f s." % (min(loads), max(loads), len(loads), min(imports), max(imports)))
    out.append("")
    return out


def header(b, load_start, load_end, when=None):
    def git(*args):
        try:
            return subprocess.run(["git", "-C", ROOT] + list(args), capture_output=True, text=True).stdout.strip()
        except OSError:
            return ""
    commit = git("rev-parse", "--short", "HEAD") or "unknown"
    if git("status", "--porcelain", "--", "src"):
        commit += " + uncommitted changes in src/"
    hta_src = os.environ.get("HTA_SRC", "/tmp/hta")
    hta_commit = ""
    try:
        hta_commit = subprocess.run(["git", "-C", hta_src, "rev-parse", "--short=8", "HEAD"], capture_output=True,
                                    text=True).stdout.strip()
    except OSError:
        pass
    pyv = subprocess.run([b.hta_py, "-c", "import sys, pandas; print(sys.version.split()[0], pandas.__version__)"],
                         capture_output=True, text=True).stdout.split()
    jqv = subprocess.run(["jq", "--version"], capture_output=True, text=True).stdout.strip()
    sjv = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "libsimdjson-dev"], capture_output=True,
                         text=True).stdout.strip()
    cpu = ""
    with open("/proc/cpuinfo") as f:
        for ln in f:
            if ln.startswith("model name"):
                cpu = ln.split(":", 1)[1].strip()
                break
    return [
        "Measured %s by `bench/hta_bench.py` (rounds: %d, 1 on traces over HTA_ONCE_OVER; `%s`)." % (
            when or time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), b.a.repeat,
            " ".join(["bench/hta_bench.py"] + ["--repeat", str(b.a.repeat), "--suites", ",".join(b.a.suites)]
                     + b.a.traces)),
        "",
        "* Machine: %d CPUs (%s), Linux %s; **shared with other work**: load average (1/5/15 min) "
        "%s at the start, %s at the end." % (os.cpu_count(), cpu, os.uname().release, load_start, load_end),
        "* neuron-stats: `%s`, source at %s. HTA: source at %s (`%s`), %s with Python %s and pandas %s, "
        "default parser backend (json). %s; simdjson %s; Python baseline: %s." % (
            b.a.bin, commit, hta_commit or "?", hta_src, b.hta_py, *(pyv + ["?", "?"])[:2], jqv,
            sjv or "not installed", sys.version.split()[0]),
        "* CPU s = user + sys (rusage from `wait4`, to the microsecond), peak RSS from GNU `/usr/bin/time` (%M), the median of the runs (the fastest in brackets); "
        "wall s from the clock; peak RSS the largest of the runs. Each command ran in a fresh process, once a "
        "round, the tools alternating on the same file (in the page cache). Ratios are of the medians.",
        "",
    ]


def write_doc(doc, marker, text):
    if not doc or not os.path.exists(doc):
        return False
    t = open(doc).read()
    a, b = "<!-- %s:begin -->" % marker, "<!-- %s:end -->" % marker
    if a not in t or b not in t:
        return False
    i, j = t.index(a) + len(a), t.index(b)
    with open(doc, "w") as f:
        f.write(t[:i] + "\n" + text + t[j:])
    return True


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--hta-child":
        return hta_child(*sys.argv[2:5])
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("traces", nargs="+")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--repeat-large", type=int, default=1,
                    help="rounds on traces larger than HTA_ONCE_OVER (default 1)")
    ap.add_argument("--from-raw", default=None, help="print the tables of an earlier run's --raw file")
    ap.add_argument("--bin", default=os.path.join(ROOT, "build-release", "src", "cli", "neuron-stats"))
    ap.add_argument("--suites", default="tools,analyses")
    ap.add_argument("--doc", default=None, help="rewrite the hta-tools / hta-analyses blocks of this file")
    ap.add_argument("--out", default=None, help="also write the markdown here")
    ap.add_argument("--raw", default=os.path.join(ROOT, "bench", "out", "hta_bench.raw.json"),
                    help="every run's figures, as JSON")
    a = ap.parse_args()
    a.suites = a.suites.split(",")
    if not os.access(a.bin, os.X_OK):
        sys.exit("hta_bench: no binary at %s" % a.bin)
    with open("/proc/loadavg") as f:
        load_start = " ".join(f.read().split()[:3])
    b = Bench(a)
    when = None
    if a.from_raw:
        with open(a.from_raw) as f:
            raw = json.load(f)
        b.runs = {(tr, k): v for tr, k, v in raw["runs"]}
        b.phases = {(tr, k): v for tr, k, v in raw["phases"]}
        b.skipped = {(tr, k): v for tr, k, v in raw["skipped"]}
        load_start, load_end, when = raw["load_start"], raw["load_end"], raw["when"]
    else:
        b.run()
        with open("/proc/loadavg") as f:
            load_end = " ".join(f.read().split()[:3])
        when = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
        os.makedirs(os.path.dirname(a.raw), exist_ok=True)
        with open(a.raw, "w") as f:
            json.dump({"when": when, "load_start": load_start, "load_end": load_end,
                       "runs": [[tr, k, v] for (tr, k), v in b.runs.items()],
                       "phases": [[tr, k, v] for (tr, k), v in b.phases.items()],
                       "skipped": [[tr, k, v] for (tr, k), v in b.skipped.items()]}, f, indent=1)
    head = header(b, load_start, load_end, when)
    tools, anal = list(head), list(head)
    for t in a.traces:
        tools += tools_table(b, t)
        anal += analyses_table(b, t)
    text = ""
    if "tools" in a.suites:
        text += "\n".join(tools) + "\n"
        if write_doc(a.doc, "hta-tools", "\n".join(tools) + "\n"):
            sys.stderr.write("hta_bench: updated the hta-tools block of %s\n" % a.doc)
    if "analyses" in a.suites:
        text += "\n".join(anal) + "\n"
        if write_doc(a.doc, "hta-analyses", "\n".join(anal) + "\n"):
            sys.stderr.write("hta_bench: updated the hta-analyses block of %s\n" % a.doc)
    sys.stdout.write(text)
    if a.out:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
