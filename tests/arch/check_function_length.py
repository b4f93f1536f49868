#!/usr/bin/env python3
"""No function under src/ is longer than 80 lines (docs/architecture.md
"Style"), but for the ones listed in ALLOWED with the reason.

A function is a line that starts with "{" (the project's style puts a
definition's brace in column 0) up to the next line that starts with "}";
its name is taken from the line before the brace. Usage:
check_function_length.py SOURCE_ROOT"""
import pathlib
import re
import sys

LIMIT = 80
# name -> why it may be longer (kept in a comment above the function too).
ALLOWED = {
    "value_extent": "the scanner's per-byte state machine: one switch, split it and every byte pays a call",
}


def functions(path):
    """(name, first line number, length in lines) of each function in path."""
    lines = path.read_text(errors="replace").split("\n")
    i = 1
    while i < len(lines):
        if lines[i].startswith("{"):
            start = i
            while i < len(lines) and not lines[i].startswith("}"):
                i += 1
            first = start - 1  # a declaration may span lines: from its first, unindented one
            while first > 0 and lines[first][:1] in ("\t", " "):
                first -= 1
            head = re.search(r"(\w+)\s*\(", lines[first])
            yield (head.group(1) if head else lines[start - 1].strip()), start + 1, i - start + 1
        i += 1


def main():
    root = pathlib.Path(sys.argv[1])
    seen, long_ones = 0, []
    for path in sorted((root / "src").rglob("*.c")):
        for name, line, length in functions(path):
            seen += 1
            if length > LIMIT and name not in ALLOWED:
                long_ones.append(f"{path.relative_to(root)}:{line}: {name} is {length} lines (at most {LIMIT})")
    unused = set(ALLOWED) - {name for path in (root / "src").rglob("*.c") for name, _, length in functions(path)
                             if length > LIMIT}
    if seen < 100:
        print(f"only {seen} functions found under {root / 'src'}: the brace rule no longer matches the code")
        return 1
    for name in sorted(unused):
        long_ones.append(f"ALLOWED lists {name}, which is no longer over {LIMIT} lines: remove it")
    print("\n".join(long_ones) if long_ones else f"{seen} functions, none over {LIMIT} lines but {sorted(ALLOWED)}")
    return 1 if long_ones else 0


if __name__ == "__main__":
    sys.exit(main())
