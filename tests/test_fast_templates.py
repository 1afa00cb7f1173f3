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

import json
import random
import re
import shutil
import subprocess
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
    # a title or description analysis/write/pages.py marks plain is printed without Kramdown;
    # the nearest lines that Kramdown or escape_once change are not marked
    "seo-edge-plain": {"title": "Plain: a title, with (parentheses) 50% / 3 + 4 = 7? yes! #1 @home ~1 ms; é × – ]",
                       "description": "A plain description, one line. Ends with a colon:"},
    "seo-edge-lists": {"title": "1. An ordered list", "description": "- a bullet"},
    "seo-edge-spaces": {"title": "Two  spaces and a\ttab", "description": "Trailing space "},
    "seo-edge-lines": {"title": "Setext\n===", "description": "Line one  \nline two"},
    "seo-edge-span": {"title": "Strike ~~this~~ and {: .x} and $$x$$", "description": "a | b"},
    "seo-edge-escapes": {"title": "Back\\slash [link](x)", "description": "Code `x` and x_y_z"},
    "seo-edge-typography": {"title": "Dashes -- and dots... here", "description": "Quote's \"it\" a<<b"},
}
# Which of the title and the description are marked plain, by page (else neither)
PLAIN = {"pool-vs-virtual": [True, False],     # its description has apostrophes
         "seo-edge-plain": [True, True], "seo-edge-no-image": [True, True],
         "seo-edge-site-title": [True, False]}
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


# Marks where the include hands the page's title or description to Kramdown
KRAMDOWN = {"seo_page_title": "<!-- kramdown: title -->",
            "seo_description": "<!-- kramdown: description -->"}


def mark_the_include(source: Path) -> None:
    """The edge pages, and a mark where the include prints its own tags (not {% seo %}'s) and
    where it calls Kramdown for the page's title and description."""
    add_edge_pages(source)
    include = source / "_includes" / "seo-report.html"
    text = include.read_text()
    assert text.count("{%- else -%}\n") == 1
    text = text.replace("{%- else -%}\n", "{%- else -%}\n" + MARK)
    for var, mark in KRAMDOWN.items():
        call = "{% else %}{% assign " + var + " = "
        assert text.count(call) == 1, var
        text = text.replace(call, call.replace("{% assign", mark + "{% assign"))
    include.write_text(text)


def add_edge_pages(source: Path) -> None:
    for name, fields in EDGE_PAGES.items():
        front = {"date": "2026-01-05", "head": "seo-report", **fields}
        if name != "seo-edge-no-image":
            front["image"] = f"/assets/charts/{name}/load-curve.png"
        # the plain marks as the analysis gives them
        front.update((k, v) for k, v in pages.seo_head(front, f"/reports/{name}/").items()
                     if k.startswith("plain_"))
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
            head = match.group(0).replace(MARK, "")
            for mark in KRAMDOWN.values():
                head = head.replace(mark, "")
            heads[path.relative_to(site).as_posix()] = head
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


def test_plain_titles_and_descriptions_skip_kramdown(builds):
    """Kramdown was most of the include's cost (~1 ms a distinct title at 1,000 pages): a line
    pages.py marks plain skips it, and every near miss still goes through it."""
    fast, _ = builds
    for page in ("pool-vs-virtual", *EDGE_PAGES):
        text = (fast / "reports" / page / "index.html").read_text()
        if MARK not in text:
            continue     # left to {% seo %}
        skipped = [mark not in text for mark in KRAMDOWN.values()]
        assert skipped == PLAIN.get(page, [False, False]), page


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
    assert pages.seo_head(front, "/reports/r/") == {"head": "seo-report", "plain_title": True,
                                                   "plain_description": True}
    assert pages.seo_head({k: v for k, v in front.items() if k != "image"}, "/reports/r/s/")
    for url, image in [("/reports/R%20x/", front["image"]), ("/reports/r/", "https://cdn/x.png"),
                       ("/reports/r/", "assets/x.png"), ("/reports/../r/", front["image"])]:
        assert pages.seo_head({**front, "image": image}, url) == {}, (url, image)
    assert pages.seo_head({**front, "description": None}, "/reports/r/") == {}


# seo's filter chain as Jekyll runs it, on each line of a JSON list read from stdin
SEO_FILTERS = """
require "jekyll"
require "json"
site = Jekyll::Site.new(Jekyll.configuration("quiet" => true, "source" => ARGV[0],
                                             "destination" => File.join(ARGV[0], "_site")))
chain = Liquid::Template.parse(
  "{{ s | markdownify | strip_html | normalize_whitespace | escape_once }}")
puts JSON.generate(JSON.parse($stdin.read).map { |s| chain.render!({"s" => s}, registers: {site: site}) })
"""
# What random lines are made of: letters, digits and punctuation Kramdown leaves alone, a few
# non-ASCII letters and symbols, and (at most one a line, so that each is tried next to plain
# text) what Kramdown's syntax, typography and smart quotes act on, or white space
SAFE_PIECES = list("abcXYZ019 .,:;!?()/%+=#@}]-~$") + ["é", "×", "–"]
RISKY_PIECES = ["*", "_", "`", "[", "<", ">", "&", "\\", "'", '"', "|", "{", "\t", "\n", "  ",
                "--", "...", "~~", "$$", "{:", "1. ", "- ", "# ", "> ", " ", "\u00a0"]


def test_a_line_marked_plain_is_what_seos_filters_give_back():
    """The mark's rule against Jekyll's own filter chain, on random lines near the rule's edge:
    every line pages.py marks plain comes back as it is, and many it does not mark do not."""
    if shutil.which("ruby") is None:
        pytest.skip("no ruby")
    rng = random.Random(36)
    lines = set()
    while len(lines) < 1500:
        line = rng.choice("AbzQ") + "".join(rng.choice(SAFE_PIECES)
                                            for _ in range(rng.randint(0, 9)))
        if rng.random() < 0.6:
            at = rng.randint(0, len(line))
            line = line[:at] + rng.choice(RISKY_PIECES) + line[at:]
        lines.add(line)
    lines = sorted(lines)
    empty = REPO / "tests" / "fixtures" / "templates"
    done = subprocess.run(["ruby", "-e", SEO_FILTERS, str(empty)], input=json.dumps(lines),
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "cannot load such file -- jekyll" in done.stderr:
        pytest.skip("no Jekyll for ruby")
    assert done.returncode == 0, done.stderr
    given = dict(zip(lines, json.loads(done.stdout)))
    plain = [line for line in lines if pages.is_plain_text(line)]
    assert len(plain) > 500
    assert [line for line in plain if given[line] != line] == []
    assert sum(given[line] != line for line in lines) > 300


# A post's Liquid rendered as Jekyll renders it; prints what Liquid's assign tags counted over
# the whole render (the resource score: Liquid 5 walks every value assigned; each include's
# render resets the context's count, so it is summed here), that score for the run's document,
# and how many numbers the post prints through stat.html
POST_ASSIGNS = """
require "jekyll"
$assigned = 0
module SumAssigned
  def increment_assign_score(amount)
    $assigned += amount
    super
  end
end
Liquid::ResourceLimits.prepend(SumAssigned)
site = Jekyll::Site.new(Jekyll.configuration("quiet" => true, "source" => ARGV[0],
                                             "destination" => ARGV[1], "disable_disk_cache" => true))
site.reset
site.read
post = site.posts.docs.find { |d| d.path.end_with?(ARGV[2]) }
payload = site.site_payload
payload["page"] = post.to_liquid
template = Liquid::Template.parse(post.content)
template.render!(payload, registers: {site: site, page: payload["page"]})
walk = lambda do |v|
  case v
  when String then v.bytesize
  when Array then v.sum(1) { |c| walk.(c) }
  when Hash then v.sum(1) { |k, c| walk.(k) + walk.(c) }
  else 1
  end
end
puts $assigned, walk.(site.data["runs"][ARGV[3]]), post.content.scan("include stat.html").size
"""


def test_a_posts_numbers_do_not_walk_the_runs_document_each(tmp_path):
    """stat.html prints one number of a run's document; the thread-pool post has ~70. Assigning
    the document (`assign x = include.block`) made Liquid 5 walk all of it for each number, ~4 ms
    each: most of an add's render of the post. Now the post walks it about once (its own
    `assign pv`, and methodology.html once)."""
    if shutil.which("ruby") is None:
        pytest.skip("no ruby")
    done = subprocess.run(["ruby", "-e", POST_ASSIGNS, str(REPO), str(tmp_path / "site"),
                           "-thread-pool-vs-virtual-threads.md", "pool-vs-virtual"],
                          capture_output=True, text=True, timeout=300)
    if done.returncode != 0 and "cannot load such file -- jekyll" in done.stderr:
        pytest.skip("no Jekyll for ruby")
    assert done.returncode == 0, done.stderr
    score, document, numbers = map(int, done.stdout.split())
    assert numbers > 50
    # the post's own `assign pv` and methodology.html's one walk; each number walked it once more
    assert document < score < 4 * document
