#!/usr/bin/env python3
"""The real-trace corpus the golden, oracle and unit tests read (@CORPUS@).

Two sources, the first that exists wins:

  * ../shared/corpus beside the checkout: the full corpus (54 traces, two
    NEFFs; its SOURCES.md says where each file came from);
  * the vendored subset in tests/data/: the files the tests refer to, byte
    for byte, stored as tests/data/corpus/PATH (already gzip'd traces) or
    tests/data/corpus/PATH.gz (plain JSON and NEFFs, gzip'd to save space).
    tests/data/SOURCES.md lists each one with its origin, licence, size and
    the sha256 of the original bytes.

The vendored files are unpacked once into a build directory, under the same
relative paths and names as in ../shared/corpus, so that a test prints the
same file names and its expected output does not depend on the source.

    corpus.py extract DEST [--stamp FILE]   unpack the vendored files into DEST
                                            (sha256 checked), then touch FILE
    corpus.py root [NEURON_STATS]           print the corpus a test would use

Library use (the test scripts): corpus_root(binary) -> path.
Standard library only.
"""
import gzip
import hashlib
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
SOURCES = os.path.join(HERE, "SOURCES.md")
VENDORED = os.path.join(HERE, "corpus")
SHARED = os.path.join(SRC, "..", "shared", "corpus")
# where meson unpacks the vendored files, relative to its build directory
# (tests/meson.build: the custom target `vendored-corpus`)
BUILD_SUBDIR = os.path.join("tests", "corpus")

# A file row of SOURCES.md: | `PATH` | as is or PATH.gz | bytes | stored bytes | `SHA256` | ...
ROW = re.compile(r"^\| `(?P<path>[^`]+)` \| (?P<stored>as is|`\.gz`) \| (?P<size>[\d,]+) \| (?P<stored_size>[\d,]+) \| "
                 r"`(?P<sha256>[0-9a-f]{64})` \|")


def vendored_files():
    """[(path in the corpus, stored file relative to tests/data/corpus, size, sha256)] from SOURCES.md."""
    rows = []
    with open(SOURCES, encoding="utf-8") as f:
        for line in f:
            m = ROW.match(line)
            if m:
                stored = m["path"] if m["stored"] == "as is" else m["path"] + ".gz"
                rows.append((m["path"], stored, int(m["size"].replace(",", "")), m["sha256"]))
    return rows


def original_bytes(path, stored):
    """The original bytes of a vendored file: stored as the corpus file itself (stored == path),
    or gzip'd by us (path + ".gz")."""
    with open(os.path.join(VENDORED, stored), "rb") as f:
        data = f.read()
    return data if stored == path else gzip.decompress(data)


def extract(dest):
    """Unpacks every vendored file into dest/PATH; checks size and sha256. Returns the count."""
    rows = vendored_files()
    if not rows:
        raise SystemExit("%s: no file rows (| `PATH` | as is or `.gz` | bytes | ...)" % SOURCES)
    for path, stored, size, sha256 in rows:
        data = original_bytes(path, stored)
        got = hashlib.sha256(data).hexdigest()
        if len(data) != size or got != sha256:
            raise SystemExit("%s: %d bytes, sha256 %s; tests/data/SOURCES.md says %d bytes, %s"
                             % (os.path.join(VENDORED, stored), len(data), got, size, sha256))
        out = os.path.join(dest, path)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        tmp = out + ".tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, out)
    return len(rows)


def build_dir_of(binary):
    """The meson build directory holding binary (the nearest parent with build.ninja), or None."""
    d = os.path.dirname(os.path.abspath(binary))
    while d != os.path.dirname(d):
        if os.path.exists(os.path.join(d, "build.ninja")):
            return d
        d = os.path.dirname(d)
    return None


def corpus_root(binary=None):
    """The corpus a test uses: $NS_CORPUS (meson sets it), else ../shared/corpus when it
    exists, else the vendored files unpacked in the build directory of binary (unpacked
    now if meson has not done it yet)."""
    if os.environ.get("NS_CORPUS"):
        return os.path.normpath(os.environ["NS_CORPUS"])
    if os.path.isdir(SHARED):
        return os.path.normpath(SHARED)
    build = build_dir_of(binary) if binary else None
    dest = os.path.join(build or os.path.join(SRC, "build"), BUILD_SUBDIR)
    if not os.path.isdir(dest):
        extract(dest)
    return dest


def missing(args, root):
    """The first @CORPUS@ path of args that is not in the corpus at root, or None."""
    for a in args:
        if a.startswith("@CORPUS@") and not os.path.exists(a.replace("@CORPUS@", root)):
            return a.replace("@CORPUS@", root)
    return None


def resolve(path, binary):
    """A test's trace argument as a path: @CORPUS@ replaced by corpus_root(binary),
    a relative path taken from the source root."""
    path = path.replace("@CORPUS@", corpus_root(binary))
    return path if os.path.isabs(path) else os.path.join(SRC, path)


def skip_reason(path):
    """The line a test prints when it skips because path is not in the corpus it was given."""
    return ("skip: %s not found: this corpus lacks it (tests/data/ vendors the files listed in "
            "tests/data/SOURCES.md; the others need the full corpus, ../shared/corpus beside the checkout)" % path)


def main():
    args = sys.argv[1:]
    if args[:1] == ["extract"] and len(args) in (2, 4) and (len(args) == 2 or args[2] == "--stamp"):
        dest = args[1]
        if os.path.isdir(dest):
            shutil.rmtree(dest)
        n = extract(dest)
        if len(args) == 4:
            with open(args[3], "w") as f:
                f.write("%d files\n" % n)
        print("%d vendored corpus files unpacked into %s" % (n, dest))
        return 0
    if args[:1] == ["root"] and len(args) <= 2:
        print(corpus_root(args[1] if len(args) == 2 else None))
        return 0
    sys.exit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
