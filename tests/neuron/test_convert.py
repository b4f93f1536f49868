#!/usr/bin/env python3
"""The conversion path: raw .ntff/.pb files and neuron-explorer.

Usage: test_convert.py NEURON_STATS
A copy of fixtures/capture-sysprofile without its exports (trace.json without
device events, NEFFs, NTFF, ntrace.pb, trace_info.pb) is reported:
  1. with no neuron-explorer on PATH: exit 3, and the message lists the command;
  2. with tests/tools/neuron-explorer (a test double that logs its arguments
     and copies canned exports) first on PATH: the system profile is converted
     once into the cache, said on stderr, and Self NEURON equals truth.json;
  3. again: nothing is converted (the cached export is used);
  4. --engines: the device profiles are converted (2 commands per NEFF/NTFF
     pair), engine times equal truth.json;
  5. sql on the capture uses the converted export and writes no trace cache
     database (the report's cache policy); ingest -o DB converts beside the
     database, and the database reports the same Self NEURON (the store keeps
     the system profile's device events);
  6. a raw file on its own: exit 3; a failing tool: exit 5, no export left.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
CAPTURE = os.path.join(SRC, "fixtures", "capture-sysprofile")
TOOLS = os.path.join(SRC, "tests", "tools")
ENGINES = ["PE", "ACT", "DVE", "POOL", "SP", "DMA"]


def docs(text):
    out, i, dec = [], 0, json.JSONDecoder()
    while i < len(text):
        while i < len(text) and text[i].isspace():
            i += 1
        if i < len(text):
            d, i = dec.raw_decode(text, i)
            out.append(d)
    return out


class Case(object):
    def __init__(self, binary, tmp):
        self.binary, self.tmp, self.failures = binary, tmp, []
        with open(os.path.join(CAPTURE, "truth.json")) as f:
            self.truth = json.load(f)["ranks"][0]
        rel = os.path.dirname(self.truth["trace"])
        self.canned = os.path.join(CAPTURE, rel)
        self.cap = os.path.join(tmp, "capture")
        self.unit = os.path.join(self.cap, rel)
        os.makedirs(self.unit)
        for name in sorted(os.listdir(self.canned)):
            if name == "trace.json" or not name.endswith(".json"):
                shutil.copy(os.path.join(self.canned, name), self.unit)
        self.log = os.path.join(tmp, "explorer.log")
        self.cache = os.path.join(tmp, "cache")

    def run(self, args, explorer=True, canned=None, extra=None):
        path = os.environ.get("PATH", "/usr/bin:/bin")
        path = [p for p in path.split(":") if not os.path.exists(os.path.join(p, "neuron-explorer"))
                and not os.path.exists(os.path.join(p, "neuron-profile"))]
        env = dict(os.environ, PATH=":".join(([TOOLS] if explorer else []) + path), LC_ALL="C",
                   NEURON_STATS_CACHE_DIR=self.cache, NS_EXPLORER_LOG=self.log,
                   NS_EXPLORER_CANNED=canned or self.canned, **(extra or {}))
        return subprocess.run([self.binary] + args, capture_output=True, text=True, env=env)

    def calls(self):
        if not os.path.exists(self.log):
            return []
        with open(self.log) as f:
            return f.read().splitlines()

    def expect(self, cond, what):
        if not cond:
            self.failures.append(what)
        return cond

    def check_self(self, out, what):
        rows = [r for d in docs(out) if "rows" in d for r in d["rows"]]
        ops, dev = self.truth["self_neuron_us_by_op"], self.truth["self_neuron_us_by_device_row"]
        for r in rows:
            want = ops.get(r["name"], dev.get(r["name"], 0))
            self.expect(round(float(r["self_device_us"]) * 1000) == round(want * 1000),
                        "%s: %s Self NEURON %s us, truth %s us" % (what, r["name"], r["self_device_us"], want))
        self.expect(bool(rows), "%s: no rows" % what)


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    with tempfile.TemporaryDirectory() as tmp:
        c = Case(binary, tmp)
        report = [c.cap, "--format", "json", "-n", "-1"]

        # without a converter: the CPU table, the commands on stderr, exit 0 (3 with --strict)
        p = c.run(report, explorer=False)
        c.expect(p.returncode == 0, "1: exit %d without neuron-explorer, expected 0 (%s)" % (p.returncode, p.stderr))
        rows = [r for d in docs(p.stdout) if "rows" in d for r in d["rows"]] if p.returncode == 0 else []
        c.expect(bool(rows) and all(float(r["self_device_us"]) == 0 for r in rows), "1: no CPU-only table")
        c.expect(c.run(report + ["--strict"], explorer=False).returncode == 3, "1: --strict is not exit 3")
        c.expect("raw Neuron capture files (ntrace.pb, trace_info.pb)" in p.stderr, "1: message: " + p.stderr)
        c.expect("neuron-explorer view -d %s --output-format json --ignore-device-profile --output-file %s/system_profile.json"
                 % (c.unit, c.unit) in p.stderr, "1: the hint lacks the command: " + p.stderr)
        c.expect(not c.calls(), "1: something ran")

        p = c.run(report)
        c.expect(p.returncode == 0, "2: exit %d: %s" % (p.returncode, p.stderr))
        calls = c.calls()
        c.expect(len(calls) == 1, "2: %d conversions, expected 1: %s" % (len(calls), calls))
        c.expect(bool(calls) and re.fullmatch(
            r"view -d %s --output-format json --ignore-device-profile --output-file %s/neuron/[0-9a-f]{16}/system_profile\.json\.tmp-\d+"
            % (re.escape(c.unit), re.escape(c.cache)), calls[0]), "2: arguments: %s" % calls)
        c.expect("neuron-stats: converting with neuron-explorer: " in p.stderr and
                 "neuron-stats: Neuron exports cached in %s/neuron/" % c.cache in p.stderr, "2: stderr: " + p.stderr)
        c.check_self(p.stdout, "2")

        p = c.run(report)
        c.expect(p.returncode == 0 and p.stderr == "", "3: exit %d, stderr %r" % (p.returncode, p.stderr))
        c.expect(len(c.calls()) == 1, "3: converted again: %s" % c.calls()[1:])
        c.check_self(p.stdout, "3")

        p = c.run(report + ["--engines"])
        c.expect(p.returncode == 0, "4: exit %d: %s" % (p.returncode, p.stderr))
        new = c.calls()[1:]
        c.expect(len(new) == 12, "4: %d device conversions, expected 12 (6 pairs x 2)" % len(new))
        c.expect(all(re.fullmatch(r"view -n \S+/neff_\d+_vnc_0\.neff -s \S+/profile_nc_0_session_1\.ntff "
                                  r"--output-format (json --output-file \S+__neff_\d+\.json\.tmp-\d+|summary-json)", a)
                     for a in new), "4: arguments: %s" % new)
        d = docs(p.stdout)
        eng = {r["name"]: r for x in d if "engines" in x for r in x["engines"]}
        for op, per in c.truth["engines_us_by_op"].items():
            for e in ENGINES:
                got = eng.get(op, {}).get(e + "_us", 0)
                c.expect(round(float(got) * 1000) == round(per[e] * 1000), "4: %s %s %s us, truth %s" % (op, e, got, per[e]))

        p = c.run(["ls", c.cap])
        c.expect(p.returncode == 0 and "converted exports are in %s/neuron/" % c.cache in p.stdout
                 and "missing: nothing" in p.stdout, "5: ls: %s%s" % (p.stdout, p.stderr))

        # sql on the capture: one cache policy with report (src/pipeline/cache.c): no
        # trace cache database (the exports are not in its key), the exports converted
        # in 2 reused, and the temporary database deleted
        sql_tmp = os.path.join(tmp, "sqltmp")
        os.makedirs(sql_tmp)
        n_calls = len(c.calls())
        p = c.run(["sql", c.cap, "SELECT count(*) AS n FROM kernels", "--format", "csv"], extra={"TMPDIR": sql_tmp})
        c.expect(p.returncode == 0 and p.stdout.startswith("n\n") and int(p.stdout.split()[1]) > 0,
                 "5: sql exit %d: %r %s" % (p.returncode, p.stdout, p.stderr))
        c.expect(len(c.calls()) == n_calls, "5: sql converted again: %s" % c.calls()[n_calls:])
        dbs = [f for f in os.listdir(c.cache) if f.endswith(".db")]
        c.expect(not dbs and not os.listdir(sql_tmp), "5: sql left %s in the cache, %s in TMPDIR" % (dbs, os.listdir(sql_tmp)))

        db = os.path.join(tmp, "run.db")
        p = c.run(["ingest", c.cap, "-o", db])
        c.expect(p.returncode == 0, "6: ingest exit %d: %s" % (p.returncode, p.stderr))
        c.expect(os.path.exists(os.path.join(db + ".neuron")), "6: no %s.neuron folder" % db)
        p = c.run([db, "--format", "json", "-n", "-1"], explorer=False)
        c.expect(p.returncode == 0, "6: report DB exit %d: %s" % (p.returncode, p.stderr))
        c.check_self(p.stdout, "6 (from the database)")

        p = c.run([os.path.join(c.unit, "ntrace.pb")])
        c.expect(p.returncode == 3 and "raw Neuron capture file (runtime .pb)" in p.stderr, "7: %s" % p.stderr)
        p = c.run([os.path.join(c.unit, "profile_nc_0_session_1.ntff")])
        c.expect(p.returncode == 3 and "NTFF device trace" in p.stderr and "neuron-explorer view -n" in p.stderr,
                 "7: %s" % p.stderr)

        shutil.rmtree(c.cache)
        empty = os.path.join(tmp, "empty")
        os.makedirs(empty)
        p = c.run(report + ["--strict"], canned=empty)
        c.expect(p.returncode == 5 and "neuron-explorer failed (exit status 1)" in p.stderr, "8: %d %s" % (p.returncode, p.stderr))
        p = c.run(report, canned=empty)
        c.expect(p.returncode == 0 and "neuron-explorer failed (exit status 1)" in p.stderr, "8: %d %s" % (p.returncode, p.stderr))
        left = [f for _, _, fs in os.walk(c.cache) for f in fs if f.endswith(".json") or ".tmp-" in f]
        c.expect(not left, "8: a failed conversion left %s" % left)

        # a stuck converter is stopped at NEURON_STATS_CONVERT_TIMEOUT; the CPU table stays
        shutil.rmtree(c.cache, ignore_errors=True)
        p = c.run(report, extra={"NS_EXPLORER_SLEEP": "30", "NEURON_STATS_CONVERT_TIMEOUT": "1"})
        c.expect(p.returncode == 0 and "timed out after 1 s" in p.stderr and '"rows"' in p.stdout,
                 "9: %d %s" % (p.returncode, p.stderr))
        left = [f for _, _, fs in os.walk(c.cache) for f in fs if f.endswith(".json") or ".tmp-" in f]
        c.expect(not left, "9: a stopped conversion left %s" % left)

    for f in c.failures:
        print("FAIL " + f)
    print("ok: conversion path" if not c.failures else "%d failures" % len(c.failures))
    return 1 if c.failures else 0


if __name__ == "__main__":
    sys.exit(main())
