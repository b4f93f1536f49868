#!/usr/bin/env python3
"""The scale-out scripts of docs/scale.md, run for real on generated rank traces.

    python3 tests/scale/test_scale.py NEURON_STATS SOURCE_ROOT slurm|parallel

Both modes generate a directory of 8 small rank traces (bench/gen_trace.py, seeds
0-7, distributedInfo.rank added; two of them gzip'd, one in a subfolder) with
files that are not traces beside them (gen_trace.py's .meta.json sidecars, a
trace in a hidden folder), then:

* slurm: start a single-node Slurm cluster of its own in a temporary folder
  (munged with its own key and socket, slurmctld and slurmd on free local
  ports, slurm.conf generated: proctrack/linuxproc, task/none, no cgroup,
  no accounting), run scripts/slurm/submit.sh --wait (the array job of
  ingests, then the dependent merge job), and stop the daemons. Needs root
  (slurmd runs jobs as their user) and slurm-wlm + munge (.ci/run installs
  them): exit 77 (skip) without them.
* parallel: scripts/parallel/run.sh on this host (GNU parallel, no ssh):
  exit 77 without `parallel`. Then the same on fixtures/capture-2rank (a
  Neuron capture: NTFF device profiles beside each rank's trace).

Then it checks that task I ingested line I+1 of traces.list (each shard's
report is that trace's report) and that `report --merge OUT/run.db` prints
what `report --merge TRACE_DIR` prints, byte for byte (the table, and every
row as CSV). Where `neuron-stats merge` does not exist yet, it checks the
shards, then exits 77 saying so.
"""

import gzip
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
N_RANKS = 8
GZIPPED = (2, 5)  # ranks written as .json.gz
NESTED = 7  # rank written in a subfolder
JOB_TIMEOUT_S = 300


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def skip(msg):
    print("skip: " + msg)
    sys.exit(SKIP)


def gen_traces(root, trace_dir):
    """N_RANKS traces of gen_trace.py (generated at once), each with distributedInfo.rank."""
    raws, procs = [], []
    for rank in range(N_RANKS):
        sub = os.path.join(trace_dir, "node1") if rank == NESTED else trace_dir
        os.makedirs(sub, exist_ok=True)
        raws.append(os.path.join(sub, "rank-%d.json" % rank))
        procs.append(subprocess.Popen([sys.executable, os.path.join(root, "bench", "gen_trace.py"), "--size", "60K",
                                       "--seed", str(rank), "--modules", "2", "--quiet", "-o", raws[-1]]))
    if any(p.wait() != 0 for p in procs):
        fail("bench/gen_trace.py failed")
    for rank, raw in enumerate(raws):
        with open(raw, encoding="utf-8") as f:
            text = f.read()
        text = text.replace("{", '{\n  "distributedInfo": {"backend": "nccl", "rank": %d, "world_size": %d},'
                            % (rank, N_RANKS), 1)
        if rank in GZIPPED:
            with gzip.open(raw + ".gz", "wt", encoding="utf-8") as f:
                f.write(text)
            os.remove(raw)
        else:
            with open(raw, "w", encoding="utf-8") as f:
                f.write(text)
    # neither neuron-stats nor scripts/list-traces.sh reads a hidden folder
    hidden = os.path.join(trace_dir, ".old")
    os.makedirs(hidden)
    shutil.copy(os.path.join(trace_dir, "rank-0.json"), hidden)


def free_ports(n):
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


SLURM_CONF = """\
# a single-node cluster for tests/scale/test_scale.py: no cgroup (proctrack/linuxproc,
# task/none), no accounting, every file in {tmp}
ClusterName=nstest
SlurmctldHost={host}(127.0.0.1)
SlurmctldPort={ctld_port}
SlurmdPort={slurmd_port}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={tmp}/munge/munge.sock
SlurmUser=root
SlurmdUser=root
StateSaveLocation={tmp}/state
SlurmdSpoolDir={tmp}/spool
SlurmctldPidFile={tmp}/slurmctld.pid
SlurmdPidFile={tmp}/slurmd.pid
SlurmctldLogFile={tmp}/log/slurmctld.log
SlurmdLogFile={tmp}/log/slurmd.log
PlugStackConfig={tmp}/plugstack.conf
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
MpiDefault=none
ReturnToService=2
JobCompType=jobcomp/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
# the node as written here, whatever slurmd finds (no drain on a count that differs)
SlurmdParameters=config_overrides
NodeName={host} NodeAddr=127.0.0.1 CPUs={cpus} State=UNKNOWN
PartitionName=test Nodes={host} Default=YES MaxTime=INFINITE State=UP
"""


class Slurm:
    """munged, slurmctld and slurmd of a private cluster, everything under tmp."""

    def __init__(self, tmp):
        self.tmp = tmp
        self.conf = os.path.join(tmp, "slurm.conf")
        self.sock = os.path.join(tmp, "munge", "munge.sock")
        self.env = dict(os.environ, SLURM_CONF=self.conf)
        self.munged = False
        for d in ("munge", "state", "spool", "log"):
            os.makedirs(os.path.join(tmp, d))
        # munged wants every folder above its socket searchable by all, its key private
        for d in (os.path.dirname(tmp), tmp, os.path.join(tmp, "munge")):
            os.chmod(d, 0o755)
        key = os.path.join(tmp, "munge", "munge.key")
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o400)
        open(os.path.join(tmp, "plugstack.conf"), "w").close()
        ctld_port, slurmd_port = free_ports(2)
        self.host = socket.gethostname().split(".")[0]  # hostname -s
        with open(self.conf, "w") as f:
            f.write(SLURM_CONF.format(tmp=tmp, host=self.host, ctld_port=ctld_port, slurmd_port=slurmd_port,
                                      cpus=os.cpu_count()))

    def run(self, *cmd, check=True):
        return subprocess.run(list(cmd), env=self.env, capture_output=True, text=True, check=check)

    def start_daemon(self, *cmd):
        r = self.run(*cmd, check=False)
        if r.returncode != 0:
            self.dump_logs()
            fail("%s: exit %d: %s" % (" ".join(cmd), r.returncode, r.stdout + r.stderr))

    def start(self):
        t = self.tmp
        self.munged = True
        self.start_daemon("munged", "--key-file=%s/munge/munge.key" % t, "--socket=" + self.sock,
                          "--pid-file=%s/munge/munged.pid" % t, "--log-file=%s/log/munged.log" % t,
                          "--seed-file=%s/munge/munged.seed" % t)
        self.start_daemon("slurmctld", "-f", self.conf)
        self.start_daemon("slurmd", "-f", self.conf, "-N", self.host)
        deadline = time.time() + 60
        while time.time() < deadline:
            state = self.run("sinfo", "-h", "-o", "%T", check=False).stdout.strip()
            if state == "idle":
                return
            time.sleep(0.5)
        self.dump_logs()
        fail("the Slurm node is not idle after 60 s (sinfo: %r)" % state)

    def dump_logs(self):
        for name in ("munged.log", "slurmctld.log", "slurmd.log"):
            path = os.path.join(self.tmp, "log", name)
            if os.path.exists(path):
                with open(path, errors="replace") as f:
                    print("---- %s (last lines)\n%s" % (name, "".join(f.readlines()[-30:])))

    def pid(self, name):
        try:
            with open(os.path.join(self.tmp, name)) as f:
                return int(f.read().split()[0])
        except (OSError, ValueError, IndexError):
            return None

    def stop(self):
        """Stop the jobs and daemons this test started (by their pid files)."""
        pids = [p for p in (self.pid("slurmctld.pid"), self.pid("slurmd.pid")) if p]
        self.run("scancel", "--user", "root", check=False)
        self.run("scontrol", "shutdown", check=False)
        deadline = time.time() + 15
        while pids and time.time() < deadline:
            pids = [p for p in pids if os.path.exists("/proc/%d" % p)]
            time.sleep(0.2)
        for p in pids:
            print("slurm daemon %d still running after scontrol shutdown: killed" % p)
            os.kill(p, signal.SIGKILL)
        if self.munged:
            self.run("munged", "-s", "--socket=" + self.sock, check=False)


def check_prerequisites(mode):
    """Skip (exit 77) where MODE cannot run here."""
    if mode == "parallel":
        if not shutil.which("parallel"):
            skip("GNU parallel not installed (Debian: apt-get install parallel; .ci/run installs it)")
        return
    if os.geteuid() != 0:
        skip("the Slurm test needs root (its slurmd runs the jobs as their user; .ci/run runs as root)")
    missing = [p for p in ("munged", "slurmctld", "slurmd", "sbatch", "scontrol") if not shutil.which(p)]
    if missing:
        skip("%s not installed (Debian: apt-get install slurm-wlm munge; .ci/run installs them)"
             % ", ".join(missing))


def run_slurm(root, trace_dir, out_dir, env, tmp):
    slurm = Slurm(os.path.join(tmp, "slurm"))
    env = dict(env, SLURM_CONF=slurm.conf, NS_SLURM_POLL="1")
    try:
        slurm.start()
        cmd = [os.path.join(root, "scripts", "slurm", "submit.sh"), "--wait", "--time", "10",
               trace_dir, out_dir]
        try:
            r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            slurm.run("squeue", check=False)
            slurm.dump_logs()
            fail("the jobs did not end in %d s" % JOB_TIMEOUT_S)
        print(r.stderr, end="")
        print("submit.sh printed: " + r.stdout.strip())
        if r.returncode != 0:
            print("submit.sh --wait: exit %d" % r.returncode)
        return r.returncode
    finally:
        slurm.stop()


def run_parallel(root, trace_dir, out_dir, env):
    cmd = [os.path.join(root, "scripts", "parallel", "run.sh"), "-j", "2", trace_dir, out_dir]
    r = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=JOB_TIMEOUT_S)
    print(r.stdout + r.stderr, end="")
    return r.returncode


def report(binary, env, *args):
    r = subprocess.run([binary, "report", *args, "--no-cache", "--quiet"], env=env, capture_output=True,
                       timeout=120)
    if r.returncode != 0:
        fail("report %s: exit %d: %s" % (" ".join(args), r.returncode, r.stderr.decode(errors="replace")))
    return r.stdout


def has_merge(binary):
    r = subprocess.run([binary, "merge", "--help"], capture_output=True, text=True)
    return r.returncode == 0 and r.stdout.startswith("usage: neuron-stats merge")


def print_logs(out_dir):
    logs = os.path.join(out_dir, "logs")
    for name in sorted(os.listdir(logs)) if os.path.isdir(logs) else []:
        with open(os.path.join(logs, name), errors="replace") as f:
            print("---- %s\n%s" % (name, f.read()[-3000:]))


def check_shards(binary, env, out_dir):
    """Task I ingested line I+1 of traces.list: shard I reports as that trace."""
    with open(os.path.join(out_dir, "traces.list")) as f:
        traces = f.read().splitlines()
    if len(traces) != N_RANKS:
        fail("traces.list has %d traces, not %d: %r" % (len(traces), N_RANKS, traces))
    for i, trace in enumerate(traces):
        shard = os.path.join(out_dir, "shards", "shard_%05d.db" % i)
        if not os.path.exists(shard):
            print_logs(out_dir)
            fail("no %s (the ingest of %s)" % (shard, trace))
        if report(binary, env, shard) != report(binary, env, trace):
            fail("%s does not report as %s" % (shard, trace))
    print("ok: %d shards, shard I the report of line I+1 of traces.list" % len(traces))


def check_merged(binary, env, trace_dir, out_dir):
    run_db = os.path.join(out_dir, "run.db")
    for opts in ([], ["--format", "csv", "--row-limit", "-1"]):
        got = report(binary, env, "--merge", run_db, *opts)
        want = report(binary, env, "--merge", trace_dir, *opts)
        if got != want:
            for path, text in (("got", got), ("want", want)):
                with open(os.path.join(out_dir, "report-%s.txt" % path), "wb") as f:
                    f.write(text)
            fail("report --merge run.db %s differs from report --merge TRACE_DIR (both in %s)"
                 % (" ".join(opts), out_dir))
    print("ok: report --merge run.db == report --merge %s (table, CSV), byte for byte" % trace_dir)


def main():
    if len(sys.argv) != 4 or sys.argv[3] not in ("slurm", "parallel"):
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    binary, root, mode = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2]), sys.argv[3]
    # meson stops a test with SIGTERM: the finally blocks stop the daemons
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("stopped (SIGTERM)"))
    check_prerequisites(mode)
    tmp = tempfile.mkdtemp(prefix="ns-scale-")
    failed = True
    try:
        trace_dir = os.path.join(tmp, "traces")
        out_dir = os.path.join(tmp, "out")
        env = dict(os.environ, NEURON_STATS=binary, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"))
        gen_traces(root, trace_dir)
        if mode == "slurm":
            status = run_slurm(root, trace_dir, out_dir, env, tmp)
        else:
            status = run_parallel(root, trace_dir, out_dir, env)
        check_shards(binary, env, out_dir)
        if not has_merge(binary):
            failed = False
            skip("`neuron-stats merge` does not exist in this build: the %s run ingested every trace "
                 "(checked above), the merged report was not compared" % mode)
        if status != 0:
            print_logs(out_dir)
            fail("the %s run failed (exit %d)" % (mode, status))
        check_merged(binary, env, trace_dir, out_dir)
        if mode == "parallel":
            # a Neuron capture: each trace's device profiles are read beside it, as by report DIR
            capture = os.path.join(root, "fixtures", "capture-2rank")
            out_capture = os.path.join(tmp, "out-capture")
            if run_parallel(root, capture, out_capture, env) != 0:
                fail("the parallel run on %s failed" % capture)
            check_merged(binary, env, capture, out_capture)
        failed = False
    except SystemExit as e:
        failed = e.code not in (None, 0, SKIP)
        raise
    finally:
        if failed:
            print("kept for a look: " + tmp)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
