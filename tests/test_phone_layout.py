"""Issue 34: the bundled runs' pages at a 390 px phone and at 1,280 px, in headless Chromium
(tests/test_browser.py's fixtures; skipped where Chromium is missing):
- no page is wider than the screen, except inside a table's scroll box or a <pre>;
- every table that scrolls sideways keeps its row labels in view when scrolled to its end;
- every chart an <img> shows lies within the screen, every text of its SVG lies within the
  SVG, and a flame graph's heading lines are its whole title (nothing cut to "..").
The charts are found generically (every figure and SVG image a page shows), so charts added
later are checked too.

`LOADCURVE_PHONE_SCREENS=docs/screens` (scripts/phone-screens.sh) also saves the screenshots
committed under docs/screens/.
"""
from __future__ import annotations

import base64
import os
import time
from pathlib import Path

import pytest

from tests import test_browser
from tests.test_browser import WIDTHS, load_every_image, measure_each, open_at

# test_browser's fixtures: one site build and one Chromium for this module too
server, browser = test_browser.server, test_browser.browser

pytestmark = pytest.mark.browser

PAGES = {"home": "/", "runs": "/reports/", "pool-vs-virtual": "/reports/pool-vs-virtual/",
         "vegeta-vs-hey": "/reports/vegeta-vs-hey/", "many-servers": "/reports/many-servers/",
         "many-servers-sleep": "/reports/many-servers/sleep/",
         "fanout-curve": "/reports/fanout-curve/",
         "fanout-pekko": "/reports/fanout-curve/fanout-pekko/",
         "wiremock": "/reports/wiremock-by-url/",
         "closed-loop-post": "/2026/11/26/what-a-closed-loop-hides-at-the-knee/"}

OVERFLOW = """
const view = document.documentElement.clientWidth;
const out = [...document.querySelectorAll("body *")]
  .filter(e => e.getBoundingClientRect().right > view + 1 && !e.closest(".table-scroll, pre"))
  .slice(0, 5).map(e => e.tagName.toLowerCase() + "." + e.className + " right="
                        + Math.round(e.getBoundingClientRect().right));
return {view: view, page: document.documentElement.scrollWidth, out: out};"""

# Each scroll box that scrolls: scrolled to its right end, the row labels (the first cell of
# every body row, a <th>) must still lie inside the box.
STICKY = """
const hidden = [];
let scrolled = 0;
for (const box of document.querySelectorAll(".table-scroll")) {
  if (box.scrollWidth <= box.clientWidth + 1 || box.closest("details:not([open])")) continue;
  box.scrollLeft = box.scrollWidth;
  scrolled++;
  const b = box.getBoundingClientRect();
  for (const row of box.querySelectorAll("tbody tr")) {
    const first = row.cells[0];
    if (!first || first.tagName !== "TH") continue;
    const r = first.getBoundingClientRect();
    if (r.width > 0 && (r.left < b.left - 1 || r.left > b.left + 1))
      hidden.push((box.querySelector("caption") || box).textContent.slice(0, 50) + " | "
                  + first.textContent.trim().slice(0, 30) + " left=" + Math.round(r.left));
  }
  box.scrollLeft = 0;
}
return {scrolled: scrolled, hidden: hidden.slice(0, 8)};"""

FIGURES = """
const view = document.documentElement.clientWidth;
const shown = [...document.querySelectorAll("figure, img, svg")]
  .filter(e => e.getBoundingClientRect().width > 0 && !e.closest(".table-scroll, details:not([open])"));
return {wide: shown.filter(e => e.getBoundingClientRect().right > view + 1)
                   .map(e => (e.currentSrc || e.tagName) + " right=" + Math.round(e.getBoundingClientRect().right)),
        svgs: [...new Set(shown.filter(e => e.tagName === "IMG" && /\\.svg$/.test(e.currentSrc))
                               .map(e => e.currentSrc))]};"""

# Opened on its own (a frame of its own, test_browser.measure_each): every <text> inside the
# SVG; a flame graph's heading is its title. SLACK (px): the glyphs' extent as Chromium draws
# them beyond the box the chart layout estimated; the existing charts overhang by 2 px at most
# (the rotated "latency (ms)" of a narrow load curve, a spectrum's last tick label), which a
# reader does not see as cut.
SVG_TEXT = "const SLACK = 3;" + """
const svg = document.documentElement, s = svg.getBoundingClientRect();
const out = [...svg.querySelectorAll("text")].filter(t => t.textContent.trim())
  .filter(t => { const b = t.getBoundingClientRect();    // (after any rotation)
                 return b.left < s.left - SLACK || b.right > s.right + SLACK; })
  .slice(0, 5).map(t => { const b = t.getBoundingClientRect();
    return t.textContent.slice(0, 60) + " [" + Math.round(b.left - s.left) + ", " + Math.round(b.right - s.right) + "]"; });
let heading = null, title = null;
if (document.getElementById("frames")) {
  title = svg.querySelector("title").textContent;
  heading = [...svg.querySelectorAll("svg > text")]
    .filter(t => (t.getAttribute("style") || "").includes("15px")).map(t => t.textContent).join(" ");
}
return {out: out, title: title, heading: heading};"""


def _save(browser, name: str) -> None:
    folder = os.environ.get("LOADCURVE_PHONE_SCREENS")
    if folder:
        Path(folder).mkdir(parents=True, exist_ok=True)
        (Path(folder) / f"{name}.png").write_bytes(base64.b64decode(browser.s("GET", "/screenshot")))


@pytest.mark.parametrize("name,width", [(n, w) for n in PAGES for w in WIDTHS])
def test_page_fits_and_keeps_row_labels_in_view(server, browser, name, width):
    open_at(browser, server + PAGES[name], WIDTHS[width])
    load_every_image(browser)        # every <details> open: each table and figure is checked
    time.sleep(0.5)                  # (media-dependent sources settle)
    fit = browser.script(OVERFLOW)
    assert fit["page"] <= fit["view"] and not fit["out"], fit
    sticky = browser.script(STICKY)
    assert not sticky["hidden"], sticky
    figures = browser.script(FIGURES)
    assert not figures["wide"], figures
    for src, text in zip(figures["svgs"],
                         measure_each(browser, server + "/", figures["svgs"], SVG_TEXT),
                         strict=True):
        assert not text["out"], (src, text)
        assert text["heading"] == text["title"], (src, text)


# Where the pictures of a multi-system report are: every summary panel's and the comparison
# load curve's box, and the first table's top
PICTURES = """
const view = document.documentElement.clientWidth;
const box = e => { const r = e.getBoundingClientRect();
                   return {left: r.left, right: r.right, top: r.top + window.scrollY}; };
const curve = document.getElementById("compare-load-curve");
const table = document.querySelector("table");
return {view: view,
        panels: [...document.querySelectorAll(".chart-panels figure")].map(box),
        curve: curve && box(curve.nextElementSibling), table_top: table && box(table).top};"""


@pytest.mark.parametrize("width", list(WIDTHS))
def test_the_comparison_pictures_come_first_and_fit(server, browser, width):
    """many-servers: five summary panels (one per scenario) side by side or stacked, none past
    the screen's edge, above every table; fanout-curve: both scenarios' load curve above the
    tables."""
    open_at(browser, server + PAGES["many-servers"], WIDTHS[width])
    load_every_image(browser)
    got = browser.script(PICTURES)
    assert len(got["panels"]) == 5, got
    assert all(0 <= p["left"] and p["right"] <= got["view"] + 1 for p in got["panels"]), got
    assert max(p["top"] for p in got["panels"]) < got["table_top"], got
    if width == "phone":     # one column: each panel under the one before
        tops = [p["top"] for p in got["panels"]]
        assert tops == sorted(tops) and len(set(tops)) == 5, got
    open_at(browser, server + PAGES["fanout-curve"], WIDTHS[width])
    load_every_image(browser)
    got = browser.script(PICTURES)
    assert got["curve"] is not None and got["curve"]["right"] <= got["view"] + 1, got
    assert got["curve"]["top"] < got["table_top"], got


def test_the_load_curve_table_shows_hey_with_its_row_labels_on_a_phone(server, browser):
    """The issue's example: vegeta-vs-hey's table scrolled to hey's columns keeps the loads in
    view, and hey's own table (its <details>) is at most half as wide as the whole one."""
    open_at(browser, server + PAGES["vegeta-vs-hey"], WIDTHS["phone"])
    got = browser.script("""
        const box = document.querySelector(".table-scroll:has(table.load-curve)");
        const hey = [...box.querySelectorAll("thead th")].find(th => th.textContent.includes("hey"));
        box.scrollLeft = hey.offsetLeft - box.querySelector("tbody th").offsetWidth;
        box.scrollIntoView();
        const b = box.getBoundingClientRect(), h = hey.getBoundingClientRect(),
              label = box.querySelector("tbody th").getBoundingClientRect();
        const alone = [...document.querySelectorAll("details.per-system")]
          .find(d => d.querySelector("summary").textContent.startsWith("hey"));
        alone.open = true;
        const own = alone.querySelector(".table-scroll");
        return {label_left: label.left, box_left: b.left, hey_left: h.left, hey_right: h.right,
                view: document.documentElement.clientWidth,
                alone_scroll: own.scrollWidth, whole_scroll: box.scrollWidth};""")
    assert abs(got["label_left"] - got["box_left"]) <= 1, got
    assert got["label_left"] < got["hey_left"] < got["view"], got
    _save(browser, "phone-vegeta-vs-hey-table-scrolled")
    assert 0 < got["alone_scroll"] <= got["whole_scroll"] / 2, got


def test_screenshots(server, browser):
    """The pictures docs/screens/ holds (only saved with LOADCURVE_PHONE_SCREENS): phone and
    desktop views of the home page, a report's tables and a flame graph with its top frames."""
    if not os.environ.get("LOADCURVE_PHONE_SCREENS"):
        pytest.skip("LOADCURVE_PHONE_SCREENS not set")
    for width in WIDTHS:
        open_at(browser, server + "/", WIDTHS[width])
        _save(browser, f"{width}-home")
        open_at(browser, server + PAGES["fanout-curve"], WIDTHS[width])
        load_every_image(browser)
        time.sleep(1.0)
        browser.script("document.querySelector('figure.chart.flame').scrollIntoView()")
        _save(browser, f"{width}-fanout-flame-diff")
        open_at(browser, server + PAGES["fanout-pekko"], WIDTHS[width])
        browser.script("document.querySelector('table.time-split').scrollIntoView();"
                       "document.querySelector('table.time-split').parentElement.scrollLeft = 400")
        _save(browser, f"{width}-fanout-accounting")
        # the pictures at the top of the multi-system reports: fanout-curve's two scenarios on
        # one load curve, many-servers' summary panels (7 servers x 5 scenarios)
        open_at(browser, server + PAGES["fanout-curve"], WIDTHS[width])
        load_every_image(browser)
        browser.script("document.getElementById('compare-load-curve').scrollIntoView()")
        _save(browser, f"{width}-fanout-curve-compared")
        open_at(browser, server + PAGES["many-servers"], WIDTHS[width])
        load_every_image(browser)
        browser.script("document.getElementById('summary-chart').scrollIntoView()")
        _save(browser, f"{width}-many-servers-summary")
