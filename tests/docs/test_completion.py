#!/usr/bin/env python3
"""The shell completion scripts of `neuron-stats completion bash|zsh`.

bash: the script is sourced in a real bash, COMP_WORDS/COMP_CWORD are set
as bash sets them for a command line, and COMPREPLY must equal the words
written below by hand (from docs/cli.md), run in an empty folder so no
file name joins in. zsh (when installed): the script parses, and with
_arguments/_describe/_files replaced by stubs that print their arguments,
each command line reaches its command's function with the option specs
that docs/cli.md describes.
Usage: test_completion.py NEURON_STATS"""
import os
import shutil
import subprocess
import sys
import tempfile

# (the words bash has split the line into, the last one being completed) -> offered
BASH_CASES = [
    (["neuron-stats", "com"], ["completion"]),
    (["neuron-stats", "d"], ["diff"]),
    (["neuron-stats", "trace.json", "--so"], ["--sort"]),
    (["neuron-stats", "report", "--format", ""], ["table", "csv", "json", "markdown"]),
    (["neuron-stats", "trace.json", "--sort", "self_n"], ["self_neuron", "self_neuron_mem"]),
    (["neuron-stats", "trace.json", "-s", "cpu_a"], ["cpu_avg"]),
    (["neuron-stats", "trace.json", "--time-unit", ""], ["s", "ms", "us"]),
    (["neuron-stats", "trace.json", "--device-detail", "o"], ["opcode"]),
    (["neuron-stats", "trace.json", "--group-by", "s"], ["shape", "stack="]),
    (["neuron-stats", "trace.json", "--row-limit", ""], []),
    (["neuron-stats", "diff", "a", "b", "--fail-on", "re"], ["regression", "removed"]),
    (["neuron-stats", "diff", "a", "b", "--sort", "pct"], ["pct_self_device", "pct_self_cpu"]),
    (["neuron-stats", "diff", "--ch"], ["--changed"]),
    (["neuron-stats", "sql", "--format", "=", ""], ["table", "csv", "json"]),
    (["neuron-stats", "sql", "--format", "=", "c"], ["csv"]),
    (["neuron-stats", "neff", "-f", ""], ["text", "json"]),
    (["neuron-stats", "ls", "--device-time-unit", "m"], ["ms"]),
    (["neuron-stats", "ingest", "--f"], ["--force"]),
    (["neuron-stats", "completion", ""], ["bash", "zsh"]),
]

# (words, CURRENT) -> the function reached and specs that must be among _arguments'
ZSH_CASES = [
    (["neuron-stats", "diff", "--fail-on", ""], 4, "_neuron_stats_diff",
     ["--fail-on=[exit 4 when a row is: regression, new, removed (comma-separated)]:WHAT:(regression new removed)"]),
    (["neuron-stats", "trace.json", "--format", ""], 4, "_neuron_stats_report",
     ["(-f --format)-f+[table (default), csv, json or markdown]:FMT:(table csv json markdown)",
      "(-f --format)--format=[table (default), csv, json or markdown]:FMT:(table csv json markdown)"]),
    (["neuron-stats", "sql", "-"], 3, "_neuron_stats_sql",
     ["(-f --format)-f+[table (default), csv or json]:FMT:(table csv json)",
      "--timeout=[stop the query after SECONDS (default 60; 0: none)]:SECONDS: "]),
    (["neuron-stats", "completion", ""], 3, "_neuron_stats_completion", ["1:shell:(bash zsh)"]),
]


def bash_complete(script, words):
    array = " ".join("'%s'" % w for w in words)
    prog = 'source "$1"; COMP_WORDS=(%s); COMP_CWORD=%d; _neuron_stats; printf "%%s\\n" "${COMPREPLY[@]}"' % (
        array, len(words) - 1)
    out = subprocess.run(["bash", "--norc", "-c", prog, "bash", script], capture_output=True, text=True, check=True)
    return [w for w in out.stdout.split("\n") if w]


def zsh_complete(script, words, current):
    stubs = ('_arguments() { print -rl -- "ARGS:$funcstack[2]" "$@" }; _describe() { print DESCRIBE }; '
             '_files() { print FILES }; ')
    body = open(script).read().replace('_neuron-stats "$@"\n', "")
    prog = stubs + body + "\nwords=(%s); CURRENT=%d; _neuron-stats" % (" ".join("'%s'" % w for w in words), current)
    out = subprocess.run(["zsh", "-f", "-c", prog], capture_output=True, text=True, check=True)
    return out.stdout.split("\n")


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = os.path.abspath(sys.argv[1])
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        os.chdir(tmp)  # no file names among the candidates
        for shell in ("bash", "zsh"):
            with open(os.path.join(tmp, shell), "w") as f:
                subprocess.run([binary, "completion", shell], stdout=f, check=True)
        for words, want in BASH_CASES:
            got = bash_complete(os.path.join(tmp, "bash"), words)
            if got != want:
                print("FAIL bash %s: got %s, want %s" % (" ".join(words), got, want))
                failures += 1
        if shutil.which("zsh"):
            subprocess.run(["zsh", "-n", "zsh"], check=True)
            for words, current, func, specs in ZSH_CASES:
                lines = zsh_complete(os.path.join(tmp, "zsh"), words, current)
                missing = [s for s in specs if s not in lines]
                if "ARGS:" + func not in lines or missing:
                    print("FAIL zsh %s: reached %s, missing %s" % (
                        " ".join(words), [l for l in lines if l.startswith("ARGS:")], missing))
                    failures += 1
            checked = len(BASH_CASES) + len(ZSH_CASES)
        else:
            print("zsh not installed: its script was not checked")
            checked = len(BASH_CASES)
        # a usage error for any other shell
        bad = subprocess.run([binary, "completion", "fish"], capture_output=True, text=True)
        if bad.returncode != 2 or "expected bash or zsh, not 'fish'" not in bad.stderr:
            print("FAIL completion fish: exit %d, %r" % (bad.returncode, bad.stderr))
            failures += 1
    print("%d of %d completion cases ok" % (checked + 1 - failures, checked + 1))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
