"""The built site: links, feed, SEO tags, escaping, and numbers that come only from the data.

The site is built once per session into a temporary folder from the repository plus the fixtures
in tests/fixtures/site/ (see tests/sitebuild.py), so these tests run with or without real runs.
"""
from __future__ import annotations

import html

import re
import shutil
from pathlib import Path
from urllib.parse import unquote, urljoin, urlsplit
from xml.etree import ElementTree

import feedparser
import pytest
import yaml

from tests.sitebuild import REPO, build_site, rerender_reports, shared_site, tag_feeds
from tests.helpers import Page, parse

pytestmark = pytest.mark.site

POST = REPO / "_posts" / "2026-11-22-thread-pool-vs-virtual-threads.md"
JMH_POST = REPO / "_posts" / "2026-11-24-actors-and-streams-with-jmh.md"
SERVERS_POST = REPO / "_posts" / "2026-11-24-seven-jvm-http-servers.md"
FANOUT_POST = REPO / "_posts" / "2026-11-27-fan-out-under-load-futures-vs-pekko-streams.md"
URL = yaml.safe_load((REPO / "_config.yml").read_text())["url"]
ATTACKS = ['<script>alert(1)</script>', '"><img src=x onerror=alert(1)>', "{{ site }}",
           "{% include x %}"]


@pytest.fixture(scope="session")
def site(tmp_path_factory) -> Path:
    return shared_site(tmp_path_factory)


@pytest.fixture(scope="session")
def pages(site) -> dict[str, Page]:
    return {str(p.relative_to(site)): parse(p.read_text()) for p in site.rglob("*.html")}


def resolve(site: Path, page_path: str, link: str) -> Path | None:
    """The file an internal link points to, or None for a link that leaves the site."""
    base = "/" + page_path.replace("index.html", "")
    url = urljoin(URL + base, link)
    if not url.startswith(URL + "/"):
        return None
    path = unquote(urlsplit(url).path)
    target = site / path.lstrip("/")
    return target / "index.html" if path.endswith("/") else target


def test_build_has_no_liquid_warnings(site):
    log = (site.parent / "build.log").read_text()
    assert "Liquid" not in log and "Warning" not in log, log


def test_expected_pages_exist(site):
    for rel in ("index.html", "reports/index.html", "tags/index.html", "feed.xml",
                "reports/pool-vs-virtual/index.html", "2026/11/22/thread-pool-vs-virtual-threads/index.html",
                "reports/jmh-actors-streams/index.html",
                "2026/11/24/actors-and-streams-with-jmh/index.html"):
        assert (site / rel).is_file(), rel


def test_internal_links_and_fragments_resolve(site, pages):
    broken = []
    for rel, page in pages.items():
        for link in page.links:
            if link.startswith(("mailto:", "data:")):
                continue
            target = resolve(site, rel, link)
            if target is None:
                continue
            if not target.is_file():
                broken.append(f"{rel}: {link}")
                continue
            fragment = urlsplit(link).fragment
            if fragment and target.suffix == ".html":
                ids = pages[str(target.relative_to(site))].ids
                if unquote(fragment) not in ids:
                    broken.append(f"{rel}: {link} (no id {fragment!r})")
    assert not broken, "\n".join(broken)


def test_raw_data_is_published_and_tooling_is_not(site):
    assert list((site / "runs").rglob("*.hlog")), "runs/ must be published: tables link the .hlog files"
    for name in ("analysis", "bench", "tests", "docs", "scripts", "Makefile", "Gemfile",
                 "requirements.txt", "README.md", "pyproject.toml", ".venv", ".ci"):
        assert not (site / name).exists(), name


def test_no_page_shows_a_missing_data_marker(site):
    offenders = [str(p.relative_to(site)) for p in site.rglob("*.html")
                 if "missing-data" in p.read_text()]
    assert not offenders, f"pages asking for data that is not there: {offenders}"


def test_one_canonical_link_per_page(pages):
    wrong = {rel: p.canonical for rel, p in pages.items() if len(p.canonical) != 1}
    assert not wrong, wrong
    for rel, page in pages.items():
        assert page.canonical[0].startswith(URL + "/"), (rel, page.canonical)


def test_every_page_has_one_h1(site):
    """The home page too: a screen reader's heading list starts from it."""
    counts = {str(p.relative_to(site)): p.read_text().count("<h1") for p in site.rglob("*.html")}
    assert all(n == 1 for n in counts.values()), counts


def test_every_image_has_alt_and_every_table_a_caption(pages):
    for rel, page in pages.items():
        for img in page.imgs:
            assert img.get("alt"), (rel, img)
        assert page.captions == page.tables, rel


def test_chart_fallback_images_are_pngs(pages):
    """A run some post names has every chart's PNG as the <img> (feed readers show it); a
    report page links it root-relative (liquid_pages: reports are read on the site only)."""
    report = pages["reports/pool-vs-virtual/index.html"]
    assert report.imgs
    for img in report.imgs:
        if "/flame-" in img["src"]:
            continue    # flame graphs (issue 25) are SVG only: their frames' titles are the data
        assert img["src"].startswith("/assets/charts/") and img["src"].endswith(".png"), img


def test_no_markup_injected_anywhere(pages):
    """No page carries an event handler or an executable script (seo-tag's JSON-LD is data)."""
    for rel, page in pages.items():
        assert not page.handlers, (rel, page.handlers)
        assert all(t == "application/ld+json" for t in page.scripts), (rel, page.scripts)


@pytest.mark.parametrize("page", ["reports/injection/index.html",
                                  "2026/01/03/injection-fixture/index.html",
                                  "reports/index.html"])
def test_injection_strings_show_as_text(site, pages, page):
    html = (site / page).read_text()
    text = "".join(pages[page].text)
    for attack in ATTACKS:
        assert attack in text, (page, attack)
    assert "<script>alert" not in html and "<img src=x" not in html
    # Liquid did not run the data: `{{ site }}` would otherwise have printed the site's hash.
    assert "{{ site }}" in html and "{% include x %}" in html


def test_table_shows_what_qualifies_each_number(site):
    """The reader is told which numbers describe a queue, rest on few samples, fail Little's
    law, come with errors and timeouts, or vary across repetitions (the pool's saturated rows;
    the fixture injection run's cell has all the rest)."""
    data = yaml.safe_load((site.parent / "src/_data/runs/pool-vs-virtual.yml").read_text())
    saturated = sum(c["saturated"] for row in data["load_curve_table"]["rows"]
                    for c in row["cells"])
    curve = (site / "reports/pool-vs-virtual/index.html").read_text()
    # each flag twice: in the whole table and in its system's own (issue 34)
    assert curve.count('<br><span class="flag">saturated: ') == 2 * saturated > 0
    rules = data["load_curve_table"]["rules"]
    assert all(html.escape(rule.split("'")[0][:40], quote=False) in curve for rule in rules)
    suspect = (site / "reports/injection/index.html").read_text()
    assert "in flight &gt; cap" in suspect and "<sup" in suspect
    assert "2 errors, 3 not sent" in suspect and "repetitions disagree" in suspect
    assert '<br><span class="flag">host busy</span>' in suspect


def test_report_shows_hot_methods_and_where_the_time_went(site, pages):
    """The report prints the `jvm_hotspots` block: the attribution table (one row per system and
    load point, a column per label) and a hot-methods table per system, each with a caption,
    every string from the data."""
    data = yaml.safe_load((site.parent / "src/_data/runs/pool-vs-virtual.yml").read_text())
    hs = data["jvm_hotspots"]
    html = (site / "reports/pool-vs-virtual/index.html").read_text()
    section = html[html.index('id="jvm-hotspots"'):html.index('id="methodology"')]
    tables = section.count('<table class="jvm-hotspots">')
    assert tables == len(hs["systems"]) + ("attribution_labels" in hs) >= 2
    # (the flame graphs' top-frame tables of issue 34 sit in this section too, with their own)
    assert len(re.findall(r'<table class="jvm-hotspots">\s*<caption id=', section)) == tables
    assert section.count("<caption id=") == section.count("<table")
    page = parse(section)
    text = " ".join(" ".join(page.text).split())
    for label in hs.get("attribution_labels", []):
        assert f"{label} %" in text, label
    for system in hs["systems"]:
        assert system["label"] in text
        for lp in system["loads"]:
            assert f"{lp['offered']} {lp['samples']} samples" in text, (system["system"], lp["load"])
            for m in lp["methods"]:
                assert f"{m['method']} {m['self_pct']} {m['total_pct']}" in text, m
            for a in lp.get("attribution", []):
                assert f"{a['pct']} ({a['samples']})" in text, a
    assert html.index('id="jvm"') < html.index('id="jvm-hotspots"') < html.index('id="methodology"')


def test_hotspot_strings_are_escaped_and_no_data_renders_nothing(site):
    html = (site / "2026/01/03/injection-fixture/index.html").read_text()
    section = html[html.index('id="jvm-hotspots"'):html.index('id="no-jfr"')]
    assert "&lt;script&gt;alert(1)&lt;/script&gt;.run" in section
    assert "&lt;b&gt;10&lt;/b&gt;" in section and "&lt;b&gt;1&lt;/b&gt;" in section
    assert "&quot;&gt;&lt;img src=x onerror=alert(1)&gt; label" in section
    assert "{{ site }}" in section and "{% include x %}" in section
    assert "<script>" not in section and "<img" not in section and "<b>" not in section
    assert '<div id="no-jfr"></div>' in html       # a run without the block: nothing at all


def test_post_prints_formatted_mean_and_in_flight(site):
    """The post's in-flight sentences print the analysis's text ("1,128.9"), not raw data:
    the measured figures of a saturated cell, Little's law only for an unsaturated one."""
    data = yaml.safe_load((site.parent / "src/_data/runs/pool-vs-virtual.yml").read_text())
    cell = data["cells"]["r200"]["pool20"]
    html = (site / "2026/11/22/thread-pool-vs-virtual-threads/index.html").read_text()
    text = " ".join(" ".join(parse(html).text).split())
    assert (f"grow from {cell['in_flight_start_text']} when the window opens to "
            f"{cell['in_flight_end_text']} when it closes, a mean of {cell['in_flight_text']}"
            in text)
    virtual = data["cells"]["r200"]["virtual"]
    assert virtual["littles_law_check"] == "consistent" and cell["littles_law"] is None
    assert (f"it gives {virtual['littles_law_text']} against {virtual['in_flight_text']} "
            f"measured" in text)


def feed(site: Path, rel: str = "feed.xml"):
    parsed = feedparser.parse((site / rel).read_bytes())
    assert not parsed.bozo, parsed.bozo_exception
    return parsed


def raw_entry(site: Path, slug: str) -> dict[str, str]:
    """An entry's title, summary and content exactly as in feed.xml. feedparser would resolve
    relative URLs and strip scripts itself, hiding what a less careful reader would get."""
    atom = "{http://www.w3.org/2005/Atom}"
    root = ElementTree.parse(site / "feed.xml").getroot()
    for entry in root.iter(atom + "entry"):
        if slug in entry.find(atom + "link").get("href"):
            return {k: entry.findtext(atom + k) or "" for k in ("title", "summary", "content")}
    raise AssertionError(f"no feed entry for {slug}")


def test_feed_has_full_content_description_and_absolute_images(site):
    parsed = feed(site)
    entry = next(e for e in parsed.entries if "/thread-pool-vs-virtual-threads/" in e.link)
    meta = yaml.safe_load(POST.read_text().split("---")[1])
    assert entry.summary == " ".join(meta["description"].split())
    raw = raw_entry(site, "/thread-pool-vs-virtual-threads/")
    assert "<table" in raw["content"] and "Reproducing" in raw["content"], "the whole post, please"
    imgs = re.findall(r'<img[^>]* src="([^"]+)"', raw["content"])
    assert imgs and all(src.startswith(URL + "/") for src in imgs), imgs


def test_feed_escapes_data(site):
    raw = raw_entry(site, "/injection-fixture/")
    page = parse(raw["content"])
    assert not page.handlers and not page.scripts
    assert ATTACKS[0] in "".join(page.text) and "{{ site }}" in "".join(page.text)
    assert "<script" not in raw["title"] and "<img" not in raw["summary"]


def tagged_docs(site: Path) -> dict[str, set[str]]:
    """Every tag of a post or report in the built site's source -> the URLs carrying it."""
    src = site.parent / "src"
    found: dict[str, set[str]] = {}
    for folder in ("_posts", "_reports"):
        for path in (src / folder).glob("*.*"):
            meta = yaml.safe_load(path.read_text().split("---")[1]) or {}
            for tag in meta.get("tags") or []:
                found.setdefault(str(tag), set()).add(path.stem)
    return found


def test_every_tag_has_a_feed_listing_its_posts_and_reports(site, pages):
    """Hyphenated and odd tags too (virtual-threads, the injection run's markup): one feed per
    tag, linked from the tags page, holding every post and report with that tag."""
    tags = tagged_docs(site)
    assert "virtual-threads" in tags and "<script>alert(1)</script>" in tags
    atom = "{http://www.w3.org/2005/Atom}"
    tags_page = pages["tags/index.html"]
    for tag, stems in tags.items():
        rel = "feed/by_tag/" + tag_feeds().file_name(tag) + ".xml"
        parsed = feed(site, rel)
        assert parsed.feed.title.endswith(tag), (rel, parsed.feed.title)
        root = ElementTree.parse(site / rel).getroot()
        links = [e.find(atom + "link").get("href") for e in root.iter(atom + "entry")]
        for stem in stems:
            slug = stem[11:] if stem[:4].isdigit() else stem  # posts: drop the date
            assert any(link.rstrip("/").endswith(slug) for link in links), (tag, stem, links)
        assert "/" + rel in tags_page.links, (tag, rel)


def test_committed_tag_feed_pages_are_current(tmp_path):
    """feed/by_tag/ and the report index in _data/ are committed (a classic GitHub Pages build
    runs no script): they must be what scripts/tag_feeds.py makes from the repository's posts,
    reports and _config.yml (its time zone dates the index)."""
    for folder in ("_posts", "_reports", "feed"):
        shutil.copytree(REPO / folder, tmp_path / folder)
    shutil.copy2(REPO / "_config.yml", tmp_path / "_config.yml")
    (tmp_path / "_data").mkdir()
    for name in ("report_pages.yml", "report_runs.json", "report_tags.json"):
        shutil.copy2(REPO / "_data" / name, tmp_path / "_data" / name)
    assert tag_feeds().write(tmp_path) == [], \
        "run `make site` (scripts/tag_feeds.py) and commit feed/by_tag/ and _data/report_*"


def test_feed_content_urls_are_absolute(site):
    """Readers that ignore xml:base still find every link and image: no root-relative or
    fragment-only URL in any entry's content."""
    for rel in ["feed.xml"] + [f"feed/by_tag/{p.name}" for p in (site / "feed" / "by_tag").glob("*.xml")]:
        root = ElementTree.parse(site / rel).getroot()
        for content in root.iter("{http://www.w3.org/2005/Atom}content"):
            relative = re.findall(r'(?:href|src|srcset)="(?!https?://)([^"]*)"', content.text or "")
            assert not relative, (rel, relative[:5])


@pytest.mark.parametrize("post", [POST, JMH_POST, SERVERS_POST, FANOUT_POST], ids=lambda p: p.stem)
def test_post_types_no_number_by_hand(post):
    """Every number in a methodology post comes from the data through an include: outside
    Liquid tags, the only digits allowed are in names (p50, p99.9, wrk2)."""
    _, front, body = post.read_text().split("---", 2)
    meta = yaml.safe_load(front)
    prose = re.sub(r"\{%-?\s*comment.*?endcomment\s*-?%\}", "", body, flags=re.S)
    prose = re.sub(r"\{%.*?%\}|\{\{.*?\}\}", "", prose, flags=re.S)
    prose = re.sub(r"<[^>]*>", " ", prose)      # markup (tabindex="0") is not a number shown
    prose = re.sub(r"\bp\d+(\.\d+)?\b|\bwrk2\b", "", prose)  # percentile and tool names
    for text in (prose, meta["title"], meta["description"]):
        assert not re.search(r"\d", text), re.findall(r".{0,30}\d.{0,30}", text)


def test_every_link_honours_baseurl(tmp_path_factory, monkeypatch):
    """Published as a project page (baseurl /loadcurve), no link may escape to the host root.
    The report pages are rendered again with that baseurl first, as `make site
    URL=https://host/loadcurve` renders them (liquid_pages.baseurl reads LOADCURVE_URL)."""
    monkeypatch.setenv("LOADCURVE_URL", URL + "/loadcurve")
    site = build_site(tmp_path_factory.mktemp("baseurl"), 'baseurl: "/loadcurve"\n',
                      prepare=rerender_reports)
    wrong = []
    for path in site.rglob("*.html"):
        for link in parse(path.read_text()).links:
            if link.startswith(URL):
                link = link[len(URL):]
            if link.startswith("/") and not link.startswith("/loadcurve/"):
                wrong.append(f"{path.relative_to(site)}: {link}")
    assert not wrong, "\n".join(wrong[:20])


def test_every_config_key_is_documented():
    """Style (minima): each key of _config.yml has a comment on the line(s) just above it."""
    lines = (REPO / "_config.yml").read_text().splitlines()
    undocumented = []
    for i, line in enumerate(lines):
        key = re.match(r"^(\s*)([A-Za-z_]+):", line)
        if not key:
            continue
        above = lines[i - 1].strip() if i else ""
        # The first child of a key, or a sibling inside one list item, shares its comment.
        shared = (above.endswith(":") or above.startswith("- ")) and not above.startswith("#")
        if not (above.startswith("#") or shared):
            undocumented.append(line.strip())
    assert not undocumented, undocumented


# --- accessibility and feed-safe URLs of the includes (issue 14) ----------------------------

def test_scrollable_tables_are_focusable_regions_named_by_their_caption(site, pages):
    """axe's scrollable-region-focusable: a keyboard user can reach and scroll each table box;
    the box is a region named by its table's caption."""
    checked = 0
    for rel in ("reports/pool-vs-virtual/index.html", "2026/01/03/injection-fixture/index.html",
                "reports/scenarios-demo/index.html", "reports/scenarios-demo/sleep/index.html"):
        html = (site / rel).read_text()
        boxes = re.findall(r'<div class="table-scroll"([^>]*)>\s*<table[^>]*>\s*'
                           r'<caption id="([^"]+)"', html)
        assert boxes and len(boxes) == html.count('class="table-scroll"'), rel
        ids = re.findall(r'\sid="([^"]+)"', html)
        for attrs, caption_id in boxes:
            assert f'tabindex="0" role="region" aria-labelledby="{caption_id}"' in attrs, attrs
            assert ids.count(caption_id) == 1, (rel, caption_id)
            checked += 1
    assert checked >= 6


def test_group_rows_head_their_row_group(site):
    html = (site / "reports/pool-vs-virtual/index.html").read_text()
    assert '<tr class="group"><th scope="rowgroup"' in html and 'scope="colgroup" colspan' not in \
        html[html.index('id="jvm-hotspots"'):]


def test_phone_chart_variant_is_the_first_source(site):
    """A chart with a narrow_svg (render.py's phone layout) offers it below 36rem, before the
    700 px SVG; the PNG stays the fallback."""
    html = (site / "reports/injection/index.html").read_text()
    m = re.search(r'<source media="\(max-width: 36rem\)" srcset="([^"]+)" type="image/svg\+xml">'
                  r'\s*<source srcset="([^"]+)" type="image/svg\+xml">\s*<img src="([^"]+)"', html)
    assert m, html[html.index("<picture"):][:600]
    assert m.group(1) == f"{URL}/assets/charts/injection/load-curve-narrow.svg"
    assert m.group(2).endswith("/load-curve.svg") and m.group(3).endswith("/load-curve.png")


def test_chart_images_carry_the_png_size(site):
    import struct
    html = (site / "reports/pool-vs-virtual/index.html").read_text()
    images = re.findall(r'<img src="([^"]+)" alt="[^"]*" width="(\d+)" height="(\d+)">', html)
    flames = re.findall(r'<img src="([^"]+/flame-[^"]+\.svg)" alt="[^"]*" loading="lazy" '
                        r'width="(\d+)" height="(\d+)">', html)
    assert len(images) + len(flames) == html.count("<img ") and len(images) >= 19
    for src, width, height in flames:       # an SVG's own size (flame_views.figure_entry)
        svg = (site / src.lstrip("/")).read_text()
        assert f'width="{width}" height="{height}"' in svg, src
    for src, width, height in images:
        png = (site / src.lstrip("/")).read_bytes()
        assert struct.unpack(">II", png[16:24]) == (int(width), int(height)), src


def test_feed_content_has_no_root_relative_urls(site):
    """Feed readers resolve root-relative URLs against the feed's own address, or not at all:
    every link and image an include prints is absolute."""
    for slug in ("/thread-pool-vs-virtual-threads/", "/injection-fixture/"):
        content = raw_entry(site, slug)["content"]
        relative = re.findall(r'(?:href|src|srcset)="(/[^"]*)"', content)
        assert not relative, (slug, relative[:5])


def test_jmh_report_and_post_print_the_runs_blocks(site):
    """The JMH run's report (issue 13): a variant table with speed-ups and the best marked,
    sweep charts, the memory table, the methodology with its warnings; the post's includes
    print the same numbers."""
    html = (site / "reports/jmh-actors-streams/index.html").read_text()
    doc = yaml.safe_load((REPO / "_data/runs/jmh-actors-streams.yml").read_text())
    ring = doc["jmh_variants"]["ring"]
    assert html.count('class="best"') >= len(ring["rows"])
    assert "<span class=\"visually-hidden\"> (best)</span>" in html
    assert "1.00× (baseline)" in html and "× faster" in html and "≈" in html
    for chart in doc["charts"].values():
        assert chart["svg"] in html
    assert "Error bar wider than 10 %" in html and "Blackhole mode" in html
    post = (site / "2026/11/24/actors-and-streams-with-jmh/index.html").read_text()
    cell = doc["jmh_stat"]["ring"]["messages=1000 ringSize=16"]["executorActors"]
    assert html_escape(cell["ratio_text"]) in post and html_escape(cell["score_text"]) in post
    assert "[no data" not in post


def html_escape(text: str) -> str:
    return html.escape(text, quote=False)


# --- a run with scenarios (issue 11): tests/fixtures/runs/scenarios-demo --------------------

SCENARIO_RUN = "scenarios-demo"
SCENARIO_PAGES = [f"reports/{SCENARIO_RUN}/index.html"] + \
    [f"reports/{SCENARIO_RUN}/{s}/index.html" for s in ("sleep", "cpu", "json")]
PAGE_BUDGET = 1_500_000     # bytes of HTML + the SVGs a page shows (issue 11)


def scenario_data(site: Path) -> dict:
    return yaml.safe_load((site.parent / f"src/_data/runs/{SCENARIO_RUN}.yml").read_text())


def test_a_run_with_scenarios_has_a_report_and_a_page_per_scenario(site, pages):
    for rel in SCENARIO_PAGES:
        assert (site / rel).is_file(), rel
    runs = (site / "reports/index.html").read_text()
    # the list of runs lists the run once, not its scenario pages
    assert runs.count(f'href="/reports/{SCENARIO_RUN}/"') == 1
    assert f"/reports/{SCENARIO_RUN}/sleep/" not in runs
    report = pages[SCENARIO_PAGES[0]]
    for s in ("sleep", "cpu", "json"):
        assert f"/reports/{SCENARIO_RUN}/{s}/" in report.links, s
    sleep = (site / SCENARIO_PAGES[1]).read_text()
    assert 'class="load-curve"' in sleep and "Sleep 5 ms: Latency in ms" in sleep


@pytest.mark.parametrize("rel", SCENARIO_PAGES)
def test_each_scenario_page_stays_under_1_5_mb_of_html_and_svg(site, rel):
    """What a reader downloads: the page's HTML plus the SVG of each chart a browser picks,
    at a desktop width (each <picture>'s plain <source>) and on a phone (its
    media="(max-width: 36rem)" source where there is one); a browser loads one of the two."""
    html = (site / rel).read_text()
    pictures = re.findall(r"<picture>(.*?)</picture>", html, re.S)
    # a chart without a PNG (analysis/write/charts/png_use.py) has its SVG as the <img>
    plain = r'<source srcset="([^"]+\.svg)"|<img src="([^"]+\.svg)"'
    wide = [next(filter(None, re.search(plain, p).groups())) for p in pictures]
    narrow = [next(filter(None, (re.search(r'<source media="[^"]*" srcset="([^"]+\.svg)"', p) or
                                 re.search(plain, p)).groups())) for p in pictures]
    for layout in (wide, narrow):
        total = len(html.encode()) + sum(resolve(site, rel, s).stat().st_size for s in layout)
        assert total < PAGE_BUDGET, (rel, total)


def test_summary_table_orders_marks_and_values(site):
    data = scenario_data(site)
    st = data["summary_table"]
    html = (site / SCENARIO_PAGES[0]).read_text()
    assert html.count('<details class="summary"') == len(st["orders"]) == 2 + len(st["scenarios"])
    assert html.count('<details class="summary" open>') == 1
    best = sum(v["best"] for o in st["orders"][:1] for g in o["groups"] for r in g["rows"]
               for c in r["cells"] for v in c["values"])
    first = html[html.index('<details class="summary" open>'):html.index("</details>")]
    assert best > 0 and first.count('<span class="visually-hidden"> (best)</span>') == best
    assert first.count("best\">") == best
    # grouped by server: a group row per family; sorted orders have none
    families = {s.get("family") for s in data["systems"]}
    assert first.count('<tr class="group">') == len(families)
    text = " ".join(" ".join(parse(first).text).split())
    for sc in st["scenarios"]:
        assert f"{sc['label']}: {sc['point_text']} ({sc['point_reason']})" in text


def test_stat_prints_any_number_of_any_scenario(site):
    data = scenario_data(site)
    html = (site / "2026/01/04/scenarios-fixture/index.html").read_text()

    def span(name):
        return re.search(rf'<span id="{name}">([^<]*)</span>', html).group(1)
    sc = data["scenarios"]
    assert span("stat-cpu-p99") == sc["cpu"]["cells"]["r100"]["a-pool"]["p99_text"]
    assert span("stat-cpu-ceiling") == "1000.0" and span("stat-sleep-ceiling") == "200.0"
    assert span("stat-sleep-service") == "5"
    assert span("stat-sleep-rate") == "100"
    assert span("stat-json-drops") == html_text(sc["json"]["cells"]["r200"]["e-loop"]["drops_text"])
    assert span("stat-jdk") == "HdrHistogram 2.2.2 GenHlog"


def html_text(value: str) -> str:
    return html.escape(value, quote=True)
