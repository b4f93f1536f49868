#!/usr/bin/env python3
"""Golden end-to-end tests: run neuron-stats with a case's arguments and
compare stdout, stderr and the exit code with the files kept beside it.

A case is a folder tests/golden/cases/NAME/ holding:
  args          the command-line arguments, one per line (after the program);
                @CORPUS@ is the real-trace corpus (tests/data/corpus.py:
                $NS_CORPUS, else ../shared/corpus beside the checkout, else
                the copy vendored in tests/data), @SRC@ the source root,
                @TMP@ a fresh temporary directory; a case whose @CORPUS@
                file is not in that corpus is skipped (exit 77, the reason
                on stdout)
  expected.out  exact stdout
  expected.code exit status (default 0)
  expected.err  exact stderr (default: must be empty)
  stdout        optional: a file that receives stdout instead of the pipe
                (/dev/full: a failing output stream); expected.out is empty
Usage: run_golden.py NEURON_STATS CASE [--update]
"""
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402  (tests/data/corpus.py: which corpus, and the skip message)


def read(path, default=None):
    if not os.path.exists(path):
        return default
    with open(path, "rb") as f:
        return f.read()


def run_case(binary, case, raw_args, corpus_dir):
    """Runs neuron-stats with a case's arguments: (exit code, stdout, stderr),
    with the substituted paths put back in the outputs."""
    with tempfile.TemporaryDirectory() as tmp:
        def subst(s):
            return s.replace("@CORPUS@", corpus_dir).replace("@SRC@", SRC).replace("@TMP@", tmp)
        args = [subst(a) for a in raw_args]
        env = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
        sink = read(os.path.join(case, "stdout"), b"").decode().strip()
        if sink:
            with open(sink, "wb") as f:
                p = subprocess.run([binary] + args, stdout=f, stderr=subprocess.PIPE, cwd=SRC, env=env)
            p.stdout = b""
        else:
            p = subprocess.run([binary] + args, capture_output=True, cwd=SRC, env=env)
        # paths in messages are printed relative to the substitutions
        out = p.stdout.replace(tmp.encode(), b"@TMP@").replace(corpus_dir.encode(), b"@CORPUS@")
        err = p.stderr.replace(tmp.encode(), b"@TMP@").replace(corpus_dir.encode(), b"@CORPUS@")
    return p.returncode, out, err


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    binary, name = os.path.abspath(sys.argv[1]), sys.argv[2]  # meson passes it relative to the build dir
    update = "--update" in sys.argv[3:]
    case = os.path.join(HERE, "cases", name)
    corpus_dir = corpus.corpus_root(binary)
    raw_args = [a for a in read(os.path.join(case, "args"), b"").decode().splitlines() if a]
    absent = corpus.missing(raw_args, corpus_dir)
    if absent:
        print(corpus.skip_reason(absent))
        return 77
    code, out, err = run_case(binary, case, raw_args, corpus_dir)
    if update:
        with open(os.path.join(case, "expected.out"), "wb") as f:
            f.write(out)
        if err:
            with open(os.path.join(case, "expected.err"), "wb") as f:
                f.write(err)
        elif os.path.exists(os.path.join(case, "expected.err")):
            os.remove(os.path.join(case, "expected.err"))
        with open(os.path.join(case, "expected.code"), "w") as f:
            f.write("%d\n" % code)
        print("updated", name)
        return 0
    failures = []
    want_code = int(read(os.path.join(case, "expected.code"), b"0").decode().strip() or 0)
    if code != want_code:
        failures.append("exit code %d, expected %d" % (code, want_code))
    want_out = read(os.path.join(case, "expected.out"), b"")
    if out != want_out:
        failures.append("stdout differs")
    want_err = read(os.path.join(case, "expected.err"), b"")
    if err != want_err:
        failures.append("stderr differs:\n--- got\n%s\n--- expected\n%s" % (err.decode(errors="replace"), want_err.decode(errors="replace")))
    if failures:
        if out != want_out:
            import difflib
            diff = difflib.unified_diff(want_out.decode(errors="replace").splitlines(), out.decode(errors="replace").splitlines(), "expected.out", "got", lineterm="", n=1)
            print("\n".join(list(diff)[:40]))
        print("FAIL %s: %s" % (name, "; ".join(failures)))
        return 1
    print("ok", name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
