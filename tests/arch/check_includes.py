#!/usr/bin/env python3
"""The dependency rules of docs/architecture.md ("Dependency rules"), checked.

Reads every .c and .h file under src/ and, per folder, its #include lines and
(comments and string literals stripped) its calls:

  layers    common/ includes only common/; aggregate/ never includes ntff/,
            neff/, store/, ingest/ (the JSON layer and Kineto parsing), cJSON
            or SQLite; store/ never includes Kineto parsing (ingest/ingest.h),
            the JSON layer (ingest/json/) or cJSON; ingest/ never includes
            ntff/ or a layer above it (aggregate/, store/, report/,
            pipeline/, cli/); ntff/ may include ingest/ (the JSON walker).
  env       only cli/ and pipeline/ read the environment (getenv, environ,
            setenv, ...) or start processes (posix_spawn, fork, exec*,
            system, popen).
  people    only report/ formats text for people: outside report/ and cli/
            nothing writes to stdout or stderr, and no function takes a
            FILE * to write to (cli/ owns the streams and prints what
            report/ made); outside report/ no format pads a column
            (%-12s, %-*s, %*s).
  sort      nothing calls qsort or qsort_r but common/sort.h: ns_sort and
            ns_sort_r take an empty (NULL) array, which glibc's nonnull
            qsort does not (UBSan's "null pointer passed as argument 1").

A violation that is not in ALLOWED below fails, and so does an ALLOWED entry
that no longer occurs (delete its line: the allowlist only shrinks). Each
entry says why it is there today and which step of issue 18 removes it.

usage: check_includes.py [SOURCE_ROOT]   (default: this checkout)
"""
import os
import re
import sys

FOLDERS = ["common", "ingest", "neff", "ntff", "aggregate", "store", "report", "pipeline", "cli"]

# (rule, file under src/, what) -> (reason, the issue 18 step that removes it)
ALLOWED = {
    ("people", "common/error.c", "stderr"):
        ("ns_assert_fail prints the broken invariant and aborts (common/assert.h)",
         "kept: the one print a library may do, on a programming error"),
    ("people", "common/error.c", "stdout"):
        ("ns_assert_fail flushes stdout before its message",
         "kept: the one print a library may do, on a programming error"),
}

LAYER_RULES = {
    # folder: (forbidden include prefixes, what the docs call it)
    "aggregate": ("ntff/", "neff/", "store/", "ingest/", "cjson/", "sqlite3.h"),
    "store": ("ingest/ingest.h", "ingest/json/", "cjson/"),
    # the generic byte-source/JSON/Kineto layer: Neuron captures are ntff/'s
    "ingest": ("ntff/", "aggregate/", "store/", "report/", "pipeline/", "cli/"),
}
ENV_CALLS = ("getenv", "secure_getenv", "setenv", "unsetenv", "putenv", "clearenv",
             "posix_spawn", "posix_spawnp", "fork", "vfork", "execl", "execlp", "execle",
             "execv", "execvp", "execvpe", "fexecve", "system", "popen")
ENV_FOLDERS = ("cli", "pipeline")
STD_WRITERS = ("printf", "vprintf", "puts", "putchar", "perror")

INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^>"]+)[>"]', re.M)
PAD = re.compile(r'%-?(?:\*|[0-9]+)s')


def strip(text, keep_strings=False):
    """text with comments (and, unless keep_strings, string and character
    literals) replaced by spaces, line breaks kept."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(text[i:j] if keep_strings else c + " " * (j - i - 2) + c)
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def violations(root):
    src = os.path.join(root, "src")
    found = {}  # (rule, file, what) -> first line number
    for folder in sorted(os.listdir(src)):
        path = os.path.join(src, folder)
        if not os.path.isdir(path):
            continue
        if folder not in FOLDERS:
            found[("layers", folder + "/", "unknown folder")] = 0
            continue
        for dirpath, _, names in os.walk(path):
            for name in sorted(names):
                if not name.endswith((".c", ".h")):
                    continue
                full = os.path.join(dirpath, name)
                rel = os.path.relpath(full, src)
                with open(full, encoding="utf-8", errors="replace") as f:
                    text = f.read()
                with_strings = strip(text, keep_strings=True)
                code = strip(text)

                def add(rule, what, pos, body):
                    key = (rule, rel, what)
                    found.setdefault(key, body.count("\n", 0, pos) + 1)

                for m in INCLUDE.finditer(with_strings):
                    inc = m.group(1)
                    if folder == "common" and "/" in inc and not inc.startswith("common/") \
                            and m.group(0).rstrip().endswith('"'):
                        add("layers", inc, m.start(), with_strings)
                    for bad in LAYER_RULES.get(folder, ()):
                        if inc.startswith(bad):
                            add("layers", inc, m.start(), with_strings)
                if rel != os.path.join("common", "sort.h"):
                    for m in re.finditer(r"\b(qsort|qsort_r)\s*\(", code):
                        add("sort", m.group(1), m.start(), code)
                if folder not in ENV_FOLDERS:
                    for m in re.finditer(r"\b(%s)\s*\(" % "|".join(ENV_CALLS), code):
                        add("env", m.group(1), m.start(), code)
                    for m in re.finditer(r"\benviron\b", code):
                        add("env", "environ", m.start(), code)
                if folder not in ("report", "cli"):
                    # a function (or function pointer) with a FILE * parameter
                    for m in re.finditer(r"\b\w+\s*\(([^;{}()]*\bFILE\s*\*[^;{}()]*)\)\s*[{;]", code):
                        add("people", "FILE *", m.start(), code)
                    for m in re.finditer(r"\(\s*\*?\s*\w*\s*\)\s*\(\s*FILE\s*\*", code):
                        add("people", "FILE *", m.start(), code)
                if folder != "report":
                    for m in re.finditer(r'"(?:[^"\\\n]|\\.)*"', with_strings):
                        if PAD.search(m.group(0)):
                            add("people", "%-Ns", m.start(), with_strings)
                if folder not in ("report", "cli"):
                    for m in re.finditer(r"\b(stdout|stderr)\b", code):
                        add("people", m.group(1), m.start(), code)
                    for m in re.finditer(r"\b(%s)\s*\(" % "|".join(STD_WRITERS), code):
                        add("people", m.group(1), m.start(), code)
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..")
    found = violations(root)
    bad = 0
    for key in sorted(found):
        if key not in ALLOWED:
            rule, rel, what = key
            print("src/%s:%d: %s rule: %s (docs/architecture.md \"Dependency rules\")" % (rel, found[key], rule, what))
            bad += 1
    for key in sorted(ALLOWED):
        if key not in found:
            rule, rel, what = key
            print("src/%s: allowed %s violation %r no longer occurs: delete its ALLOWED entry"
                  " in tests/arch/check_includes.py" % (rel, rule, what))
            bad += 1
    if bad:
        print("%d problem(s)" % bad)
        return 1
    print("dependency rules: %d known violation(s) allowed, none new" % len(ALLOWED))
    return 0


if __name__ == "__main__":
    sys.exit(main())
