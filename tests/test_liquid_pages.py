"""Report pages rendered by Python (analysis/write/liquid_pages.py, issue 15) are the pages
Jekyll's own Liquid gives from the same layouts, includes and data.

The site is assembled as for the site tests (the repository's real runs, the injection fixture,
the run with scenarios); for every run document in it, a page per layout (report or jmh-report,
and each scenario page) is added with `layout:` set, and Jekyll renders it from _data/runs/.
Each must equal what liquid_pages renders for the same page, once Jekyll's address is filled in
and the braces it escapes are read back. The generated pages of the real runs, as built, are
checked against the same Jekyll pages, so the escaping and the address survive Jekyll too.
"""
from __future__ import annotations

import html
import re
import shutil
from pathlib import Path

import pytest
import yaml

from analysis.read.checks import load_yaml
from analysis.write import liquid_pages
from tests.sitebuild import REPO, assemble, build

pytestmark = pytest.mark.site

URL = yaml.safe_load((REPO / "_config.yml").read_text())["url"]
ARTICLE = re.compile(r'<article class="report">.*</article>', re.S)


def article(text: str) -> str:
    """The report's article, blank lines dropped (the layouts' `{{ content }}` leaves one)."""
    match = ARTICLE.search(text)
    assert match, text[:500]
    return "\n".join(line for line in match.group(0).splitlines() if line.strip())


def ours_as_built(text: str) -> str:
    """What a browser reads in a page liquid_pages wrote: `&#123;` and `&#125;` are braces."""
    return text.replace("&#123;", "{").replace("&#125;", "}")


def jekyll_root_relative(text: str) -> str:
    """Jekyll's page with its absolute URLs made root-relative, as report pages have them
    (liquid_pages: reports are read on the site only)."""
    return text.replace(f'"{URL}/', '"/')


def check_pages(src: Path) -> list[tuple[str, str, dict, str, dict]]:
    """One (file, layout, page, run id, doc) per page to compare, for every run document."""
    docs = {p.stem: p for folder in ("_data/runs", "_rundata") if (src / folder).is_dir()
            for p in sorted((src / folder).glob("*.yml"))}
    out = []
    for run_id, path in sorted(docs.items()):
        doc = load_yaml(path.read_text(), yaml.SafeLoader)   # libyaml where it reads the same
        layout = "jmh-report" if "jmh_tables" in doc else "report"
        out.append((f"{run_id}.html", layout, {"run": run_id}, run_id, doc))
        for scenario in (doc.get("scenarios") or {}) if layout == "report" else ():
            out.append((f"{run_id}--{scenario}.html", "scenario",
                        {"run": run_id, "scenario": scenario}, run_id, doc))
    for name, layout, page, run_id, _ in out:
        page["permalink"] = f"/liquid-check/{Path(name).stem}/"
    return out


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("liquid")
    src = assemble(tmp / "src")
    pages = check_pages(src)
    folder = src / "liquid-check"
    folder.mkdir()
    for name, layout, page, run_id, doc in pages:
        if not (src / "_data" / "runs" / f"{run_id}.yml").exists():   # Jekyll reads _data only
            shutil.copy2(src / "_rundata" / f"{run_id}.yml", src / "_data" / "runs")
        front = {"layout": layout, **page}
        (folder / name).write_text("---\n" + yaml.safe_dump(front) + "---\n")
    result = build(src, tmp / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    return src, tmp / "site", pages


def test_every_kind_of_page_is_checked(built):
    _, _, pages = built
    layouts = {layout for _, layout, *_ in pages}
    runs = {run_id for *_, run_id, _ in pages}
    assert layouts == {"report", "scenario", "jmh-report"}
    assert {"pool-vs-virtual", "many-servers", "jmh-actors-streams", "injection",
            "scenarios-demo"} <= runs


def test_python_renders_what_jekyll_renders(built):
    src, site, pages = built
    differ = []
    for name, layout, page, run_id, doc in pages:
        url = page["permalink"]
        jekyll = jekyll_root_relative(article((site / url.strip("/") / "index.html").read_text()))
        ours = article(ours_as_built(liquid_pages.render_page(
            src, layout, {**page, "url": url}, run_id, doc)))
        if ours != jekyll:
            at = next(i for i, (a, b) in enumerate(zip(ours, jekyll + "\0")) if a != b)
            differ.append(f"{name}: ours {ours[at - 80:at + 80]!r}\n jekyll {jekyll[at - 80:at + 80]!r}")
    assert differ == []


def test_the_generated_pages_survive_jekyll(built):
    """The committed pages of the real runs, built by Jekyll like any page, hold the same
    article as Jekyll's Liquid gives from their data (the URLs inside differ only by the page's
    own address, which the summary table's links carry, and by being root-relative)."""
    src, site, pages = built
    for name, layout, page, run_id, doc in pages:
        generated = src / "_reports" / (f"{run_id}.html" if "scenario" not in page
                                        else f"{run_id}/{page['scenario']}.html")
        if not generated.is_file() or "generated_by: loadcurve" not in generated.read_text():
            continue
        url = generated.relative_to(src).as_posix()
        front = yaml.safe_load(generated.read_text().split("---\n")[1])
        own_url = front.get("permalink") or f"/reports/{run_id}/"
        built_page = article((site / own_url.strip("/") / "index.html").read_text())
        jekyll = article((site / page["permalink"].strip("/") / "index.html").read_text())
        jekyll = jekyll_root_relative(jekyll.replace(URL + page["permalink"], URL + own_url))
        assert html.unescape(built_page) == html.unescape(jekyll), url


def test_manifest_strings_cannot_become_liquid(built):
    """The injection fixture's title holds `{{ site }}` and `{% include x %}`: in a page
    written by liquid_pages no brace is left for Jekyll."""
    src, _, pages = built
    for name, layout, page, run_id, doc in pages:
        if run_id != "injection":
            continue
        text = liquid_pages.render_page(src, layout, {**page, "url": "/x/"}, run_id, doc)
        assert "&#123;&#123; site &#125;&#125;" in text and "&#123;% include x %&#125;" in text
        assert "{" not in text and "}" not in text


def test_a_float_printed_by_a_template_is_refused(tmp_path):
    """Ruby and Python print floats differently (1.0e-05 / 1e-05): the view blocks give text."""
    (tmp_path / "_layouts").mkdir()
    shutil.copytree(REPO / "_includes", tmp_path / "_includes")
    (tmp_path / "_layouts" / "report.html").write_text(
        "---\nlayout: default\n---\n{{ site.data.runs[page.run].x | escape }}")
    with pytest.raises(Exception, match="float"):
        liquid_pages.render_page(tmp_path, "report", {"run": "r"}, "r", {"x": 0.1})


def test_jekyll_filters():
    assert liquid_pages._escape("""<a href="x">'&'</a>""") == \
        "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;"
    assert liquid_pages._escape(None) == "" and liquid_pages._escape(3) == "3"
    assert liquid_pages._slugify("Virtual Threads_&_C++") == "virtual-threads-c"
    assert liquid_pages._slugify("-Café 2²-") == "café-2"   # Jekyll keeps letters of any script


def test_urls_are_root_relative_under_the_configured_baseurl(tmp_path):
    """absolute_url and relative_url give `baseurl` + the path, percent-encoded as Jekyll's
    Addressable does: a quote or a brace in a path cannot leave the attribute."""
    (tmp_path / "_layouts").mkdir()
    shutil.copytree(REPO / "_includes", tmp_path / "_includes")
    (tmp_path / "_config.yml").write_text("baseurl: /lc/\n")
    (tmp_path / "_layouts" / "report.html").write_text(
        "---\nlayout: default\n---\n<a href=\"{{ site.data.runs[page.run].p | absolute_url }}\">"
        "<img src=\"{{ site.data.runs[page.run].q | relative_url }}\">")
    text = liquid_pages.render_page(tmp_path, "report", {"run": "r"}, "r",
                                    {"p": 'runs/a "b" {{x}}.hlog', "q": "https://x.example/c.svg"})
    assert text == '<a href="/lc/runs/a%20%22b%22%20%7B%7Bx%7D%7D.hlog"><img src="https://x.example/c.svg">'
    assert liquid_pages.baseurl(REPO) == ""


def test_a_broken_include_is_an_error_naming_the_template(tmp_path):
    from analysis.errors import BuildError
    (tmp_path / "_layouts").mkdir()
    (tmp_path / "_includes").mkdir()
    (tmp_path / "_layouts" / "report.html").write_text("---\n---\n{% include gone.html %}")
    with pytest.raises(BuildError, match=r"report\.html: the report page could not be "
                                         r"rendered: .*gone\.html"):
        liquid_pages.render_page(tmp_path, "report", {"run": "r"}, "r", {})


def test_make_site_url_gives_the_pages_its_path(monkeypatch):
    """`make site URL=https://host/lc` builds Jekyll with baseurl /lc (build-site.sh): the
    pages rendered before it must link under /lc too (baseurl is in each run's cache key)."""
    monkeypatch.setenv("LOADCURVE_URL", "https://bench.example.net/lc")
    assert liquid_pages.baseurl(REPO) == "/lc"
    monkeypatch.setenv("LOADCURVE_URL", "https://bench.example.net")
    assert liquid_pages.baseurl(REPO) == ""
