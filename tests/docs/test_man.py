#!/usr/bin/env python3
"""The manual page neuron-stats(1) (`neuron-stats --man`, src/cli/cmd-man.c).

* groff's man macros with every warning (`groff -man -ww -z`) say nothing;
* rendered as text, the page names every command of `neuron-stats --help`,
  and under each command's heading (OPTIONS) exactly the options that
  `neuron-stats COMMAND --help` lists, long and short, with their argument;
* SORT KEYS holds every key and alias that `report --help` lists;
* the sections of a man page are there.
Skipped (77) without groff. Usage: test_man.py NEURON_STATS"""
import re
import shutil
import subprocess
import sys

SECTIONS = ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "OPTIONS", "SORT KEYS", "EXIT STATUS", "FILES",
            "ENVIRONMENT", "EXAMPLES", "SEE ALSO"]


def run(args, **kw):
    return subprocess.run(args, capture_output=True, text=True, check=True, **kw).stdout


def commands(binary):
    """The command words of the main --help's list."""
    text = run([binary, "--help"])
    block = text.split("commands:\n", 1)[1].split("\n\n", 1)[0]
    return [line.split()[0] for line in block.splitlines() if line.startswith("  ")]


def help_options(binary, command):
    """{"-s, --sort KEY", "--merge", ...}: each option line of COMMAND --help, as the page's tag."""
    text = run([binary, command, "--help"])
    opts = set()
    if "\noptions:\n" not in text:
        return opts
    for line in text.split("\noptions:\n", 1)[1].split("\n\n", 1)[0].splitlines():
        m = re.match(r"  (?:(-\w), |    )(--[a-z][a-z-]*)(?: ([A-Z_]+))?(?=\s|$)", line)
        if m:
            opts.add(", ".join(x for x in m.group(1, 2) if x) + (" " + m.group(3) if m.group(3) else ""))
    return opts


def render(page):
    """The page as plain text, one line per paragraph (no wrapping, no hyphenation)."""
    text = run(["groff", "-man", "-Tutf8", "-rLL=1000n", "-rHY=0", "-P-cbou"], input=page)
    return text.replace("\u2212", "-").replace("\u2010", "-")


def sections(text):
    """{"OPTIONS": [lines], ...}: the text under each top-level heading."""
    out, current = {}, None
    for line in text.splitlines():
        if line and not line[0].isspace() and line.isupper() or line in SECTIONS:
            current = line.strip()
            out[current] = []
        elif current:
            out[current].append(line)
    return out


def main():
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    if not shutil.which("groff"):
        print("skip: groff not installed (Debian: groff-base)")
        return 77
    page = run([binary, "--man"])
    failures = []
    warn = subprocess.run(["groff", "-man", "-ww", "-z"], input=page, capture_output=True, text=True)
    if warn.returncode or warn.stderr:
        failures.append("groff -man -ww -z: exit %d: %s" % (warn.returncode, warn.stderr))
    text = render(page)
    secs = sections(text)
    for name in SECTIONS:
        if name not in secs:
            failures.append("no section %s (have %s)" % (name, list(secs)))
    cmds = commands(binary)
    listed = [l.strip().split()[0] for l in secs.get("COMMANDS", []) if re.match(r"^       \S", l)]
    if [c for c in cmds if c not in listed]:
        failures.append("COMMANDS lists %s, the help %s" % (listed, cmds))
    # OPTIONS: a "   COMMAND" heading per command, then its option tags at 7 spaces
    per_cmd, current = {}, None
    for line in secs.get("OPTIONS", []):
        if re.match(r"^   \S", line):
            current = line.strip()
            per_cmd[current] = set()
        elif current and re.match(r"^       -", line):
            # (a tag shorter than the indent has its text on the same line)
            m = re.match(r"(?:(-\w), )?(--[a-z][a-z-]*)(?: ([A-Z_]+))?(?=\s|$)", line.strip())
            per_cmd[current].add(", ".join(x for x in m.group(1, 2) if x) + (" " + m.group(3) if m.group(3) else "")
                                 if m else line.strip())
    n_opts = 0
    for cmd in cmds:
        want = help_options(binary, cmd)
        got = per_cmd.get(cmd)
        n_opts += len(want)
        if got != want:
            failures.append("%s: the page has %s, --help %s" % (
                cmd, sorted((got or set()) - want), sorted(want - (got or set()))))
    # SORT KEYS: every key and alias of report --help
    report_help = run([binary, "report", "--help"])
    keys = report_help.split("aliases last):\n", 1)[1].split("\nPyTorch's", 1)[0]
    words = set()
    for line in keys.splitlines():
        parts = re.split(r"\s{2,}", line.strip())
        words.add(parts[0])
        if len(parts) > 2:
            words.update(parts[2].split())
    sort_text = " ".join(secs.get("SORT KEYS", [])).replace("(", " ").replace(")", " ")
    missing = [w for w in sorted(words) if w not in sort_text.split()]
    if missing:
        failures.append("SORT KEYS lacks %s" % missing)
    for f in failures:
        print("FAIL " + f)
    print("man page: %d commands, %d options, %d sort keys and aliases checked; %d failures" % (
        len(cmds), n_opts, len(words), len(failures)))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
