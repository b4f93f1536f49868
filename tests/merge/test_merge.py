#!/usr/bin/env python3
"""`neuron-stats merge` (docs/cli.md "merge", docs/schema.md "Merging databases").

    test_merge.py NEURON_STATS SOURCE_ROOT WORK_DIR

Per-rank databases (`ingest TRACE -o shard_i.db`) merged into one must report
exactly what the directory of the traces reports: byte-identical output of
`report --merge`, `report`, `kernels`, `breakdown`, `stragglers`, `overlap`, `launches`
and `diff` (run.db against the directory, as the directory against itself), and the same rows, table by table, as
`ingest DIR -o dir.db`. On:

  * the 8 DLRM ranks of the vendored corpus (tests/data/corpus, facebookresearch-param);
  * 64 ranks generated here (bench/gen_trace.py, small, into WORK_DIR), half of them
    in one shard of several traces, the shards given in a shuffled order; and five of
    them each stored as trace.json (the same path), which merge in rank order;

and the refusals: no shard, no -o, -o one of the shards, a shard that is not a
database, a shard of another schema version (each with its exit status, naming the
file, and no output written). Standard library only.
"""
import glob
import os
import random
import shutil
import sqlite3
import subprocess
import sys

NS, ROOT, WORK = (os.path.abspath(a) for a in sys.argv[1:4])
DLRM = "tests/data/corpus/facebookresearch-param/et_replay/tests/inputs/dlrm_kineto"
COMMANDS = [["report", "--merge"], ["report"], ["kernels"], ["breakdown"], ["stragglers"], ["overlap"], ["launches"]]
TABLES = ["traces", "strings", "trace_strings", "threads", "processes", "metadata", "explorer_warnings", "events",
          "flows", "event_stats", "event_memory", "key_averages_rows", "device_detail", "neff_summary"]
failures = []
ENV = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(WORK, "cache"))


def run(args, cwd, code=0):
    p = subprocess.run([NS] + args, cwd=cwd, capture_output=True, env=ENV)
    if p.returncode != code:
        failures.append("%s (in %s): exit %d, not %d: %s" % (" ".join(args), cwd, p.returncode, code,
                                                           p.stderr.decode(errors="replace").strip()))
    return p


def rows(db):
    con = sqlite3.connect(db)
    try:
        out = {}
        for t in TABLES:  # in a total order: every column
            n = len(con.execute("PRAGMA table_info(%s)" % t).fetchall())
            out[t] = con.execute("SELECT * FROM %s ORDER BY %s" % (t, ", ".join(str(i + 1) for i in range(n)))).fetchall()
        return out
    finally:
        con.close()


def check_same(what, cwd, directory, run_db):
    """run_db reports what directory reports, and holds what ingesting it writes."""
    for cmd in COMMANDS:
        want = run(cmd + [directory], cwd).stdout
        got = run(cmd + [run_db], cwd).stdout
        if got != want or not want:
            failures.append("%s: %s differs between %s and %s" % (what, " ".join(cmd), run_db, directory))
    want = run(["diff", directory, directory], cwd).stdout
    got = run(["diff", run_db, directory], cwd).stdout.replace(run_db.encode(), directory.encode(), 1)
    if got != want:
        failures.append("%s: diff %s %s is not diff of the directory against itself" % (what, run_db, directory))
    dir_db = os.path.join(WORK, "dir.db")
    run(["ingest", directory, "-o", dir_db], cwd)
    want, got = rows(dir_db), rows(run_db)
    for t in TABLES:
        if got[t] != want[t]:
            failures.append("%s: table %s of %s differs from ingest %s" % (what, t, run_db, directory))
    print("%s: %d traces, %d events: same" % (what, len(got["traces"]), len(got["events"])))


def dlrm():
    traces = sorted(glob.glob(os.path.join(ROOT, DLRM, "*.json.gz")))
    if len(traces) != 8:
        failures.append("%s: %d traces, not the 8 vendored" % (DLRM, len(traces)))
        return []
    shards = []
    for i, trace in enumerate(traces):
        shards.append(os.path.join(WORK, "dlrm", "shard_%d.db" % i))
        run(["ingest", os.path.relpath(trace, ROOT), "-o", shards[-1]], ROOT)
    run_db = os.path.join(WORK, "dlrm", "run.db")
    run(["merge"] + shards + ["-o", run_db], ROOT)
    check_same("8 DLRM ranks", ROOT, DLRM, run_db)
    return shards


def gen_ranks(n=64):
    """n small ranks, rank i in ranks/{a,b}/rank_NN.json (a: the first half)."""
    sys.path.insert(0, os.path.join(ROOT, "bench"))
    import gen_trace
    paths = []
    for rank in range(n):
        path = os.path.join(WORK, "ranks", "ab"[rank >= n // 2], "rank_%02d.json" % rank)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        gen_trace.generate(path, 12000 + 1000 * (rank % 5), seed=rank, modules=1, quiet=True)
        os.unlink(path + ".meta.json")
        with open(path) as f:
            text = f.read()
        with open(path, "w") as f:
            f.write(text.replace("{\n", '{\n  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d},\n'
                                 % (rank, n), 1))
        paths.append(os.path.relpath(path, WORK))
    return paths


def generated():
    paths = gen_ranks()
    shards = [os.path.join(WORK, "gen", "a.db")]  # the first half: one shard of 32 traces
    run(["ingest", "ranks/a", "-o", shards[0]], WORK)
    for path in paths[len(paths) // 2:]:
        shards.append(os.path.join(WORK, "gen", os.path.basename(path) + ".db"))
        run(["ingest", path, "-o", shards[-1]], WORK)
    random.Random(21).shuffle(shards)  # the traces' order is their paths'
    run_db = os.path.join(WORK, "gen", "run.db")
    run(["merge"] + shards + ["-o", run_db], WORK)
    check_same("64 generated ranks", WORK, "ranks", run_db)
    same_paths(paths)
    return shards


def same_paths(paths):
    """Traces all stored as trace.json (each machine's own folder): merged in rank order."""
    shards = []
    for path in reversed(paths[:5]):
        d = os.path.join(WORK, "same", os.path.basename(path))
        os.makedirs(d)
        shutil.copy(os.path.join(WORK, path), os.path.join(d, "trace.json"))
        shards.append(os.path.join(d, "shard.db"))
        run(["ingest", "trace.json", "-o", shards[-1]], d)
    run_db = os.path.join(WORK, "same", "run.db")
    run(["merge"] + shards + ["-o", run_db], WORK)
    con = sqlite3.connect(run_db)
    ranks = [r for (r,) in con.execute("SELECT rank FROM traces ORDER BY id")]
    con.close()
    if ranks != list(range(5)):
        failures.append("traces of the same path: merged in the order of ranks %s, not by rank" % ranks)
    print("the same path: by rank")


def refused(args, code, names, out):
    p = run(["merge"] + args, WORK, code)
    err = p.stderr.decode(errors="replace")
    if names and names not in err:
        failures.append("merge %s: the message does not name %s: %s" % (" ".join(args), names, err.strip()))
    if out and os.path.exists(out):
        failures.append("merge %s: wrote %s" % (" ".join(args), out))


def errors(shard):
    out = os.path.join(WORK, "err", "out.db")
    refused(["-o", out], 2, None, out)
    refused([shard], 2, "-o", None)
    copy = os.path.join(WORK, "err", "copy.db")
    shutil.copy(shard, copy)
    before = open(copy, "rb").read()
    refused([shard, copy, "-o", copy], 2, copy, None)
    if open(copy, "rb").read() != before:
        failures.append("merge -o SHARD changed the shard")
    trace = os.path.join(WORK, "err", "trace.json")
    with open(trace, "w") as f:
        f.write('{"traceEvents": []}\n')
    refused([shard, trace, "-o", out], 1, trace, out)
    old = os.path.join(WORK, "err", "old.db")
    shutil.copy(shard, old)
    con = sqlite3.connect(old)
    con.execute("PRAGMA user_version = 6")
    con.close()
    refused([shard, old, "-o", out], 3, old + ": database schema version 6", out)
    print("refusals: checked")


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    for d in ("dlrm", "gen", "err", "cache"):
        os.makedirs(os.path.join(WORK, d))
    shards = dlrm() + generated()
    errors(shards[0])
    for f in failures:
        print("FAIL:", f)
    if not failures:
        shutil.rmtree(WORK, ignore_errors=True)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
