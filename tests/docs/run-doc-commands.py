#!/usr/bin/env python3
"""Runs every neuron-stats command shown in README.md and docs/*.md.

    run-doc-commands.py NEURON_STATS SOURCE_ROOT

The convention (docs/testing.md, "Commands in the documentation"):

  * a ```sh block holds commands, one per line (a `\\` at the end joins the
    next line); a `# ...` comment after a command is a note, and a note that
    says `exit N` gives the exit status the command must have (default 0);
  * a ```console block holds commands after a `$ ` prompt, each followed by
    the exact stdout it prints; a line `...` in that output stands for any
    number of lines (stderr is not compared);
  * every command in these blocks must start with `neuron-stats`, unless the
    line just above the block is `<!-- not run: REASON -->` (the build and
    test commands, long benchmarks): such a block is listed with its reason
    and not run;
  * a block of any other kind with a line that starts with `neuron-stats `
    or `$ neuron-stats` must carry the same marker (e.g. a usage synopsis),
    so that no command is left out by a missing tag.

The commands of one file run in order, with `sh -c`, in a fresh directory
where `fixtures`, `tests` and `docs` are the repository's and
`neuron-stats` is NEURON_STATS, with a private cache directory (so
`ingest ... -o run.db` writes there and a later `sql run.db` reads it).
Exit 1 when a command exits with another status than the documented one or
prints other output. Standard library only.
"""
import glob
import os
import re
import subprocess
import sys
import tempfile

FENCE = re.compile(r"^```([\w-]*)\n(.*?)^```[ \t]*$", re.M | re.S)
NOT_RUN = re.compile(r"<!-- not run: (.+?) -->\s*$")
EXIT_NOTE = re.compile(r"\bexit (\d+)\b")
LINKED = ("fixtures", "tests", "docs")


def note_of(line):
    """The text of a trailing `# ...` comment outside quotes ('' if none)."""
    quote = None
    for i, ch in enumerate(line):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#" and (i == 0 or line[i - 1].isspace()):
            return line[i + 1:].strip()
    return ""


def commands_of(lang, body, first_line):
    """[(line number, command, expected exit status, expected stdout or None)] of one block."""
    out = []
    lines = body.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    i = 0
    while i < len(lines):
        line, number = lines[i], first_line + i
        i += 1
        if lang == "sh":
            while line.endswith("\\") and i < len(lines):
                line = line[:-1] + lines[i]
                i += 1
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            cmd, expected = line.strip(), None
        else:
            if not line.startswith("$ "):
                raise ValueError("line %d: output without a `$ ` command before it" % number)
            cmd, shown = line[2:].strip(), []
            while i < len(lines) and not lines[i].startswith("$ "):
                shown.append(lines[i])
                i += 1
            expected = "".join(s + "\n" for s in shown)
        m = EXIT_NOTE.search(note_of(cmd))
        out.append((number, cmd, int(m.group(1)) if m else 0, expected))
    return out


def matches(expected, got):
    """got equals expected, a line `...` in expected standing for any number of lines."""
    pattern = "".join(r"(?:.*\n)*?" if line == "..." else re.escape(line + "\n")
                      for line in expected.split("\n")[:-1])
    return re.fullmatch(pattern, got) is not None


def run_doc(path, binary, root):
    """Runs one document's commands; returns (commands run, failures, not-run blocks)."""
    with open(path, encoding="utf-8") as f:
        doc = f.read()
    name = os.path.relpath(path, root)
    ran = failed = 0
    with tempfile.TemporaryDirectory(prefix="ns-doc-") as work:
        os.mkdir(os.path.join(work, "bin"))
        os.symlink(binary, os.path.join(work, "bin", "neuron-stats"))
        for d in LINKED:
            os.symlink(os.path.join(root, d), os.path.join(work, d))
        env = dict(os.environ, PATH=os.path.join(work, "bin") + os.pathsep + os.environ.get("PATH", ""),
                   NEURON_STATS_CACHE_DIR=os.path.join(work, "cache"), LC_ALL="C")
        for m in FENCE.finditer(doc):
            lang, body = m.group(1), m.group(2)
            first_line = doc.count("\n", 0, m.start()) + 2
            before = doc[:m.start()].rstrip("\n").rsplit("\n", 1)[-1]
            marker = NOT_RUN.search(before)
            if marker:
                print("not run %s:%d: %s" % (name, first_line - 1, marker.group(1)))
                continue
            if lang not in ("sh", "console"):
                if re.search(r"^(\$ )?neuron-stats ", body, re.M):
                    print("FAIL %s:%d: a ```%s block shows a neuron-stats command: make it ```sh or ```console, "
                          "or put <!-- not run: REASON --> above it" % (name, first_line - 1, lang))
                    failed += 1
                continue
            try:
                cmds = commands_of(lang, body, first_line)
            except ValueError as e:
                print("FAIL %s: %s" % (name, e))
                failed += 1
                continue
            for number, cmd, want_code, expected in cmds:
                where = "%s:%d" % (name, number)
                if not cmd.startswith("neuron-stats "):
                    print("FAIL %s: `%s` is not a neuron-stats command: put <!-- not run: REASON --> above "
                          "the block" % (where, cmd))
                    failed += 1
                    continue
                p = subprocess.run(["sh", "-c", cmd], cwd=work, env=env, capture_output=True, text=True,
                                   timeout=120)
                ran += 1
                problems = []
                if p.returncode != want_code:
                    problems.append("exit status %d, the doc says %d; stderr:\n%s" % (p.returncode, want_code, p.stderr))
                if expected is not None and not matches(expected, p.stdout):
                    problems.append("stdout differs\n--- the doc shows:\n%s--- got:\n%s" % (expected, p.stdout))
                print("%s %s: %s" % ("FAIL" if problems else "ok", where, cmd))
                for problem in problems:
                    print("  " + problem.replace("\n", "\n  "))
                failed += bool(problems)
    return ran, failed


def main():
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    binary, root = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    docs = [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    ran = failed = 0
    for path in docs:
        r, f = run_doc(path, binary, root)
        ran += r
        failed += f
    print("%d commands run from %d documents, %d failed" % (ran, len(docs), failed))
    if ran == 0:
        print("FAIL: no command found (the convention in docs/testing.md is not followed?)")
        return 1
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
