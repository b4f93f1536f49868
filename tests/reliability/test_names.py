#!/usr/bin/env python3
"""Markdown output parsed back (issue 16.4, docs/report.md "Control characters
and Markdown"): op names and paths that try to break out of a GitHub comment
(a newline and a fake "0 regressed" heading, pipes, HTML, an image, links,
autolinks, an @-mention, emphasis, code, math, control characters) are
written by `report --format markdown` and `diff --format markdown`, and the
output is parsed with cmark-gfm, GitHub's own Markdown parser (Debian package
cmark-gfm, with GitHub's extensions: table, autolink, strikethrough,
tagfilter). The document must have exactly the blocks the writer meant
(no extra heading, row or paragraph), every name cell and every list item
that quotes a path must hold only text, and that text must be the name as
given, its control characters made visible and a ZERO WIDTH SPACE after each
"@" (which GitHub would otherwise turn into a mention).

Terminal output (issue 16.5): `ls` of a capture folder, the per-trace
headers of `report` on a directory and `diff`'s table, with ESC, an OSC
title sequence and BEL in folder, file and op names, print no control byte
but newlines, and show each control as the report documents (`\x1b`).

The Markdown part is skipped (with the reason) when cmark-gfm is not
installed; the terminal part always runs.
"""

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET

from common import SRC, binary, check, cleanup, fail, finish, run, tmpdir

NS = "{http://commonmark.org/xml/1.0}"
ZWSP = "\u200b"

HOSTILE = [
    "aten::evil|col",
    "aten::nl\n\n#### 0 regressed",
    "@mallory please look",
    "![pixel](https://evil.example/p.png)",
    "<img src=https://evil.example/x.png>",
    "[click](https://evil.example)",
    "https://evil.example/raw",
    "www.evil.example",
    "mail me@evil.example",
    "`code` *em* _em_ **strong** ~~gone~~ $x^2$",
    "back\\slash &amp; &#124;",
    "esc\x1b[31mred\x07 cr\r tab\t del\x7f c1\u009b",
]


def visible(name):
    """The documented text of a name in Markdown: controls as Python's repr()
    spells them, a ZERO WIDTH SPACE after "@"."""
    text = "".join(repr(c)[1:-1] if ord(c) < 0x20 or 0x7f <= ord(c) <= 0x9f else c for c in name)
    return text.replace("@", "@" + ZWSP)


def trace(names, scale):
    """A CPU-only era-C trace: one top-level op per name, durations scaled."""
    events = [{"ph": "X", "cat": "Trace", "name": "PyTorch Profiler (0)", "pid": 1, "tid": 1,
               "ts": 1000.0, "dur": 5000.0, "args": {}}]
    for k, name in enumerate(names):
        events.append({"ph": "X", "cat": "cpu_op", "name": name, "pid": 1, "tid": 1,
                       "ts": 1001.0 + 100 * k, "dur": round((10 + k) * scale, 3),
                       "args": {"External id": k + 1}})
    return json.dumps({"schemaVersion": 1, "baseTimeNanoseconds": 1700000000000000000,
                       "traceEvents": events}).encode()


def parse(markdown):
    p = subprocess.run(["cmark-gfm", "-e", "table", "-e", "autolink", "-e", "strikethrough", "-e", "tagfilter",
                        "-t", "xml"], input=markdown, capture_output=True, check=True)
    try:
        return ET.fromstring(p.stdout)
    except ET.ParseError as e:  # a raw control character reached the Markdown
        fail("cmark-gfm's XML does not parse (%s): the Markdown holds a raw control character" % e)
        return ET.fromstring(b"<document xmlns='http://commonmark.org/xml/1.0'/>")


def tag(el):
    return el.tag.replace(NS, "")


def only_text(el, what):
    """The text of el; a failure if it holds anything but text nodes."""
    kinds = {tag(c) for c in el.iter()} - {tag(el), "text"}
    check(not kinds, "%s: holds %s, not only text" % (what, sorted(kinds)))
    return "".join(c.text or "" for c in el.iter() if tag(c) == "text")


def table_rows(table):
    return [[cell for cell in row] for row in table if tag(row) in ("table_header", "table_row")]


def check_report(bin_, tmp):
    path = os.path.join(tmp, "hostile.json")
    with open(path, "wb") as f:
        f.write(trace(HOSTILE, 1.0))
    p = run([bin_, path, "--format", "markdown", "--row-limit", "-1", "--no-cache"], tmp, check_code=0)
    doc = parse(p.stdout)
    blocks = [tag(b) for b in doc]
    check(blocks == ["table", "paragraph"], "report: blocks %s, expected one table and its footer" % blocks)
    rows = table_rows(doc[0])
    check(len(rows) == 1 + len(HOSTILE), "report: %d table rows for %d names" % (len(rows), len(HOSTILE)))
    for cells, name in zip(rows[1:], HOSTILE):
        check(len(cells) == 4, "report: %r: %d cells, expected 4 (CPU-only)" % (name, len(cells)))
        got = only_text(cells[0], "report name %r" % name)
        check(got == visible(name), "report: cell reads %r, expected %r" % (got, visible(name)))


def check_diff(bin_, tmp):
    # the runs' directory names are hostile too: they are quoted in the list
    label = "runs`x\n## y @mallory <b>"
    base_dir, new_dir = os.path.join(tmp, label, "base"), os.path.join(tmp, label, "new")
    for d, names, scale in ((base_dir, HOSTILE, 1.0), (new_dir, HOSTILE + ["brand\n### new @op"], 2.0)):
        os.makedirs(d)
        with open(os.path.join(d, "trace.json"), "wb") as f:
            f.write(trace(names, scale))
    p = run([bin_, "diff", os.path.join(base_dir, "trace.json"), os.path.join(new_dir, "trace.json"),
             "--format", "markdown", "--top", "-1", "--no-cache"], tmp, check_code=0)
    doc = parse(p.stdout)
    blocks = [(tag(b), b.get("level")) for b in doc]
    want = [("heading", "3"), ("list", None), ("table", None), ("heading", "4"), ("table", None),
            ("heading", "4"), ("table", None)]
    check(blocks == want, "diff: blocks %s, expected %s" % (blocks, want))
    if blocks != want:
        return
    headings = [only_text(doc[k], "diff heading") for k in (0, 3, 5)]
    check(headings == ["neuron-stats diff: %d regressed, 0 improved, 1 new, 0 removed" % len(HOSTILE),
                       "Regressions (%d)" % len(HOSTILE), "New (1)"], "diff: headings %r" % headings)
    check(all(len(item) == 1 and tag(item[0]) == "paragraph" for item in doc[1]), "diff: a list item is not one line")
    items = [only_text(item[0], "diff list item") for item in doc[1]]
    for k, side in ((0, "base"), (1, "new")):
        want_item = "%s: %s (" % (side, visible(os.path.join(tmp, label, side, "trace.json")))
        check(items[k].startswith(want_item), "diff: list item %r, expected %r..." % (items[k], want_item))
    names = [only_text(cells[0], "diff name") for cells in table_rows(doc[4])[1:] + table_rows(doc[6])[1:]]
    want_names = sorted(visible(n) for n in HOSTILE + ["brand\n### new @op"])
    check(sorted(names) == want_names, "diff: names %r, expected %r" % (sorted(names), want_names))


def no_controls(what, out):
    bad = sorted({b for b in out if (b < 0x20 and b != 0x0A) or b == 0x7F})
    check(not bad, "%s: control bytes %s on stdout" % (what, bad))
    check(b"\\x1b]0;pwned\\x07" in out, "%s: the OSC sequence is not shown as \\x1b]0;pwned\\x07" % what)


def check_terminal(bin_, tmp):
    osc = "\x1b]0;pwned\x07"
    cap = os.path.join(tmp, "cap")
    shutil.copytree(os.path.join(SRC, "fixtures", "capture-2rank"), cap)
    first = sorted(d for d in os.listdir(cap) if d.startswith("i-"))[0]
    os.rename(os.path.join(cap, first), os.path.join(cap, first + osc))
    no_controls("ls", run([bin_, "ls", cap], tmp, check_code=0).stdout)
    no_controls("report DIR (headers)", run([bin_, cap, "--no-cache", "-n", "2"], tmp, check_code=0).stdout)
    path = os.path.join(tmp, "op" + osc + ".json")
    with open(path, "wb") as f:
        f.write(trace(["aten::op" + osc, "aten::plain"], 1.0))
    no_controls("diff table", run([bin_, "diff", path, path, "--no-cache"], tmp, check_code=0).stdout)
    no_controls("report table", run([bin_, path, "--no-cache"], tmp, check_code=0).stdout)


def main():
    bin_ = binary()
    tmp = tmpdir()
    try:
        check_terminal(bin_, tmp)
        if shutil.which("cmark-gfm"):
            check_report(bin_, tmp)
            check_diff(bin_, tmp)
        else:
            print("SKIP (Markdown part): cmark-gfm (GitHub's Markdown parser, Debian package cmark-gfm) "
                  "is not installed")
    finally:
        cleanup(tmp)
    finish("names")


if __name__ == "__main__":
    main()
