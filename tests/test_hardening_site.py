"""Hardening (issue 6), end to end through `python -m analysis build` and Jekyll: hostile strings
from a manifest reach pages and the feed as text; odd but valid values (2^63-1, one-value
histograms, zero-count intervals, hundreds of tags, non-ASCII) build; two builds are identical.

test_site.py checks escaping with a hand-written data file; here the data file is the one the
analysis writes from a hostile run.yml, so the whole path is covered.
"""
from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path
from xml.etree import ElementTree

import feedparser
import pytest
import yaml

from analysis.read.hdr.histogram import Histogram, layout_for
from tests.sitebuild import assemble, build as jekyll_build
from tests.helpers import (ENV, FIXTURE, authored, edit_manifest, encode, log_line, parse,
                           snapshot, write_log)
from analysis.paths import find_data

pytestmark = pytest.mark.site
JMH_FIXTURE = FIXTURE.parent / "jmh-short"

LONG_MAX = 2**63 - 1
ATTACKS = ["<script>alert(1)</script>", '"><img src=x onerror=alert(1)>', "{{ site }}",
           "{% include x %}"]
EVIL = " ".join(ATTACKS)
UNICODE = "Ünïcødé — 负载曲线 🚀 «ç»"
# The one thing two Jekyll builds of one source may differ in: the feed-level <updated> of
# feed.xml and feed/by_tag/*.xml (the one before the first <entry>), which _layouts/atom.xml sets to
# the build time (site.time). Entries' <updated>, every page, every asset: byte-identical.
FEED_UPDATED = re.compile(rb"<updated>[^<]*</updated>")


def without_build_time(rel: str, data: bytes) -> bytes:
    if not (rel.endswith(".xml") and (rel == "feed.xml" or rel.startswith("feed/"))):
        return data
    head, sep, rest = data.partition(b"<entry>")
    return FEED_UPDATED.sub(b"<updated>BUILD-TIME</updated>", head, count=1) + sep + rest


def hostile_run(runs: Path) -> None:
    """The fixture run with every string a person types replaced by markup, Liquid and
    non-ASCII, and 300 tags."""
    run = runs / "hostile"
    shutil.copytree(FIXTURE, run)

    def change(m):
        m["title"] = f"{UNICODE} {EVIL}"
        m["description"] = f"desc {EVIL}"
        m["tags"] = ATTACKS + [UNICODE] + [f"tag{i:03d}" for i in range(300)]
        m["systems"][0]["label"] = f"pool {EVIL}"
        m["systems"][0]["description"] = f"sysdesc {EVIL}"
        m["systems"][1]["label"] = f"virtual {UNICODE}"
        m["environment"].update(cpu=f"cpu {EVIL}", jdk=f"jdk {EVIL}", os=UNICODE,
                                jvm_flags='-Dx="><script>alert(2)</script>')
        m["load_generator"]["name"] = f"gen {EVIL}"
    edit_manifest(run, change)


def hostile_jmh_run(runs: Path) -> None:
    """The JMH fixture run (kind: jmh, issue 13) with markup and Liquid in every string a
    person types: title, description, tags, environment, a table's title and a variant label."""
    run = runs / "hostile-jmh"
    shutil.copytree(JMH_FIXTURE, run)

    def change(m):
        m["title"] = f"jmh {UNICODE} {EVIL}"
        m["description"] = f"jmh desc {EVIL}"
        m["tags"] = ATTACKS
        m["environment"]["jdk"] = f"jdk {EVIL}"
        m["jmh"][0]["title"] = f"ring {EVIL}"
        m["jmh"][0]["labels"]["pekkoActors"] = f"pekko {EVIL}"
    edit_manifest(run, change)


def extreme_run(runs: Path) -> None:
    """Synthetic logs (ns): values up to 2^63-1, a histogram holding a single value, intervals
    that recorded nothing, and a log with 300 tags (the cell reads one)."""
    run = runs / "extreme"
    for system in ("big", "single", "tagged"):
        (run / system).mkdir(parents=True)
    layout = layout_for(1, LONG_MAX, 2)
    empty = Histogram.empty(layout)
    big = [log_line(encode(Histogram.from_values(layout, [1_000_000, LONG_MAX, 2**62],
                                                 [50, 1, 2])), 0.0)]
    big += [log_line(encode(empty), float(t)) for t in range(1, 5)]          # zero-count intervals
    write_log(run / "big" / "r1.hlog", big)
    write_log(run / "single" / "r1.hlog",
              [log_line(encode(Histogram.from_values(layout, [5_000_000])), 0.0)])
    small = layout_for(1, 10**12, 3)
    write_log(run / "tagged" / "r1.hlog",
              [log_line(encode(Histogram.from_values(small, [1_000_000 + i] * 3)), i / 10,
                        f"t{i:03d}") for i in range(300)])
    manifest = {
        "title": "Extreme values", "date": "2026-01-05", "description": "odd but valid",
        "value_unit": "ns", "tags": ["extreme"],
        "systems": [{"id": "big", "label": "Huge values"}, {"id": "single", "label": "One value"},
                    {"id": "tagged", "label": "300 tags"}],
        "load_points": [{"id": "r1", "offered_rate": 1, "duration_s": 5}],
        "cells": [{"system": "tagged", "load": "r1", "tag": "t123"}],
    }
    (run / "run.yml").write_text(yaml.safe_dump(manifest))


POST = """---
title: "Hostile data, printed through the includes"
description: "A post showing the hostile run."
tags: [hardening]
---
{%- assign hostile = site.data.runs["hostile"] -%}
{%- assign extreme = site.data.runs["extreme"] -%}
{%- assign hostile_jmh = site.data.runs["hostile-jmh"] -%}
Title: {% include stat.html block=hostile field="title" %}.

{% include load-curve-table.html block=hostile %}

{% include methodology.html block=hostile %}

{% include load-curve-table.html block=extreme %}

{% include jmh-variant-table.html block=hostile_jmh table="ring" %}
{% include jmh-memory-table.html block=hostile_jmh table="ring" %}
"""


def analyse(src: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", *args],
                          cwd=src, capture_output=True, text=True, timeout=300, env=ENV)


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    """The repository's site with only the two runs above (the real runs' data stays as the
    repository has it), analysed twice (--force the second time) and rendered twice."""
    tmp = tmp_path_factory.mktemp("hardsite")
    src = assemble(tmp / "src")
    for run in (src / "runs").iterdir():      # keep the analysis to the runs of this test
        shutil.rmtree(run)
    hostile_run(src / "runs")
    hostile_jmh_run(src / "runs")
    extreme_run(src / "runs")
    (src / "_posts" / "2026-01-06-hostile.md").write_text(POST)
    before = authored(src)
    first = analyse(src)
    # a methodology post drafted from the hostile manifest, published as is
    draft = subprocess.run([sys.executable, "-m", "analysis", "new-post", "hostile", "--drafts",
                            "_posts"], cwd=src, capture_output=True, text=True, timeout=60, env=ENV)
    assert draft.returncode == 0, draft.stderr
    before.update({k: v for k, v in authored(src).items() if k.startswith("_posts/")})
    data1 = {k: (src / k).read_bytes() for k in snapshot(src)}
    second = analyse(src, "--force")
    data2 = {k: (src / k).read_bytes() for k in snapshot(src)}
    after = authored(src)
    sites = []
    for name in ("site1", "site2"):
        result = jekyll_build(src, tmp / name)
        assert result.returncode == 0, result.stdout + result.stderr
        sites.append(tmp / name)
    return {"src": src, "first": first, "second": second, "data": (data1, data2),
            "authored": (before, after), "sites": sites}


def test_hostile_and_extreme_runs_build_without_errors(built):
    for out in (built["first"], built["second"]):
        assert out.returncode == 0, out.stderr
        assert "Traceback" not in out.stderr and "error:" not in out.stderr, out.stderr


def test_analysis_keeps_the_strings_and_odd_values_as_data(built):
    src = built["src"]
    doc = yaml.safe_load(find_data(src, "hostile").read_text())
    assert doc["title"] == f"{UNICODE} {EVIL}" and len(doc["tags"]) == 305
    ext = yaml.safe_load(find_data(src, "extreme").read_text())
    cells = {system: c for by_system in ext["cells"].values() for system, c in by_system.items()}
    # counts from the logs written above; latencies only checked to be ordered and finite
    assert cells["big"]["count"] == 53 and cells["single"]["count"] == 1
    assert cells["tagged"]["count"] == 3
    assert cells["big"]["max_ms"] >= LONG_MAX / 1e6 * 0.99
    single = cells["single"]
    assert single["p50_ms"] == single["p99_ms"] == single["max_ms"]
    for cell in cells.values():
        values = [cell[k] for k in ("p50_ms", "p90_ms", "p99_ms", "p999_ms", "max_ms")]
        assert values == sorted(values) and all(v == v and v != float("inf") for v in values)
    lines = (src / cells["big"]["intervals_csv"]).read_text().splitlines()
    assert len(lines) == 1 + 5              # header + every interval, empty ones included


def test_authored_files_are_not_modified(built):
    before, after = built["authored"]
    assert before == after


def test_forced_rebuild_is_byte_identical(built):
    data1, data2 = built["data"]
    assert sorted(data1) == sorted(data2)
    assert [k for k in data1 if data1[k] != data2[k]] == []
    assert any(k.startswith("assets/charts/") for k in data1) and \
        any(k.startswith("_reports/") for k in data1)


def test_two_jekyll_builds_differ_only_in_the_build_time(built):
    one, two = built["sites"]
    files1 = sorted(p.relative_to(one).as_posix() for p in one.rglob("*") if p.is_file())
    files2 = sorted(p.relative_to(two).as_posix() for p in two.rglob("*") if p.is_file())
    assert files1 == files2
    differing = [rel for rel in files1 if without_build_time(rel, (one / rel).read_bytes())
                 != without_build_time(rel, (two / rel).read_bytes())]
    assert differing == []


PAGES = ["reports/hostile/index.html", "reports/hostile-jmh/index.html", "reports/index.html",
         "index.html",
         "2026/01/06/hostile/index.html", "2026/11/21/hostile/index.html"]


@pytest.mark.parametrize("page", PAGES)
def test_hostile_strings_show_as_text_on_pages(built, page):
    html = (built["sites"][0] / page).read_text()
    parsed = parse(html)
    assert not parsed.handlers, parsed.handlers
    assert all(t == "application/ld+json" for t in parsed.scripts), parsed.scripts
    assert "<script>alert" not in html and "<img src=x" not in html
    text = "".join(parsed.text)
    assert "<script>alert(1)</script>" in text and "{{ site }}" in text, page


def test_report_page_shows_environment_labels_and_unicode(built):
    html = (built["sites"][0] / "reports/hostile/index.html").read_text()
    text = "".join(parse(html).text)
    for s in (f"cpu {EVIL}", f"pool {EVIL}", f"virtual {UNICODE}", UNICODE, f"gen {EVIL}"):
        assert " ".join(s.split()) in " ".join(text.split()), s


def test_seo_json_ld_cannot_be_closed_by_data(built):
    for page in PAGES:
        html = (built["sites"][0] / page).read_text()
        for block in re.findall(r"<script[^>]*ld\+json[^>]*>(.*?)</script>", html, re.S):
            assert "<" not in block, (page, block[:200])


def test_feed_parses_and_shows_the_strings_as_text(built):
    site = built["sites"][0]
    raw = (site / "feed.xml").read_bytes()
    ElementTree.fromstring(raw)                       # well-formed XML
    parsed = feedparser.parse(raw)
    assert not parsed.bozo, parsed.bozo_exception
    atom = "{http://www.w3.org/2005/Atom}"
    entries = [e for e in ElementTree.fromstring(raw).iter(atom + "entry")
               if "/hostile/" in e.find(atom + "link").get("href")]
    assert len(entries) == 2          # the post above and the one drafted by new-post
    for entry in entries:
        content = entry.findtext(atom + "content")
        page = parse(content)
        assert not page.handlers and not page.scripts
        text = "".join(page.text)
        assert "<script>alert(1)</script>" in text and "{{ site }}" in text and UNICODE in text
        for field in ("title", "summary", "content"):
            value = entry.findtext(atom + field) or ""
            assert "<script>alert" not in value and "<img src=x" not in value, field
    drafted = next(e for e in entries if "/2026/11/21/" in e.find(atom + "link").get("href"))
    # the title is HTML (type="html"): as a reader renders it, text only. jekyll-feed strips
    # tags from titles (strip_html), so `<script>alert(1)</script>` itself is dropped there.
    title = parse(drafted.findtext(atom + "title"))
    assert not title.imgs and not title.scripts and not title.handlers
    shown = "".join(title.text)
    assert UNICODE in shown and "{{ site }}" in shown and "<img src=x onerror=alert(1)>" in shown


def test_tag_feeds_and_pages_survive_hundreds_of_tags(built):
    site = built["sites"][0]
    for xml in (site / "feed").rglob("*.xml"):
        assert not feedparser.parse(xml.read_bytes()).bozo, xml
    for html in site.rglob("*.html"):
        assert "<script>alert" not in html.read_text(), html
    # the tags page lists the run's 305 tags, the hostile ones as text (Liquid did not run them)
    tags = parse((site / "tags" / "index.html").read_text())
    shown = "".join(tags.text)
    for tag in ATTACKS + [UNICODE, "tag000", "tag299"]:
        assert tag in shown, tag
    assert not tags.handlers and not tags.imgs


def test_charts_carry_the_strings_as_escaped_svg_text(built):
    src = built["src"]
    svgs = sorted((src / "assets" / "charts" / "hostile").glob("*.svg"))
    assert svgs
    for svg in svgs:
        root = ElementTree.parse(svg).getroot()          # well-formed: every string escaped
        for el in root.iter():
            assert not el.tag.endswith("}script") and el.tag != "script", svg
            assert not [a for a in el.attrib if a.lower().startswith("on")], svg


STDERR_LINE = re.compile(r"^(error: run \S+: |warning: run \S+: |\[\d+/\d+\] |built \d+ of |\S+: up to date$|\S+: run removed; "
                         r"|corpus: |warning: comparisons/\S+: )")


def test_build_stderr_is_only_progress_warnings_and_errors(built):
    lines = [ln for out in (built["first"], built["second"]) for ln in out.stderr.splitlines()]
    assert [ln for ln in lines if not STDERR_LINE.match(ln)] == []
