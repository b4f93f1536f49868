#!/usr/bin/env python3
"""One oracle comparison, for meson (tests/oracle/meson.build).

    run_one.py [--warm-cache] NEURON_STATS TRACE [OPTIONS...]

runs

    NEURON_STATS TRACE --row-limit -1 --no-cache [OPTIONS...]
    python3 tests/oracle/key_averages.py TRACE --row-limit -1 [OPTIONS...]

and passes when both exit 0 and print the same bytes. With --warm-cache,
neuron-stats runs twice with a fresh cache directory instead of --no-cache,
and the second run (which reads the cached database instead of the trace)
is the one compared. TRACE may start with
@CORPUS@ (the real-trace corpus: $NS_CORPUS, else ../shared/corpus beside
the checkout, else the copy vendored in tests/data; tests/data/corpus.py) or
be relative to the source root. A trace not in the corpus is a skip (exit 77,
the reason on stdout). For a batch run over many traces and options, see compare.py.
"""
import difflib
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402  (tests/data/corpus.py: which corpus, and the skip message)
ORACLE = os.path.join(HERE, "key_averages.py")


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    argv = sys.argv[1:]
    warm = argv[:1] == ["--warm-cache"]
    if warm:
        argv = argv[1:]
    if len(argv) < 2:
        sys.exit(__doc__)
    binary, trace, opts = argv[0], argv[1], argv[2:]
    trace = corpus.resolve(trace, binary)
    if not os.path.exists(trace):
        print(corpus.skip_reason(trace))
        return 77
    # the oracle's sort keys are PyTorch attribute names; map our aliases
    oracle_opts = ["self_device_time_total" if o in ("self_neuron", "self_device") else o for o in opts]
    with tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
        cmd = [binary, trace, "--row-limit", "-1"] + ([] if warm else ["--no-cache"]) + opts
        c = subprocess.run(cmd, capture_output=True, env=env)
        if warm and c.returncode == 0:
            if not os.path.isdir(env["NEURON_STATS_CACHE_DIR"]) or not os.listdir(env["NEURON_STATS_CACHE_DIR"]):
                print("the first run wrote no cache database into %s" % env["NEURON_STATS_CACHE_DIR"])
                return 1
            c = subprocess.run(cmd, capture_output=True, env=env)
    o = subprocess.run([sys.executable, ORACLE, trace, "--row-limit", "-1"] + oracle_opts, capture_output=True)
    if o.returncode != 0:
        print("oracle failed (exit %d): %s" % (o.returncode, o.stderr.decode(errors="replace")))
        return 1
    if c.returncode != 0:
        print("neuron-stats failed (exit %d): %s" % (c.returncode, c.stderr.decode(errors="replace")))
        return 1
    if c.stdout == o.stdout:
        print("ok: %s %s (%d lines)" % (trace, " ".join(opts), c.stdout.count(b"\n")))
        return 0
    diff = difflib.unified_diff(o.stdout.decode(errors="replace").splitlines(),
                                c.stdout.decode(errors="replace").splitlines(),
                                "oracle", "neuron-stats", lineterm="", n=0)
    print("\n".join(list(diff)[:60]))
    print("FAIL: neuron-stats and the oracle disagree on %s %s" % (trace, " ".join(opts)))
    return 1


if __name__ == "__main__":
    sys.exit(main())
