"""A series' history page and the regressions feed through Jekyll: a synthetic 30-version series
(tests/series_gen.py, in memory) goes through the build's reduce step into a copy of the site;
the feed has one entry per injected change and is valid Atom (jing), a hostile version string
stays text everywhere, and the history page links only what exists."""
from __future__ import annotations

import shutil
import subprocess

import pytest

from tests import series_gen
from tests.sitebuild import assemble, build

pytestmark = pytest.mark.slow     # (make check leaves it out; make test runs it)

HOSTILE = '0.12 <script>alert(1)</script> & "q"'
OUTPUTS = ("_data/history", "_series", "_data/regressions.yml", "assets/history",
           "assets/data/cells.csv")


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if shutil.which("jing") is None:
        pytest.skip("needs Debian's jing")
    tmp = tmp_path_factory.mktemp("history-site")
    work = tmp / "work"
    rows = series_gen.cell_rows(3)
    for row in rows:
        if row["version"] == "0.12":
            row["version"] = HOSTILE
    step = series_gen.reduced(work, rows)
    assert not step.errors
    source = assemble(tmp / "src")
    for rel in OUTPUTS:
        src, dest = work / rel, source / rel
        if src.is_dir():
            shutil.copytree(src, dest, dirs_exist_ok=True)
        else:
            shutil.copy2(src, dest)
    result = build(source, tmp / "site")
    assert result.returncode == 0, result.stdout + result.stderr
    return tmp / "site"


def test_feed_has_each_change_and_is_valid_atom(built, repo):
    feed = built / "feed" / "regressions.xml"
    text = feed.read_text()
    assert text.count("<entry>") == 2
    assert "synthetic: improvement -" in text and "synthetic: regression +" in text
    atom = repo / "tests" / "schemas" / "atom.rnc"
    result = subprocess.run(["jing", "-c", str(atom), str(feed)], capture_output=True,
                            text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_hostile_version_is_text(built):
    for rel in ("feed/regressions.xml", "history/synthetic/index.html"):
        text = (built / rel).read_text()
        assert "<script>alert" not in text, rel
        assert "&lt;script&gt;alert(1)&lt;/script&gt;" in text, rel


def test_history_page_shows_every_cell_and_its_changes(built):
    page = (built / "history" / "synthetic" / "index.html").read_text()
    assert page.count("<h1") == 1
    for system in series_gen.SYSTEMS:
        for load in series_gen.LOADS:
            assert f'id="{system}-{load}"' in page
            assert (built / "assets" / "history" / "synthetic" / f"{system}-{load}.svg").is_file()
    assert page.count('<li class="regression">') == 1
    assert page.count('<li class="improvement">') == 1
    home = (built / "index.html").read_text()
    assert "/history/synthetic/" in home and "/comparisons/pool-vs-virtual/" in home


def test_history_page_and_its_charts_pass_the_nu_checker(built):
    """The page and every chart it shows (issue 34: each version's point with a <title>) are
    valid HTML and SVG, a hostile version string among the titles."""
    from tests.test_validators import vnu
    svgs = sorted((built / "assets" / "history" / "synthetic").glob("*.svg"))
    assert len(svgs) == len(series_gen.SYSTEMS) * len(series_gen.LOADS)
    assert all("<title>version " in svg.read_text() for svg in svgs)
    errors = vnu(built / "history" / "synthetic" / "index.html", *svgs)
    assert not errors, errors
