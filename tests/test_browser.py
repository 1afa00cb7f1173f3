"""A real browser opens the built site: no console errors, every image loads, axe-core finds no
serious or critical accessibility violation at desktop and phone widths, and no page is wider than
a 390 px phone screen.

Debian's headless Chromium driven by chromedriver over the W3C WebDriver protocol, which is plain
JSON over HTTP, so the test needs no Python package beyond the standard library. The site is
built (tests/sitebuild.py) with an empty `url`, so the links and images that absolute_url makes
absolute for the feed are root-relative here and load from whichever port serves the build:
one build for this module and tests/test_phone_layout.py, in whichever workers they run, each
serving it with http.server on 127.0.0.1. The runs' raw files are left out of it (the pages
link them; no test here follows those links: tests/test_site.py does).

axe-core comes from npm (package.json, `npm ci`, run by `make test`); its tests fail in CI and
skip elsewhere when node_modules/axe-core is missing.

Set LOADCURVE_SCREENSHOTS=<folder> to keep a full-height screenshot of each page.
"""
from __future__ import annotations

import base64
import functools
import json
import os
import shutil
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from tests.conftest import need
from tests.sitebuild import REPO, shared_build

pytestmark = pytest.mark.browser

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMEDRIVER = os.environ.get("CHROMEDRIVER", shutil.which("chromedriver") or "/usr/bin/chromedriver")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--window-size=1280,900"]
PAGES = {"home": "/", "post": "/2026/11/22/thread-pool-vs-virtual-threads/",
         "report": "/reports/pool-vs-virtual/", "runs": "/reports/", "tags": "/tags/",
         "fixture-post": "/2026/01/03/injection-fixture/", "fixture-report": "/reports/injection/",
         "comparison": "/comparisons/pool-vs-virtual/",
         "jmh-report": "/reports/jmh-actors-streams/",
         "jmh-post": "/2026/11/24/actors-and-streams-with-jmh/",
         # a run with scenarios (issue 11): its report, a page per scenario, a post on it
         "scenarios-report": "/reports/scenarios-demo/",
         "scenario-sleep": "/reports/scenarios-demo/sleep/",
         "scenario-cpu": "/reports/scenarios-demo/cpu/",
         "scenario-json": "/reports/scenarios-demo/json/",
         "scenarios-post": "/2026/01/04/scenarios-fixture/",
         # the real run with scenarios (runs/many-servers) and its post
         "servers-report": "/reports/many-servers/",
         "servers-post": "/2026/11/24/seven-jvm-http-servers/",
         **{f"servers-{s}": f"/reports/many-servers/{s}/"
            for s in ("sleep", "cpu", "json", "fanout-futures", "fanout-pekko")},
         # a run read from two load tools' files (issue 23) and its post
         "tools-report": "/reports/vegeta-vs-hey/",
         "tools-post": "/2026/11/26/what-a-closed-loop-hides-at-the-knee/",
         # the fan-out scenarios across a load curve, JFR in every repetition (issue 25)
         "fanout-report": "/reports/fanout-curve/",
         "fanout-post": "/2026/11/27/fan-out-under-load-futures-vs-pekko-streams/",
         # a server none of the bundled targets are, measured by URL with its JFR (issue 24)
         "url-report": "/reports/wiremock-by-url/",
         **{f"fanout-{s}": f"/reports/fanout-curve/{s}/" for s in ("fanout-futures", "fanout-pekko")},
         # two generator processes per cell, merged, with the per-generator table (issue 33)
         "generators-report": "/reports/two-generators/",
         # the first fan-out recording, kept for its start-up backlog (issue 32)
         "startup-report": "/reports/fanout-startup/",
         **{f"startup-{s}": f"/reports/fanout-startup/{s}/"
            for s in ("fanout-futures", "fanout-pekko")}}
AXE = REPO / "node_modules" / "axe-core" / "axe.min.js"
# Desktop, and a phone (iPhone 12-15 class, CSS px).
WIDTHS = {"desktop": 1280, "phone": 390}


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class QuietHandler(SimpleHTTPRequestHandler):
    def log_message(self, *args):  # the test reports failures itself
        pass


class ServedSite(str):
    """The base URL of the served site (a str), with the built folder as `.site`."""

    def __new__(cls, url: str, site: Path):
        obj = super().__new__(cls, url)
        obj.site = site
        return obj


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    site = shared_build(tmp_path_factory, "browser-site", 'url: ""\n', raw_runs=False)
    httpd = ThreadingHTTPServer(("127.0.0.1", 0),
                                functools.partial(QuietHandler, directory=str(site)))
    port = httpd.server_address[1]
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield ServedSite(f"http://127.0.0.1:{port}", site)
    httpd.shutdown()
    httpd.server_close()


class WebDriver:
    """The few WebDriver commands the test needs."""

    def __init__(self, base: str):
        self.base = base
        self.session = None

    def call(self, method: str, path: str, body: dict | None = None):
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method,
                                     headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(req, timeout=60) as resp:
                return json.load(resp)["value"]
        except urllib.error.HTTPError as exc:
            raise AssertionError(f"WebDriver {method} {path}: {exc.read().decode()[:500]}") from None

    def start(self, user_data_dir: Path):
        caps = {"browserName": "chrome",
                "goog:chromeOptions": {"binary": CHROMIUM,
                                       "args": FLAGS + [f"--user-data-dir={user_data_dir}"]},
                "goog:loggingPrefs": {"browser": "ALL"}}
        self.session = self.call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})["sessionId"]

    def s(self, method: str, path: str, body: dict | None = None):
        return self.call(method, f"/session/{self.session}{path}", body)

    def script(self, source: str):
        return self.s("POST", "/execute/sync", {"script": source, "args": []})


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    need(Path(CHROMIUM).exists() and bool(CHROMEDRIVER) and Path(CHROMEDRIVER).exists(),
         f"{CHROMIUM} and chromedriver (apt-get install chromium chromium-driver)")
    port = free_port()
    proc = subprocess.Popen([CHROMEDRIVER, f"--port={port}"], stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)
    driver = WebDriver(f"http://127.0.0.1:{port}")
    try:
        for _ in range(100):  # chromedriver listens within a second or so
            try:
                if driver.call("GET", "/status").get("ready"):
                    break
            except (OSError, AssertionError):
                time.sleep(0.1)
        driver.start(tmp_path_factory.mktemp("chromium-profile"))
        yield driver
    finally:
        if driver.session:
            try:
                driver.s("DELETE", "")
            except (OSError, AssertionError):
                pass
        proc.terminate()
        proc.wait(timeout=30)


def screenshot(driver: WebDriver, name: str) -> None:
    folder = os.environ.get("LOADCURVE_SCREENSHOTS")
    if not folder:
        return
    height = driver.script("return document.documentElement.scrollHeight")
    driver.s("POST", "/window/rect", {"width": 1280, "height": min(int(height) + 140, 12000)})
    png = base64.b64decode(driver.s("GET", "/screenshot"))
    Path(folder).mkdir(parents=True, exist_ok=True)
    (Path(folder) / f"{name}.png").write_bytes(png)
    driver.s("POST", "/window/rect", {"width": 1280, "height": 900})


def load_every_image(driver: WebDriver) -> None:
    """Open every <details> box and load the lazy images (the flame graphs, issue 25: loaded
    only when shown), so that every image is checked; waits up to 10 s for them."""
    driver.script("document.querySelectorAll('details').forEach(d => d.open = true);"
                  "document.querySelectorAll('img[loading=lazy]').forEach(i => i.loading = 'eager');")
    for _ in range(100):
        if driver.script("return [...document.images].every(i => i.complete)"):
            return
        time.sleep(0.1)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_page_loads_cleanly(server, browser, name):
    browser.s("POST", "/se/log", {"type": "browser"})  # drop entries from earlier pages
    browser.s("POST", "/url", {"url": server + PAGES[name]})  # returns after the load event
    title = browser.s("GET", "/title")
    assert title and "404" not in title, title
    load_every_image(browser)
    images = browser.script(
        "return Array.from(document.images).map(i => [i.currentSrc || i.src, i.complete, i.naturalWidth])")
    if name in ("post", "report", "scenario-sleep"):
        assert images, "the page should show charts"
    broken = [src for src, complete, width in images if not complete or width == 0]
    assert not broken, f"images that did not load: {broken}"
    styled = browser.script("return getComputedStyle(document.querySelector('.site-header')).borderTopStyle")
    assert styled == "solid", "the stylesheet did not load"
    log = browser.s("POST", "/se/log", {"type": "browser"})
    errors = [e["message"] for e in log if e.get("level") in ("SEVERE", "WARNING")]
    assert not errors, errors
    screenshot(browser, name)


def test_every_page_is_checked(server):
    """PAGES must name every page of the built site, so each gets the checks below."""
    site = Path(server.site)
    built = {"/" + str(p.relative_to(site)).removesuffix("index.html") for p in site.rglob("*.html")}
    assert built == set(PAGES.values()), built ^ set(PAGES.values())


def open_at(driver: WebDriver, url: str, width: int) -> None:
    """Load `url` in a viewport `width` CSS px wide; phones are emulated as phones (touch, the
    viewport meta tag honoured), the way Chromium's device mode does it."""
    phone = width < 600
    driver.s("POST", "/goog/cdp/execute", {"cmd": "Emulation.setDeviceMetricsOverride", "params": {
        "width": width, "height": 844 if phone else 900, "deviceScaleFactor": 1, "mobile": phone}})
    driver.s("POST", "/url", {"url": url})


@pytest.fixture(scope="module")
def axe_source() -> str:
    need(AXE.exists(), f"{AXE} (npm ci; make test runs it)")
    return AXE.read_text()


@pytest.mark.parametrize("name,width", [(n, w) for n in sorted(PAGES) for w in WIDTHS])
def test_axe_finds_no_serious_violation(server, browser, axe_source, name, width):
    open_at(browser, server + PAGES[name], WIDTHS[width])
    browser.script(axe_source + "; return true")
    result = browser.s("POST", "/execute/async", {"args": [], "script": """
        const done = arguments[arguments.length - 1];
        axe.run(document, {resultTypes: ["violations"]})
           .then(r => done(r.violations.filter(v => ["serious", "critical"].includes(v.impact))
                     .map(v => ({id: v.id, impact: v.impact, help: v.help,
                                 targets: v.nodes.slice(0, 5).map(n => n.target.join(" "))}))))
           .catch(e => done([{id: "axe-error", impact: "critical", help: String(e), targets: []}]));"""})
    assert not result, json.dumps(result, indent=1)


@pytest.mark.parametrize("name", sorted(PAGES))
def test_no_page_is_wider_than_a_phone(server, browser, name):
    open_at(browser, server + PAGES[name], WIDTHS["phone"])
    wide = browser.script("""
        const view = document.documentElement.clientWidth;
        const out = [...document.querySelectorAll("body *")]
          .filter(e => e.getBoundingClientRect().right > view + 1 && !e.closest(".table-scroll, pre"))
          .filter(e => !e.parentElement || e.parentElement.getBoundingClientRect().right <= view + 1)
          .slice(0, 8).map(e => e.tagName.toLowerCase() + (e.className ? "." + e.className : "")
                              + " right=" + Math.round(e.getBoundingClientRect().right));
        const cut = [...document.querySelectorAll("caption")]
          .filter(c => c.getBoundingClientRect().right > view + 1).map(c => c.textContent.slice(0, 40));
        return {view: view, page: document.documentElement.scrollWidth, out: out, cut: cut};""")
    assert wide["page"] <= wide["view"], wide
    # A table may scroll sideways inside its box, but its caption wraps within the screen.
    assert not wide["cut"], wide


def test_phone_charts_show_text_of_at_least_9_css_px(server, browser):
    """Issue 14: at 390 px the report's charts are the narrow SVGs (chart.html's <source
    media>), and their smallest text shows at >= 9 CSS px; at 1280 px the 700 px ones."""
    import re
    url = server + "/reports/pool-vs-virtual/"
    shown = "return [...document.querySelectorAll('figure.chart img')].map(i => " \
            "[i.currentSrc, i.getBoundingClientRect().width]);"
    open_at(browser, url, WIDTHS["phone"])
    load_every_image(browser)                         # the flame graphs too
    time.sleep(1.0)                                   # (media-dependent sources settle)
    phone = browser.script(shown)
    if not any(src.endswith("-narrow.svg") for src, _ in phone):
        pytest.skip("the committed report predates the narrow charts: run `make site`")
    for src, width in phone:
        assert src.endswith("-narrow.svg"), src
        svg = (server.site / src.split("/", 3)[3]).read_text()
        view = float(re.search(r'viewBox="0 0 ([\d.]+) ', svg).group(1))
        smallest = min(float(s) for s in re.findall(r"font-size: ([\d.]+)px", svg))
        assert smallest * width / view >= 9, (src, width, smallest)
    open_at(browser, url, 1280)
    time.sleep(1.0)
    assert all(not src.endswith("-narrow.svg") for src, _ in browser.script(shown))


def test_summary_table_scrolls_inside_its_box_on_a_phone(server, browser):
    """Issue 11: the scenario x target table is far wider than a phone; it scrolls sideways
    inside its box, which stays within the screen, and the page itself does not widen."""
    open_at(browser, server + PAGES["scenarios-report"], WIDTHS["phone"])
    got = browser.script("""
        const view = document.documentElement.clientWidth;
        const boxes = [...document.querySelectorAll("details.summary[open] .table-scroll")];
        return {view: view, page: document.documentElement.scrollWidth,
                orders: document.querySelectorAll("details.summary").length,
                boxes: boxes.map(b => ({right: b.getBoundingClientRect().right,
                                        client: b.clientWidth, scroll: b.scrollWidth}))};""")
    assert got["boxes"] and got["orders"] == 5, got
    assert got["page"] <= got["view"], got
    for box in got["boxes"]:
        assert box["right"] <= got["view"] + 1, got
        assert box["scroll"] > box["client"], got      # the table scrolls inside its box


def test_a_link_to_another_order_of_the_summary_opens_it(server, browser):
    """The orders are pre-rendered in closed <details>; following a link to one shows it."""
    open_at(browser, server + PAGES["scenarios-report"] + "#summary-scenarios-demo-by-cpu", 1280)
    time.sleep(0.5)
    opened = browser.script("""
        const box = document.getElementById("summary-scenarios-demo-by-cpu");
        return box.closest("details").open && box.getBoundingClientRect().height > 0;""")
    assert opened


# Each chart's legend and panel titles, and its plot areas, as the browser lays the SVG out
# (with its own text widths), by the ids analysis/write/charts/plots.py gives them.
CHART_BOXES = """
const box = e => { const b = e.getBoundingClientRect(); return [b.left, b.top, b.right, b.bottom]; };
const all = sel => [...document.querySelectorAll(sel)];
return {areas: all('[id^="plot-area"]').map(e => [e.id, box(e)]),
        labels: all('[id="legend"], [id^="panel-title"]').map(e => [e.id, box(e)])};"""

# Loads each URL in an iframe of the viewport's size on one page of the site (same origin, so
# its document is reachable), then runs `measure` (a function body of `document`) over each
# frame's document: what a navigation to each URL on its own would show, without a page load
# and a WebDriver round trip per document (393 chart SVGs took 43 s one by one).
IN_FRAMES = """
const [urls, body, done] = [arguments[0], arguments[1], arguments[arguments.length - 1]];
const measure = new Function("document", body);
const width = window.innerWidth, height = window.innerHeight;
document.body.replaceChildren();
Promise.all(urls.map(url => new Promise(loaded => {
  const frame = document.createElement("iframe");
  frame.style.cssText = `display: block; border: 0; width: ${width}px; height: ${height}px`;
  frame.loading = "eager";
  frame.onload = () => loaded(frame);
  frame.src = url;
  document.body.append(frame);
}))).then(frames => done(frames.map(frame => {
  try { return {value: measure(frame.contentDocument)}; }
  catch (e) { return {error: String(e)}; }
})));"""

# Frames per page: each a whole SVG document; more only makes one script call longer.
FRAMES_AT_ONCE = 40


def measure_each(driver: WebDriver, page: str, urls: list[str], body: str) -> list:
    """`body`'s result for each of `urls`, opened as documents of their own (in frames of
    `page`, a page of the same origin, at the viewport's current size)."""
    driver.s("POST", "/timeouts", {"script": 120_000})
    results = []
    for start in range(0, len(urls), FRAMES_AT_ONCE):
        batch = urls[start:start + FRAMES_AT_ONCE]
        driver.s("POST", "/url", {"url": page})
        got = driver.s("POST", "/execute/async", {"script": IN_FRAMES, "args": [batch, body]})
        for url, one in zip(batch, got, strict=True):
            assert "error" not in one, (url, one["error"])
            results.append(one["value"])
    return results


def test_chart_legends_and_panel_titles_stay_off_the_plot_areas(server, browser):
    """Issue 11: no legend placed outside the axes (and no small-multiples panel title) covers
    any plot area of its chart, checked in every written chart SVG of the site as Chromium
    draws it. Legends inside the axes (`legend-inside`: few systems, matplotlib's best spot)
    are left to tests/test_charts_many.py, which requires none in a 12-system chart."""
    def overlap(a, b):
        return a[0] < b[2] - 0.5 and b[0] < a[2] - 0.5 and a[1] < b[3] - 0.5 and b[1] < a[3] - 0.5
    # (a chart without the ids is a fixture placeholder, or drawn before the ids existed)
    charts = [path for path in sorted((server.site / "assets" / "charts").rglob("*.svg"))
              if 'id="plot-area' in path.read_text()]
    if not charts:
        pytest.skip("the committed charts predate the plot-area ids: run `make site`")
    urls = [f"{server}/{path.relative_to(server.site).as_posix()}" for path in charts]
    for path, boxes in zip(charts, measure_each(browser, server + "/", urls, CHART_BOXES),
                           strict=True):
        assert boxes["areas"], path
        for name, label in boxes["labels"]:
            for area, rect in boxes["areas"]:
                assert not overlap(label, rect), (path.name, name, label, area, rect)
