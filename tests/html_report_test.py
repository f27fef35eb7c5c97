"""The HTML pages in a real browser: tpusim writes run.html (one chip and a
slice) and plan.html, and Debian's headless Chromium loads each offline. The
test reads the rendered DOM over the DevTools protocol and checks it against
the JSON reports: no console error, no request but the page's own file, the
roofline's points are the report's ops, the plan chart's points its
candidates, the HBM peak marker the JSON's peak. A screenshot of each page
goes into the working directory for a person to look at.

Run as: python3 tests/html_report_test.py TPUSIM_BINARY EXAMPLES_DIR
        [--screenshots DIR]  (DIR: where the docs' screenshots are written)
"""

import base64
import fcntl
import json
import os
import re
import select
import shutil
import subprocess
import sys

CHROMIUM = os.environ.get("TPUSIM_CHROMIUM", "/usr/bin/chromium")
# A guard against a browser that hangs, not a measure of speed.
HANG_SECONDS = 300
# The docs' screenshots, smaller: a few hundred KB each.
DOCS_SCALE = 0.6


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


class Browser:
    """Headless Chromium driven over --remote-debugging-pipe (fds 3 and 4:
    NUL-terminated JSON messages), one page at a time."""

    def __init__(self, workdir):
        to_browser_r, self._to_browser = os.pipe()
        self._from_browser, from_browser_w = os.pipe()

        def child_fds():
            # Above 4 first, so that neither dup2 clobbers the other's source.
            r = fcntl.fcntl(to_browser_r, fcntl.F_DUPFD, 10)
            w = fcntl.fcntl(from_browser_w, fcntl.F_DUPFD, 10)
            os.dup2(r, 3)
            os.dup2(w, 4)

        args = [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
                "--no-first-run", "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
                "--user-data-dir=" + os.path.join(workdir, "chromium-profile"),
                "--remote-debugging-pipe", "about:blank"]
        self._log = open(os.path.join(workdir, "chromium.log"), "w")
        self._proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=self._log,
                                      stderr=self._log, close_fds=False, preexec_fn=child_fds)
        os.close(to_browser_r)
        os.close(from_browser_w)
        self._buffer = b""
        self._next_id = 0
        self.events = []
        targets = self.call("Target.getTargets")["targetInfos"]
        page = next(t for t in targets if t["type"] == "page")
        self._session = self.call("Target.attachToTarget", targetId=page["targetId"],
                                  flatten=True)["sessionId"]
        for domain in ("Page", "Runtime", "Log", "Network"):
            self.call(domain + ".enable", session=True)
        self.call("Emulation.setDeviceMetricsOverride", session=True, width=1400, height=2000,
                  deviceScaleFactor=1, mobile=False)

    def _read(self):
        while b"\0" not in self._buffer:
            ready, _, _ = select.select([self._from_browser], [], [], HANG_SECONDS)
            if not ready:
                fail("chromium did not answer in %d s" % HANG_SECONDS)
            chunk = os.read(self._from_browser, 1 << 20)
            if not chunk:
                fail("chromium exited (its log: chromium.log)")
            self._buffer += chunk
        message, self._buffer = self._buffer.split(b"\0", 1)
        return json.loads(message)

    def call(self, method, session=False, **params):
        self._next_id += 1
        message = {"id": self._next_id, "method": method, "params": params}
        if session:
            message["sessionId"] = self._session
        os.write(self._to_browser, json.dumps(message).encode() + b"\0")
        while True:
            reply = self._read()
            if reply.get("id") == self._next_id:
                if "error" in reply:
                    fail("%s: %s" % (method, reply["error"]))
                return reply.get("result", {})
            self.events.append(reply)

    def wait_for(self, method):
        while True:
            event = self._read()
            self.events.append(event)
            if event.get("method") == method:
                return event

    def load(self, path):
        """Opens `path`; returns what went wrong: console errors, exceptions
        and requests for anything but the file itself."""
        self.events = []
        url = "file://" + os.path.abspath(path)
        self.call("Page.navigate", session=True, url=url)
        self.wait_for("Page.loadEventFired")
        # A round trip after the load: events the page raised while loading
        # arrive before its answer.
        self.evaluate("1")
        problems = []
        for e in self.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                problems.append("exception: " + json.dumps(p["exceptionDetails"])[:400])
            elif m == "Runtime.consoleAPICalled" and p["type"] in ("error", "warning", "assert"):
                problems.append("console %s: %s" % (p["type"], json.dumps(p["args"])[:400]))
            elif m == "Log.entryAdded" and p["entry"]["level"] in ("error", "warning"):
                problems.append("log: " + p["entry"]["text"][:400])
            elif m == "Network.requestWillBeSent" and p["request"]["url"] != url:
                problems.append("request: " + p["request"]["url"][:200])
        return problems

    def evaluate(self, expression):
        result = self.call("Runtime.evaluate", session=True, expression=expression,
                           returnByValue=True)
        if "exceptionDetails" in result:
            fail("evaluating %s: %s" % (expression, result["exceptionDetails"]))
        return result["result"].get("value")

    def screenshot(self, path, scale=1.0):
        """The page's top 1400x2000 pixels, scaled by `scale`, as PNG."""
        clip = {"x": 0, "y": 0, "width": 1400, "height": 2000, "scale": scale}
        shot = self.call("Page.captureScreenshot", session=True, format="png", clip=clip)
        with open(path, "wb") as f:
            f.write(base64.b64decode(shot["data"]))

    def close(self):
        try:
            self.call("Browser.close")
        except SystemExit:
            pass
        self._proc.wait()
        self._log.close()


def tpusim(binary, *args):
    done = subprocess.run([binary, *args], capture_output=True, text=True)
    if done.returncode != 0:
        fail("tpusim %s: %s" % (" ".join(args), done.stderr.strip()))


def check_static(path):
    """The file holds no URL and stays within a few MB."""
    text = open(path, encoding="utf-8").read()
    urls = re.findall(r"(?:https?:|ftp:|//[a-z0-9.-]+\.[a-z]{2,}/)[^\s\"'<>]*", text)
    if urls:
        fail("%s names URLs: %s" % (path, urls[:5]))
    if len(text) > 5_000_000:
        fail("%s is %d bytes" % (path, len(text)))


def check_run(browser, html, report_json, shot, docs_shot=None):
    check_static(html)
    problems = browser.load(html)
    if problems:
        fail("%s in the browser:\n  %s" % (html, "\n  ".join(problems)))
    report = json.load(open(report_json))
    dom = browser.evaluate("""JSON.stringify({
        points: document.querySelectorAll('#roofline-points circle').length,
        rows: document.querySelectorAll('#op-table tbody tr.data').length,
        peak: (document.getElementById('hbm-peak') || {getAttribute: () => null})
                  .getAttribute('data-bytes'),
        links: document.querySelectorAll('#link-heatmap rect.link').length,
        spans: document.querySelectorAll('#timeline-chart rect').length})""")
    dom = json.loads(dom)
    ops = len(report["ops"])
    if dom["points"] != ops:
        fail("%s: %d roofline points for %d ops" % (html, dom["points"], ops))
    if dom["rows"] != min(ops, 500):
        fail("%s: %d table rows for %d ops" % (html, dom["rows"], ops))
    if dom["peak"] is None or int(dom["peak"]) != report["memory"]["peak_bytes"]:
        fail("%s: peak marker %s, the JSON report's peak %d" %
             (html, dom["peak"], report["memory"]["peak_bytes"]))
    if "slice" in report and dom["links"] != len(report["slice"]["links"]):
        fail("%s: %d link cells for %d links" % (html, dom["links"], len(report["slice"]["links"])))
    if dom["spans"] == 0:
        fail("%s: an empty timeline" % html)
    browser.screenshot(shot)
    if docs_shot:
        browser.screenshot(docs_shot, DOCS_SCALE)
        print("wrote " + docs_shot)
    print("ok %s: %d ops, peak %s bytes; screenshot %s" % (html, ops, dom["peak"],
                                                           os.path.abspath(shot)))


def check_plan(browser, html, plan_json, shot, docs_shot=None):
    check_static(html)
    problems = browser.load(html)
    if problems:
        fail("%s in the browser:\n  %s" % (html, "\n  ".join(problems)))
    plan = json.load(open(plan_json))
    dom = json.loads(browser.evaluate("""JSON.stringify({
        points: document.querySelectorAll('#plan-points circle').length,
        best: document.querySelectorAll('#plan-best').length,
        rejected: document.querySelectorAll('#rejected-table tr').length - 1})"""))
    candidates = plan["candidates"]
    if dom["points"] != len(candidates):
        fail("%s: %d points for %d candidates" % (html, dom["points"], len(candidates)))
    rejected = sum(1 for c in candidates if not c["fits"])
    if rejected and dom["rejected"] != rejected:
        fail("%s: %d rejected rows for %d rejected" % (html, dom["rejected"], rejected))
    if dom["best"] != (1 if candidates and candidates[0]["fits"] else 0):
        fail("%s: %d best markers" % (html, dom["best"]))
    browser.screenshot(shot)
    if docs_shot:
        browser.screenshot(docs_shot, DOCS_SCALE)
        print("wrote " + docs_shot)
    print("ok %s: %d candidates (%d rejected); screenshot %s" %
          (html, len(candidates), rejected, os.path.abspath(shot)))


def main():
    args = [a for a in sys.argv[1:] if not a.startswith("--screenshots")]
    binary = os.path.abspath(args[0] if args else "build/tpusim")
    examples = os.path.abspath(args[1] if len(args) > 1 else "examples")
    shots = None
    for a in sys.argv[1:]:
        if a.startswith("--screenshots="):
            shots = os.path.abspath(a.split("=", 1)[1])
            os.makedirs(shots, exist_ok=True)
    if not os.access(CHROMIUM, os.X_OK):
        fail("%s is missing: the HTML pages are tested in Debian's chromium "
             "(scripts/install-deps.sh installs it)" % CHROMIUM)
    # In the working directory (ctest's: build/tests), for a person to open.
    workdir = os.path.abspath("html_report_test_output")
    shutil.rmtree(workdir, ignore_errors=True)
    os.makedirs(workdir)
    os.chdir(workdir)
    # Copied in, so that the pages' source locations read "step.mlir:7:5".
    shutil.copy(os.path.join(examples, "mlp_step.mlir"), "step.mlir")
    shutil.copy(os.path.join(examples, "tensor_parallel_mlp.mlir"), "tp.mlir")
    tpusim(binary, "run", "step.mlir", "--timing-only", "--report-json", "run.json",
           "--report-html", "run.html")
    tpusim(binary, "run", "tp.mlir", "--slice", "v5p-16", "--timing-only", "--report-json",
           "slice.json", "--report-html", "slice.html")
    tpusim(binary, "plan", "--model", "llama3-8b", "--slices", "v5e-8,v6e-8", "--global-batch",
           "16", "--seq", "2048", "--max-tensor", "4", "--json", "plan.json", "--html", "plan.html")
    browser = Browser(workdir)
    try:
        docs = (lambda name: os.path.join(shots, name)) if shots else (lambda name: None)
        check_run(browser, "run.html", "run.json", "run.png", docs("report-run.png"))
        check_run(browser, "slice.html", "slice.json", "slice.png")
        check_plan(browser, "plan.html", "plan.json", "plan.png", docs("report-plan.png"))
    finally:
        browser.close()
    shutil.rmtree(os.path.join(workdir, "chromium-profile"), ignore_errors=True)
    print("ok: the pages and screenshots are in " + workdir)


if __name__ == "__main__":
    main()
