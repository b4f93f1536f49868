#!/usr/bin/env python3
"""The HTML pages in a real browser: every golden page (tests/golden/cases/
html-*/expected.out, `neuron-stats html` and `diff --format html`) is opened
from disk (file://) in headless Chromium, driven through the DevTools
protocol, and must

  * render (the script sets <body data-ready>) with no exception and no
    console error;
  * show its key_averages (or diff) table in the order the page promises:
    the expected order is computed here from the page's embedded JSON, not
    from the page's script;
  * re-sort when a column header is clicked (descending, again: ascending;
    text columns A-Z first) and show only the matching rows when a filter is
    typed into the filter box (case-insensitive substring of the name);
  * and leave a full-page screenshot, BUILD/tests/browser/NAME.png (a test
    artifact; docs/img/ holds those of the RMSNorm captures).

Exit 77 (skipped) only when no Chromium is installed; .ci/run installs it.
Usage: test_html.py SRC_ROOT OUT_DIR [CASE...]
"""
import base64
import glob
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time

DATA_RE = re.compile(r'<script id="ns-data" type="application/json">\n(.*?)\n</script>', re.S)
TEXT_KINDS = {"text"}


def chromium_binary():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


class WebSocket:
    """The client side of RFC 6455, as much as DevTools needs: text
    messages, masked frames out, fragments and pings in (no dependency)."""

    def __init__(self, port, path):
        self.sock = socket.create_connection(("127.0.0.1", int(port)), timeout=60)
        key = base64.b64encode(os.urandom(16)).decode()
        self.sock.sendall(("GET %s HTTP/1.1\r\nHost: 127.0.0.1:%s\r\nUpgrade: websocket\r\n"
                           "Connection: Upgrade\r\nSec-WebSocket-Key: %s\r\nSec-WebSocket-Version: 13\r\n\r\n"
                           % (path, port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            chunk = self.sock.recv(4096)
            if not chunk:
                raise RuntimeError("DevTools closed the connection during the handshake")
            head += chunk
        head, self.buf = head.split(b"\r\n\r\n", 1)
        if b" 101 " not in head.split(b"\r\n")[0]:
            raise RuntimeError("DevTools refused the WebSocket: %r" % head[:200])

    def _read(self, n):
        while len(self.buf) < n:
            chunk = self.sock.recv(1 << 20)
            if not chunk:
                raise RuntimeError("DevTools closed the connection")
            self.buf += chunk
        out, self.buf = self.buf[:n], self.buf[n:]
        return out

    def _frame(self, opcode, payload):
        head = bytes([0x80 | opcode])
        n = len(payload)
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 1 << 16:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.sock.sendall(head + mask + bytes(b ^ mask[i % 4] for i, b in enumerate(payload)))

    def send(self, text):
        self._frame(0x1, text.encode())

    def recv(self):
        message = b""
        while True:
            b0, b1 = self._read(2)
            n = b1 & 0x7F
            if n == 126:
                n = struct.unpack(">H", self._read(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._read(8))[0]
            payload = self._read(n)  # (a server's frames are not masked)
            opcode = b0 & 0x0F
            if opcode == 0x9:
                self._frame(0xA, payload)
                continue
            if opcode == 0x8:
                raise RuntimeError("DevTools closed the connection")
            message += payload
            if b0 & 0x80:
                return message.decode()

    def close(self):
        self.sock.close()


class Browser:
    """One headless Chromium, one page, over the browser's DevTools socket
    (flat sessions: every command names the page's session)."""

    def __init__(self, binary, profile):
        self.proc = subprocess.Popen(
            [binary, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--no-default-browser-check", "--disable-extensions", "--user-data-dir=" + profile,
             "--remote-debugging-port=0", "--window-size=1400,1000", "about:blank"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
            start_new_session=True)  # (its helper processes in one group: close stops them all)
        port_file = os.path.join(profile, "DevToolsActivePort")
        deadline = time.time() + 30
        while not (os.path.exists(port_file) and len(open(port_file).read().split("\n")) >= 2):
            if time.time() > deadline or self.proc.poll() is not None:
                raise RuntimeError("Chromium did not start (no %s)" % port_file)
            time.sleep(0.1)
        port, path = open(port_file).read().split("\n")[:2]
        self.ws = WebSocket(port, path)
        self.next_id = 0
        self.events = []
        target = self.call("Target.createTarget", {"url": "about:blank"})["targetId"]
        self.session = self.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
        for domain in ("Page", "Runtime", "Log"):
            self.call(domain + ".enable", session=True)

    def call(self, method, params=None, session=False):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = self.session
        self.ws.send(json.dumps(msg))
        while True:
            reply = json.loads(self.ws.recv())
            if reply.get("id") == self.next_id:
                if "error" in reply:
                    raise RuntimeError("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def page(self, method, params=None):
        return self.call(method, params, session=True)

    def js(self, expr):
        r = self.page("Runtime.evaluate", {"expression": expr, "returnByValue": True, "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def errors(self):
        """The console errors and exceptions seen so far (and forgets them)."""
        out = []
        for ev in self.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                out.append("exception: %s" % p["exceptionDetails"].get("exception", {}).get("description",
                                                                                           p["exceptionDetails"]))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.%s: %s" % (p["type"], [a.get("value") for a in p.get("args", [])]))
            elif m == "Log.entryAdded" and p["entry"].get("level") == "error":
                out.append("log: %s" % p["entry"].get("text"))
        self.events = []
        return out

    def close(self):
        """Stops Chromium and its helper processes, which otherwise may
        still write into the profile while it is removed (a CI run failed
        on "Directory not empty: 'Default'")."""
        try:
            self.ws.close()
        finally:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(10)
            except subprocess.TimeoutExpired:
                pass
            try:
                os.killpg(self.proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            self.proc.wait()


# ---- what the page must show, from its data ----

def table_rows(data):
    """The rows of the page's first table (trace 0, or the diff's rows) as
    the page flattens them, and the order it opens in (indexes)."""
    if data.get("schema", "").startswith("neuron-stats-diff/"):
        flat = []
        for r in data["rows"]:
            o = {"name": r["name"], "verdict": r["verdict"], "calls.base": (r.get("calls") or {}).get("base"),
                 "calls.new": (r.get("calls") or {}).get("new")}
            for m in ("self_device", "self_cpu"):
                v = r.get(m) or {}
                o[m + ".base"], o[m + ".new"] = v.get("base_us"), v.get("new_us")
                o[m + ".pct"] = v.get("change_pct") if isinstance(v.get("change_pct"), (int, float)) else None
                o[m + ".p"] = (v.get("steps") or {}).get("p")
            flat.append(o)
        return flat, list(range(len(flat)))
    trace = data["traces"][0]
    rows = trace["rows"]
    key = "self_device_us" if trace.get("self_device_time_total_us", 0) > 0 else "self_cpu_us"
    return rows, sort_order(rows, key, False, -1)


def sort_order(rows, key, text, direction):
    """The page's sort: by key (text: as strings; else numbers, a missing
    value as 0), direction 1 up or -1 down, ties in first-seen order."""
    def value(i):
        v = rows[i].get(key)
        if text:
            return str(v or "")
        return v or 0
    idx = list(range(len(rows)))
    if text:  # (a stable sort keeps ties in first-seen order, reversed or not)
        return sorted(idx, key=value, reverse=direction < 0)
    return sorted(idx, key=lambda i: (direction * value(i), i))


def dom_order(b):
    return b.js("Array.from(document.querySelectorAll('#t0-body tr')).map(function (tr) {"
                " return +tr.getAttribute('data-row'); })")


def check_sorting(b, rows, kinds, name):
    """Clicks two columns (a number, twice; then the name) and compares."""
    problems = []
    numeric = [k for k, kind in kinds if kind not in TEXT_KINDS and k != "name"]
    clicks = []
    if numeric:
        col = "calls" if "calls" in numeric else numeric[-1]
        clicks += [(col, False, -1), (col, False, 1)]
    clicks.append(("name", True, 1))
    for key, text, direction in clicks:
        b.js("document.querySelector('#t0-table th[data-key=\"%s\"]').click()" % key)
        want, got = sort_order(rows, key, text, direction), dom_order(b)
        if got != want:
            problems.append("%s: after a click on %s (%s): rows %s, expected %s" %
                            (name, key, "up" if direction > 0 else "down", got[:12], want[:12]))
    return problems


def filter_word(rows):
    names = [str(r.get("name", "")) for r in rows]
    for word in ("aten", "neuron_graph", "script"):
        n = sum(word in x.lower() for x in names)
        if 0 < n < len(names):
            return word.upper()  # (typed upper-case: the filter ignores case)
    return names[-1][:3] if names else "x"


def check_filter(b, rows, name):
    word = filter_word(rows)
    before = dom_order(b)  # the current sort stays
    b.js("document.getElementById('t0-filter').focus()")
    b.page("Input.insertText", {"text": word})
    want = [i for i in before if word.lower() in str(rows[i].get("name", "")).lower()]
    got = dom_order(b)
    count = b.js("document.getElementById('t0-count').textContent")
    problems = []
    if got != want:
        problems.append("%s: filter %r: rows %s, expected %s" % (name, word, got[:12], want[:12]))
    if count != "%d of %d rows" % (len(want), len(rows)):
        problems.append("%s: filter %r: count %r" % (name, word, count))
    b.js("var i = document.getElementById('t0-filter'); i.select()")
    b.page("Input.dispatchKeyEvent", {"type": "keyDown", "key": "Backspace", "code": "Backspace",
                                      "windowsVirtualKeyCode": 8})
    b.page("Input.dispatchKeyEvent", {"type": "keyUp", "key": "Backspace", "code": "Backspace",
                                      "windowsVirtualKeyCode": 8})
    if dom_order(b) != before:
        problems.append("%s: clearing the filter did not bring the rows back" % name)
    return problems


def screenshot(b, path):
    height = min(12000, int(b.js("document.documentElement.scrollHeight")))
    b.page("Emulation.setDeviceMetricsOverride", {"width": 1400, "height": height, "deviceScaleFactor": 1,
                                                  "mobile": False})
    # at 0.6 scale: small files (docs/img/ keeps three), still readable
    png = b.page("Page.captureScreenshot", {"format": "png", "captureBeyondViewport": True,
                                            "clip": {"x": 0, "y": 0, "width": 1400, "height": height,
                                                     "scale": 0.6}})["data"]
    with open(path, "wb") as f:
        f.write(base64.b64decode(png))
    b.page("Emulation.clearDeviceMetricsOverride")


def load(b, url):
    b.page("Page.navigate", {"url": url})
    deadline = time.time() + 30
    while b.js("document.readyState + '/' + (document.body && document.body.getAttribute('data-ready'))") != "complete/true":
        if time.time() > deadline:
            raise RuntimeError("%s: not rendered in 30 s (no <body data-ready>)" % url)
        time.sleep(0.05)


def check_page(b, case, html_path, out_dir):
    with open(html_path, encoding="utf-8") as f:
        text = f.read()
    data = json.loads(DATA_RE.search(text).group(1))
    load(b, "file://" + html_path)
    problems = ["%s: %s" % (case, e) for e in b.errors()]
    screenshot(b, os.path.join(out_dir, case + ".png"))
    rows, opening = table_rows(data)
    kinds = b.js("Array.from(document.querySelectorAll('#t0-table thead th')).map(function (th) {"
                 " return th.getAttribute('data-key'); })")
    columns = {c["key"]: c["kind"] for c in data["traces"][0]["columns"]} if "traces" in data else {}
    kinds = [(k, columns.get(k, "text" if k in ("name", "verdict") else "count")) for k in kinds]
    if dom_order(b) != opening:
        problems.append("%s: opens with rows %s, expected %s" % (case, dom_order(b)[:12], opening[:12]))
    if "traces" in data:
        n_ranked = sum(1 for t in data["traces"] if t["steps"])
        if (len(data["traces"]) > 1 and n_ranked > 0) != b.js("!!document.getElementById('heatmap')"):
            problems.append("%s: the rank x step heat map is missing or extra" % case)
    if not b.js("document.querySelectorAll('svg').length"):
        problems.append("%s: no chart" % case)
    # a name is text in the DOM, never markup (html-markup-in-names)
    if b.js("document.scripts.length") != 2:
        problems.append("%s: %d script elements, expected 2" % (case, b.js("document.scripts.length")))
    problems += check_sorting(b, rows, kinds, case)
    problems += check_filter(b, rows, case)
    problems += ["%s: %s" % (case, e) for e in b.errors()]
    return problems


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    src, out_dir = sys.argv[1], sys.argv[2]
    binary = chromium_binary()
    if not binary:
        print("skipped: no chromium installed (.ci/run installs Debian's chromium)")
        return 77
    os.makedirs(out_dir, exist_ok=True)
    cases = sys.argv[3:] or sorted(os.path.basename(os.path.dirname(p)) for p in
                                   glob.glob(os.path.join(src, "tests/golden/cases/html-*/expected.out")))
    problems, checked = [], 0
    with tempfile.TemporaryDirectory() as tmp:
        b = Browser(binary, os.path.join(tmp, "profile"))
        try:
            for case in cases:
                golden = os.path.join(src, "tests/golden/cases", case, "expected.out")
                if os.path.getsize(golden) == 0:
                    continue  # (an error case: no page)
                page = os.path.join(out_dir, case + ".html")  # (a .html name: file:// shows it as a page)
                shutil.copyfile(golden, page)
                problems += check_page(b, case, os.path.abspath(page), out_dir)
                checked += 1
        finally:
            b.close()
    for p in problems:
        print("FAIL", p)
    print("%d pages checked in %s, %d problems; screenshots in %s" % (checked, binary, len(problems), out_dir))
    return 1 if problems or not checked else 0


if __name__ == "__main__":
    sys.exit(main())
