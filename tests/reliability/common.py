"""Helpers shared by the reliability tests (tests/reliability/test_*.py).

Each test is a script run by meson (suite 'reliability') as
    python3 tests/reliability/test_X.py BUILD/src/cli/neuron-stats
and exits non-zero on failure. Nothing here imports the project's code: the
tests drive the installed binary like a user would.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
SRC = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(SRC, "tools"))
sys.path.insert(0, os.path.join(SRC, "tests", "oracle"))

FAILURES = []


def binary():
    if len(sys.argv) < 2:
        sys.exit("usage: %s BUILD/src/cli/neuron-stats" % sys.argv[0])
    return os.path.abspath(sys.argv[1])


def sanitized(path):
    """True if the binary was built with AddressSanitizer (slower, and its
    memory figures are 2-3x larger)."""
    with open(path, "rb") as f:
        return b"__asan_init" in f.read()


def env(tmp, **extra):
    e = dict(os.environ, NEURON_STATS_CACHE_DIR=os.path.join(tmp, "cache"), LC_ALL="C")
    e.update(extra)
    return e


def run(args, tmp, check_code=None, **kw):
    """Runs the binary; returns CompletedProcess (bytes)."""
    p = subprocess.run(args, capture_output=True, env=kw.pop("env", None) or env(tmp), **kw)
    if check_code is not None and p.returncode != check_code:
        fail("%s: exit %d, expected %d\n%s" % (" ".join(map(str, args)), p.returncode, check_code,
                                              p.stderr.decode(errors="replace")[-2000:]))
    return p


def fail(msg):
    FAILURES.append(msg)
    print("FAIL:", msg, flush=True)


def check(cond, msg):
    if not cond:
        fail(msg)
    return cond


def finish(name):
    if FAILURES:
        print("%s: %d failure(s)" % (name, len(FAILURES)))
        sys.exit(1)
    print("%s: ok" % name)
    sys.exit(0)


def tmpdir():
    return tempfile.mkdtemp(prefix="ns-rel-")


def cleanup(path):
    shutil.rmtree(path, ignore_errors=True)


# ---------------------------------------------------------------------------
# salvage: what a correct reader keeps of a damaged trace, computed in Python
# independently of the C parser (json.JSONDecoder.raw_decode per element)

_DEC = json.JSONDecoder()
WS = b" \t\r\n"


def _skip_ws(b, i):
    while i < len(b) and b[i] in WS:
        i += 1
    return i


def _raw_value(text, i):
    """End index of the complete JSON value at text[i:], or None."""
    try:
        _, end = _DEC.raw_decode(text, i)
        return end
    except (ValueError, RecursionError):
        return None


def _array(text, i, out):
    """Appends the raw text of each complete element of the array at
    text[i] == '['; returns (index after ']' or None if cut, list)."""
    i = _skip_ws_s(text, i + 1)
    if i < len(text) and text[i] == "]":
        return i + 1
    while True:
        end = _raw_value(text, i)
        if end is None:
            return None
        out.append(text[i:end])
        i = _skip_ws_s(text, end)
        if i >= len(text):
            return None
        if text[i] == "]":
            return i + 1
        if text[i] != ",":
            raise ValueError("not a cut trace at %d" % i)
        i = _skip_ws_s(text, i + 1)


def _skip_ws_s(s, i):
    while i < len(s) and s[i] in " \t\r\n":
        i += 1
    return i


def salvage(data):
    """(well-formed equivalent trace as bytes, number of complete events) of a
    possibly cut Kineto trace (plain bytes). The equivalent keeps the raw text
    of every complete top-level member and every complete event."""
    text = data.decode("utf-8", errors="surrogateescape")
    i = _skip_ws_s(text, 0)
    events = []
    if text[i] == "[":
        _array(text, i, events)
        return ("[\n" + ",\n".join(events) + "\n]\n").encode("utf-8", errors="surrogateescape"), len(events)
    members = []
    i = _skip_ws_s(text, i + 1)
    while i < len(text) and text[i] != "}":
        kend = _raw_value(text, i)
        if kend is None:
            break
        key = json.loads(text[i:kend])
        j = _skip_ws_s(text, kend)
        if j >= len(text) or text[j] != ":":
            break
        j = _skip_ws_s(text, j + 1)
        if key == "traceEvents":
            end = _array(text, j, events)
            members.append('"traceEvents": [\n' + ",\n".join(events) + "\n]")
            if end is None:
                break
        else:
            end = _raw_value(text, j)
            if end is None:
                break
            members.append(text[i:kend] + ": " + text[j:end])
        i = _skip_ws_s(text, end)
        if i < len(text) and text[i] == ",":
            i = _skip_ws_s(text, i + 1)
    out = "{\n" + ",\n".join(members) + "\n}\n"
    return out.encode("utf-8", errors="surrogateescape"), len(events)


def gunzip_prefix(data):
    """What a gzip stream decodes to before it ends or breaks."""
    d = zlib.decompressobj(16 + 15)
    try:
        return d.decompress(data)
    except zlib.error:
        return b""


def unzstd_prefix(data):
    p = subprocess.run(["zstd", "-d", "-c", "-q"], input=data, capture_output=True)
    return p.stdout


def decompressed_prefix(data):
    if data[:2] == b"\x1f\x8b":
        return gunzip_prefix(data)
    if data[:4] == b"\x28\xb5\x2f\xfd":
        return unzstd_prefix(data)
    return data


def oracle_table(path, *args):
    """The Python oracle's table for a trace file (None if it fails)."""
    p = subprocess.run([sys.executable, os.path.join(SRC, "tests", "oracle", "key_averages.py"), path,
                        "--row-limit", "-1"] + list(args), capture_output=True)
    return p.stdout if p.returncode == 0 else None
