#!/usr/bin/env python3
"""Keeps docs/cli.md true: the text between each
<!-- help:COMMAND --> and <!-- /help --> marker pair is the output of
`neuron-stats COMMAND --help`. With --check, exits 1 if the file is stale.
Usage: gen_cli_doc.py NEURON_STATS [--check]"""
import re
import subprocess
import sys
import os

DOC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "docs", "cli.md")
MARK = re.compile(r"(<!-- help:([a-z-]+) -->\n)(.*?)(<!-- /help -->)", re.S)


def help_text(binary, command):
    args = [binary, "--help"] if command == "main" else [binary, command, "--help"]
    out = subprocess.run(args, capture_output=True, text=True, check=True).stdout
    return "```\n" + out + "```\n"


def main():
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    binary = sys.argv[1]
    with open(DOC) as f:
        text = f.read()
    new = MARK.sub(lambda m: m.group(1) + help_text(binary, m.group(2)) + m.group(4), text)
    if "--check" in sys.argv:
        if new != text:
            print("docs/cli.md is stale: run tools/gen_cli_doc.py BINARY")
            return 1
        print("docs/cli.md matches --help")
        return 0
    with open(DOC, "w") as f:
        f.write(new)
    return 0


if __name__ == "__main__":
    sys.exit(main())
