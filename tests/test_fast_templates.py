"""Templates made cheap for 1,000 runs (issue 15) print what the costly ones printed.

- Generated report pages (`head: seo-report`) print their SEO tags with
  _includes/seo-report.html instead of jekyll-seo-tag's `{% seo %}` (seo was 2 of Jekyll's 5 s).
- tags.html lists tags in linear time; tests/fixtures/templates/tags-quadratic.html is the
  template it replaced (a loop concatenating arrays, then every document for every tag).

The test site is built twice: as it is, and with _layouts/default.html calling `{% seo %}` for
every page and the old tags.html. Every page with `head: seo-report` must have the same <head>
in both, and /tags/ must be the same page. Besides the real runs' pages and the injection fixture, pages whose front matter tries
seo's edge cases are added (quotes, ampersands, `<`, apostrophes that seo "smartifies",
Markdown, no image, no description, a title equal to the site's), and the pair of builds is
repeated with a non-empty baseurl, a URL that needs normalising, an author with a URL and
another language.
"""
from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

from analysis.write import pages
from tests.sitebuild import REPO, build_site, tag_feeds

pytestmark = pytest.mark.site

HEAD = re.compile(r"<head>.*</head>", re.S)
TAGS_BEFORE = REPO / "tests" / "fixtures" / "templates" / "tags-quadratic.html"
FAST = '{% if page.head == "seo-report" %}{% include seo-report.html %}{% else %}{% seo %}{% endif %}'

EDGE_PAGES = {
    "seo-edge-quotes": {
        "title": "Tom's \"JDK\" & <b>bold</b> -- *em* `code` ... a < b > c",
        "description": "JDK's built-in server's queue: \"quoted\" & 'single' -- <script>x</script> {{ site }}",
    },
    "seo-edge-no-image": {"title": "No image", "description": "A page with no og:image.",
                          "tags": ["jvm", "b & <c>", "jvm", "Zeta"]},
    "seo-edge-no-description": {"title": "No description", "tags": "spaced tags jvm"},
    "seo-edge-empty-description": {"title": "Empty description", "description": ""},
    "seo-edge-site-title": {"title": "loadcurve", "description": "Title equal to the site's."},
    "seo-edge-author": {"title": "Own author", "description": "d", "author": "Ann O'Neil & co"},
}
EDGE_CONFIG = """\
url: "https://Example.ORG:443"
baseurl: "/lc/sub/"
lang: de
author:
  name: "Jane \\"JJ\\" Doe"
  url: https://example.org/jane
"""


def force_seo_and_old_tags(source: Path) -> None:
    add_edge_pages(source)
    layout = source / "_layouts" / "default.html"
    text = layout.read_text()
    assert FAST in text, "default.html no longer chooses the head as this test expects"
    layout.write_text(text.replace(FAST, "{% seo %}"))
    front = (source / "tags.html").read_text().split("---\n")[1]
    (source / "tags.html").write_text("---\n" + front + "---\n" + TAGS_BEFORE.read_text())


MARK = "<!-- seo-report -->"


def mark_the_include(source: Path) -> None:
    """The edge pages, and a mark where the include prints its own tags (not {% seo %}'s)."""
    add_edge_pages(source)
    include = source / "_includes" / "seo-report.html"
    text = include.read_text()
    assert text.count("{%- else -%}\n") == 1
    include.write_text(text.replace("{%- else -%}\n", "{%- else -%}\n" + MARK))


def add_edge_pages(source: Path) -> None:
    for name, fields in EDGE_PAGES.items():
        front = {"date": "2026-01-05", "head": "seo-report", **fields}
        if name != "seo-edge-no-image":
            front["image"] = f"/assets/charts/{name}/load-curve.png"
        (source / "_reports" / f"{name}.html").write_text(
            "---\n" + yaml.safe_dump({"layout": "default", **front}, allow_unicode=True) +
            "---\n<p>First paragraph, the excerpt.</p>\n\n<p>More.</p>\n")
    # the tag feeds and the report index /tags/ prints, as `make site` writes them after the
    # analysis (the old tags.html read site.reports, the new one the index: same page)
    tag_feeds().write(source)


def fast_pages(site: Path) -> dict[str, str]:
    """The <head> of every built page whose source had `head: seo-report`, by path."""
    heads = {}
    for path in sorted(site.rglob("index.html")):
        text = path.read_text()
        match = HEAD.search(text)
        if match and "/reports/" in "/" + path.relative_to(site).as_posix():
            heads[path.relative_to(site).as_posix()] = match.group(0).replace(MARK, "")
    return heads


@pytest.fixture(scope="module", params=["default", "edge"])
def builds(request, tmp_path_factory):
    config = () if request.param == "default" else (EDGE_CONFIG,)
    tmp = tmp_path_factory.mktemp(f"seo-{request.param}")
    # (the runs' raw files left out: no template reads them, and Jekyll copied them 4 times)
    fast = build_site(tmp / "fast", *config, prepare=mark_the_include, raw_runs=False)
    seo = build_site(tmp / "seo", *config, prepare=force_seo_and_old_tags, raw_runs=False)
    return fast, seo


def test_every_report_kind_takes_the_fast_head(builds):
    """Real reports (plain, with scenarios, a scenario, JMH), the injection fixture and the edge
    pages have `head: seo-report`, and the include's own tags print for all but the pages it
    leaves to {% seo %} (no description, an author of their own)."""
    fast, _ = builds
    pages = ["pool-vs-virtual", "many-servers", "many-servers/cpu", "jmh-actors-streams",
             "injection", *EDGE_PAGES]
    for page in pages:
        source = next((fast.parent / "src" / "_reports").glob(f"{page}.*"))
        front = yaml.safe_load(source.read_text().split("---\n")[1])
        assert front.get("head") == "seo-report", source
        marked = MARK in (fast / "reports" / page / "index.html").read_text()
        assert marked == (page not in ("seo-edge-no-description", "seo-edge-author")), page


def test_the_fast_head_is_what_seo_prints(builds):
    fast, seo = builds
    ours, theirs = fast_pages(fast), fast_pages(seo)
    assert set(ours) == set(theirs)
    differ = []
    for path, head in ours.items():
        if head != theirs[path]:
            at = next(i for i, (a, b) in enumerate(zip(head, theirs[path] + "\0")) if a != b)
            differ.append(f"{path}:\n ours {head[at - 100:at + 100]!r}\n seo  "
                          f"{theirs[path][at - 100:at + 100]!r}")
    assert differ == [], "\n".join(differ)


def test_edge_cases_reach_the_head_as_seo_writes_them(builds):
    """Not vacuous: the edge pages' heads hold what they test."""
    fast, _ = builds
    heads = fast_pages(fast)
    quotes = heads["reports/seo-edge-quotes/index.html"]
    assert "Tom’s “JDK” &amp;" in quotes and "<script>x" not in quotes
    assert 'name="twitter:card" content="summary"' in heads["reports/seo-edge-no-image/index.html"]
    assert "First paragraph, the excerpt." in heads["reports/seo-edge-no-description/index.html"]


def test_the_tags_page_is_the_one_the_quadratic_template_gave(builds):
    fast, before = builds
    page = (fast / "tags" / "index.html").read_text()
    assert page == (before / "tags" / "index.html").read_text()
    for tag in ("jvm", "b &amp; &lt;c&gt;", "Zeta", "spaced", "&lt;script&gt;alert(1)&lt;/script&gt;"):
        assert f">{tag}</h2>" in page, tag


def test_the_fast_head_is_given_only_where_the_include_is_exact():
    front = {"title": "t", "date": "2026-01-05", "description": "d", "image": "/assets/charts/r/x.png"}
    assert pages.seo_head(front, "/reports/r/") == {"head": "seo-report"}
    assert pages.seo_head({k: v for k, v in front.items() if k != "image"}, "/reports/r/s/")
    for url, image in [("/reports/R%20x/", front["image"]), ("/reports/r/", "https://cdn/x.png"),
                       ("/reports/r/", "assets/x.png"), ("/reports/../r/", front["image"])]:
        assert pages.seo_head({**front, "image": image}, url) == {}, (url, image)
    assert pages.seo_head({**front, "description": None}, "/reports/r/") == {}
