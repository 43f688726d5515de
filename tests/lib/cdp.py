#!/usr/bin/env python3
# cdp.py - drives headless Chromium over the DevTools protocol with real input events, for tests/html.t.
#
# Usage: cdp.py PAGE.html STEPS.json
# STEPS is a JSON list; each step is one of
#   {"click": CSS}          a real mouse click (Input.dispatchMouseEvent) at the centre of
#                           the first element CSS matches, after scrolling it into view
#   {"click": CSS, "dx": F} the same at fraction F of its width from its left edge
#   {"clickat": JS}         a real mouse click at the viewport point [x, y] that the
#                           JavaScript expression JS gives (null: the step fails)
#   {"key": KEY}            a real key press (Input.dispatchKeyEvent) to the focused element
#   {"eval": JS}            the value of a JavaScript expression
#   {"shot": PNG}           a screenshot of the whole page
# It prints one JSON object: {"results": [...one per step, {"step_error": WHY} for a step
# that failed...], "errors": [...uncaught
# exceptions and console errors...], "requests": [...every URL the page asked for...]}.
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
import urllib.request

import websocket

KEYS = {"ArrowDown": 40, "ArrowUp": 38, "Enter": 13, "Escape": 27, "Home": 36, "End": 35}


class Page:
    def __init__(self, ws):
        self.ws, self.next_id, self.events = ws, 0, []

    def call(self, method, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError("%s: %s" % (method, msg["error"]))
                return msg.get("result", {})
            self.events.append(msg)

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr, returnByValue=True, awaitPromise=True)
        if "exceptionDetails" in r:
            raise RuntimeError("eval %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def settle(self):
        # Two animation frames: the page has handled the event and drawn.
        self.eval("new Promise(r => requestAnimationFrame(() => requestAnimationFrame(() => r(1))))")

    def press(self, x, y):
        self.call("Input.dispatchMouseEvent", type="mouseMoved", x=x, y=y)
        for kind in ("mousePressed", "mouseReleased"):
            self.call("Input.dispatchMouseEvent", type=kind, x=x, y=y, button="left", clickCount=1)
        self.settle()
        return [round(x), round(y)]

    def click_at(self, expr):
        xy = self.eval(expr)
        if not xy:
            raise RuntimeError("no point to click: " + expr)
        return self.press(xy[0], xy[1])

    def click(self, css, dx=0.5):
        box = self.eval("(() => { const e = document.querySelector(%s); if (!e) return null;"
                        " e.scrollIntoView({block: 'center'}); const r = e.getBoundingClientRect();"
                        " return [r.left, r.top, r.width, r.height]; })()" % json.dumps(css))
        if not box:
            raise RuntimeError("no element matches " + css)
        return self.press(box[0] + box[2] * dx, box[1] + box[3] / 2)

    def key(self, name):
        code = KEYS[name]
        for kind in ("rawKeyDown", "keyUp"):
            self.call("Input.dispatchKeyEvent", type=kind, key=name, code=name,
                      windowsVirtualKeyCode=code, nativeVirtualKeyCode=code)
        self.settle()
        return name

    def shot(self, path):
        r = self.call("Page.captureScreenshot", format="png", captureBeyondViewport=True)
        with open(path, "wb") as f:
            f.write(base64.b64decode(r["data"]))
        return path


def launch(page_path, profile):
    cmd = [os.environ.get("JT_CHROMIUM", "chromium"), "--headless=new", "--no-sandbox",
           "--disable-gpu", "--no-first-run", "--remote-debugging-port=0",
           "--window-size=1400,1000", "--user-data-dir=" + profile, "about:blank"]
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    for line in proc.stderr:
        m = re.search(r"DevTools listening on ws://[^:]+:(\d+)/", line)
        if m:
            # Whatever Chromium says later must not fill the pipe and stop it.
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return proc, int(m.group(1))
    raise RuntimeError("chromium gave no DevTools address")


def run_step(page, st):
    if "click" in st:
        return page.click(st["click"], st.get("dx", 0.5))
    if "clickat" in st:
        return page.click_at(st["clickat"])
    if "key" in st:
        return page.key(st["key"])
    if "eval" in st:
        return page.eval(st["eval"])
    return page.shot(st["shot"])


def main():
    page_path, steps = os.path.abspath(sys.argv[1]), json.load(open(sys.argv[2]))
    profile = tempfile.mkdtemp(prefix="jt-cdp-")
    proc, port = launch(page_path, profile)
    try:
        targets = json.load(urllib.request.urlopen("http://127.0.0.1:%d/json" % port))
        url = [t for t in targets if t["type"] == "page"][0]["webSocketDebuggerUrl"]
        page = Page(websocket.create_connection(url, timeout=60))
        for domain in ("Page", "Runtime", "Network", "Log"):
            page.call(domain + ".enable")
        page.call("Emulation.setDeviceMetricsOverride", width=1400, height=1000, deviceScaleFactor=1, mobile=False)
        page.call("Page.navigate", url="file://" + page_path)
        while page.eval("document.readyState") != "complete":
            time.sleep(0.05)
        page.settle()
        results = []
        for st in steps:
            try:
                results.append(run_step(page, st))
            except Exception as e:  # the step's answer says why; the later steps still run
                results.append({"step_error": str(e)[:300]})
        page.settle()
        errors, requests = [], []
        for ev in page.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                errors.append(p["exceptionDetails"].get("exception", {}).get("description") or p["exceptionDetails"]["text"])
            elif m == "Runtime.consoleAPICalled" and p.get("type") == "error":
                errors.append(" ".join(str(a.get("value")) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                errors.append(p["entry"]["text"])
            elif m == "Network.requestWillBeSent":
                requests.append(p["request"]["url"])
        print(json.dumps({"results": results, "errors": errors, "requests": requests}))
    finally:
        proc.terminate()
        proc.wait()
        shutil.rmtree(profile, ignore_errors=True)


main()
