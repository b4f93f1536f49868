#!/usr/bin/env python3
"""Keeps tests/data/ (the vendored part of the real-trace corpus) in step with
the tests that use it.

    vendor_corpus.py [--corpus DIR]            copy every corpus file a test refers to
                                               from DIR (default ../shared/corpus) into
                                               tests/data/corpus/ and rewrite tests/data/SOURCES.md
    vendor_corpus.py --check [--corpus DIR]    exit 1 unless tests/data/ is complete and intact

A test refers to a corpus file by a path that starts with one of the corpus's
top-level folders (`@CORPUS@/facebookresearch-param/...` in a golden case's
args or a meson.build, or a quoted path in a Python test script); a folder
stands for every file in it. Traces that are gzip'd already are copied as
they are; anything else (plain JSON, NEFF) is stored gzip'd as PATH.gz, and
tests/data/corpus.py unpacks it again, checking the sha256 of the original
bytes. The origin of each file (repository, path, commit, licence) is read
from the corpus's own SOURCES.md.

--check: every referenced file is vendored; every SOURCES.md row has its
stored file, and that file gives back the listed size and sha256; there is
no stored file without a row; the total stays under LIMIT_BYTES; and when
the full corpus is present, each vendored file equals its corpus file and
SOURCES.md is what this script would write. Standard library only.
"""
import gzip
import hashlib
import os
import re
import shutil
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(SRC, "tests", "data"))
import corpus  # noqa: E402  (tests/data/corpus.py)

DATA = os.path.join(SRC, "tests", "data")
LIMIT_BYTES = 15 * 1000 * 1000
# Where tests name corpus files. tests/data itself and the fuzz seeds are not tests.
SCAN_SKIP = (os.path.join(SRC, "tests", "data"), os.path.join(SRC, "tests", "fuzz", "corpus"),
             os.path.join(SRC, "tests", "fuzz", "regressions"))
# Licence texts in tests/data/licenses/, per source repository (owner/name).
LICENSE_FILES = {
    "AMD-AGI/TraceLens": ["AMD-AGI-TraceLens.LICENSE"],
    "Gabriellanaro/dtu_mlops": ["Gabriellanaro-dtu_mlops.LICENSE"],
    "HazyResearch/zoology": ["HazyResearch-zoology.LICENSE"],
    "aws-neuron/nkipy": ["aws-neuron-nkipy.LICENSE", "aws-neuron-nkipy.NOTICE"],
    "facebookresearch/HolisticTraceAnalysis": ["facebookresearch-HolisticTraceAnalysis.LICENSE"],
    "facebookresearch/param": ["facebookresearch-param.LICENSE"],
    "pytorch/kineto": ["pytorch-kineto.LICENSE"],
}

HEADER = """\
# Vendored real traces: sources

The golden, oracle and unit tests read real traces and NEFFs written by
others (the `@CORPUS@/...` paths of `tests/golden/cases/*/args`,
`tests/oracle/meson.build` and the test scripts). The full corpus lives in
`../shared/corpus` beside the checkout; this folder holds a copy of exactly
the files the tests name, so that a fresh clone passes its tests without it.
When `../shared/corpus` exists, the tests use it instead (`meson setup`
prints which one under "Tests"; `-Dcorpus=vendored` forces this copy).

Each file is the corpus file byte for byte. Traces that were gzip'd upstream
are stored as they are (`corpus/PATH`); plain JSON and NEFFs are stored
gzip'd (`corpus/PATH.gz`) and unpacked again into the build directory
(`BUILD/tests/corpus/PATH`) by `tests/data/corpus.py`, which checks the size
and the sha256 below (those of the original bytes). `tools/vendor_corpus.py`
writes this folder from `../shared/corpus`; `tools/vendor_corpus.py --check`
(meson test `corpus-vendored`) checks it. The origin of each file (source
path, the last commit that touched it, licence) is copied from
`../shared/corpus/SOURCES.md`; the 8 `dlrm_kineto` traces were extracted
unchanged from the `dlrm_kineto.tar.gz` archive named there. The licence
texts are in `licenses/`.

"""


def shared_rows(corpus_dir):
    """{corpus path: (source repo, source path, commit, licence)} from the corpus's SOURCES.md."""
    meta = {}
    with open(os.path.join(corpus_dir, "SOURCES.md"), encoding="utf-8") as f:
        for line in f:
            if not line.startswith("| "):
                continue
            cells = [c.strip() for c in line.strip().strip("|").split(" | ")]
            for i, c in enumerate(cells):
                if re.fullmatch(r"`[^`]+`", c) and i + 4 < len(cells):
                    meta[c.strip("`")] = tuple(cells[i + 1:i + 5])
                    break
    return meta


def references(owners):
    """Every corpus path (file or folder) named by a test."""
    ref = re.compile(r"(?:@CORPUS@/|[\"'])((?:%s)/[^\s'\"`,):]+)" % "|".join(re.escape(o) for o in owners))
    found = set()
    for top in (os.path.join(SRC, "tests"),):
        for d, dirs, files in os.walk(top):
            if d.startswith(SCAN_SKIP):
                dirs[:] = []
                continue
            for name in files:
                if name in ("args", "meson.build") or name.endswith(".py"):
                    with open(os.path.join(d, name), encoding="utf-8", errors="replace") as f:
                        found.update(m.group(1).rstrip("/") for m in ref.finditer(f.read()))
    return found


def expand(refs, files):
    """refs with each folder replaced by the files under it (files: every known corpus file)."""
    out = set()
    for r in refs:
        under = [f for f in files if f.startswith(r + "/")]
        out.update(under if under else [r])
    return out


def corpus_files(corpus_dir):
    out = []
    for d, _, names in os.walk(corpus_dir):
        out.extend(os.path.relpath(os.path.join(d, n), corpus_dir) for n in names)
    return [f for f in out if f != "SOURCES.md"]


def stored_name(path):
    return path if path.endswith(".gz") else path + ".gz"


def sources_text(rows, meta):
    """SOURCES.md for rows [(path, stored, size, sha256)]."""
    lines = [HEADER, "| corpus path | stored as | bytes | stored bytes | sha256 | source repository | source path "
             "| commit | licence |", "|---|---|---:|---:|---|---|---|---|---|"]
    total = 0
    for path, stored, size, sha256 in rows:
        stored_size = os.path.getsize(os.path.join(corpus.VENDORED, stored))
        total += stored_size
        repo, src_path, commit, licence = meta[path]
        lines.append("| `%s` | %s | %s | %s | `%s` | %s | %s | %s | %s |" % (
            path, "as is" if stored == path else "`.gz`", format(size, ","), format(stored_size, ","), sha256, repo, src_path, commit, licence))
    lines.append("")
    lines.append("Total: %d files, %s bytes stored (%s bytes unpacked).\n" % (
        len(rows), format(total, ","), format(sum(r[2] for r in rows), ",")))
    lines.append("Licence texts (`licenses/`), copied from each repository's top-level licence file at the"
                 " commit the corpus was taken from (zoology: at its current head; the file was added after"
                 " 0f98dfe9; kineto: `tb_plugin/LICENSE`):\n")
    for repo in sorted({meta[r[0]][0] for r in rows}, key=str.lower):
        lines.append("* %s: %s" % (repo, ", ".join("`licenses/%s`" % n for n in LICENSE_FILES[repo])))
    return "\n".join(lines) + "\n"


def update(corpus_dir):
    meta = shared_rows(corpus_dir)
    files = corpus_files(corpus_dir)
    wanted = sorted(expand(references({f.split("/")[0] for f in files}), files))
    missing = [p for p in wanted if p not in meta]
    if missing:
        sys.exit("not in %s/SOURCES.md: %s" % (corpus_dir, ", ".join(missing)))
    if os.path.isdir(corpus.VENDORED):
        shutil.rmtree(corpus.VENDORED)
    rows = []
    for path in wanted:
        with open(os.path.join(corpus_dir, path), "rb") as f:
            data = f.read()
        stored = stored_name(path)
        out = os.path.join(corpus.VENDORED, stored)
        os.makedirs(os.path.dirname(out), exist_ok=True)
        with open(out, "wb") as f:
            # mtime 0 and no file name: the same bytes on every run
            f.write(data if stored == path else gzip.compress(data, 9, mtime=0))
        rows.append((path, stored, len(data), hashlib.sha256(data).hexdigest()))
    with open(corpus.SOURCES, "w", encoding="utf-8") as f:
        f.write(sources_text(rows, meta))
    print("%d files vendored into %s" % (len(rows), os.path.relpath(corpus.VENDORED, SRC)))


def check(corpus_dir):
    problems = []
    rows = corpus.vendored_files()
    listed = {r[0] for r in rows}
    shared = os.path.isdir(corpus_dir)
    known = corpus_files(corpus_dir) if shared else sorted(listed)
    for path in sorted(expand(references({f.split("/")[0] for f in known}), known)):
        if path not in listed:
            problems.append("%s: named by a test but not vendored (run tools/vendor_corpus.py)" % path)
    total = 0
    for path, stored, size, sha256 in rows:
        p = os.path.join(corpus.VENDORED, stored)
        if not os.path.exists(p):
            problems.append("%s: listed in SOURCES.md but missing" % p)
            continue
        total += os.path.getsize(p)
        data = corpus.original_bytes(path, stored)
        if len(data) != size or hashlib.sha256(data).hexdigest() != sha256:
            problems.append("%s: not the bytes SOURCES.md lists (size %d, sha256 %s)" % (p, size, sha256))
        if shared:
            with open(os.path.join(corpus_dir, path), "rb") as f:
                if f.read() != data:
                    problems.append("%s: differs from %s" % (p, os.path.join(corpus_dir, path)))
    stored_files = {os.path.relpath(os.path.join(d, n), corpus.VENDORED)
                    for d, _, names in os.walk(corpus.VENDORED) for n in names}
    for extra in sorted(stored_files - {r[1] for r in rows}):
        problems.append("tests/data/corpus/%s: not listed in SOURCES.md" % extra)
    if total > LIMIT_BYTES:
        problems.append("tests/data/corpus holds %d bytes, over the limit of %d" % (total, LIMIT_BYTES))
    for names in LICENSE_FILES.values():
        for n in names:
            if not os.path.exists(os.path.join(DATA, "licenses", n)):
                problems.append("tests/data/licenses/%s: missing" % n)
    if shared:
        with open(corpus.SOURCES, encoding="utf-8") as f:
            if f.read() != sources_text(rows, shared_rows(corpus_dir)):
                problems.append("tests/data/SOURCES.md is not what tools/vendor_corpus.py writes from %s" % corpus_dir)
    for p in problems:
        print(p)
    print("%d vendored files, %s bytes stored; %s" % (
        len(rows), format(total, ","), "checked against %s" % corpus_dir if shared else "no full corpus to compare with"))
    return 1 if problems else 0


def main():
    args = sys.argv[1:]
    corpus_dir = os.path.normpath(corpus.SHARED)
    if "--corpus" in args:
        i = args.index("--corpus")
        corpus_dir = args[i + 1]
        del args[i:i + 2]
    if args == ["--check"]:
        return check(corpus_dir)
    if args:
        sys.exit(__doc__)
    update(corpus_dir)
    return 0


if __name__ == "__main__":
    sys.exit(main())
