"""pipeline/generated_pages.py: pages.is_generated's answers reused between builds only while
the page's file is as it was; a page rewritten (even to the same size) is read again."""
from __future__ import annotations

import os

import pytest

from analysis.pipeline.generated_pages import GeneratedPages
from analysis.write import pages

GENERATED = "---\ntitle: t\ngenerated_by: loadcurve\n---\n<p>report</p>\n"
# the same size, written by a person
PERSONS = "---\ntitle: t\ngenerated_by: someone!!\n---\n<p>report</p>\n"


def _unparsable(path):
    raise AssertionError(f"{path} read again")


def test_an_unchanged_page_is_not_read_again_and_a_changed_one_is(tmp_path, monkeypatch):
    assert len(GENERATED) == len(PERSONS)
    page = tmp_path / "_reports" / "r.html"
    page.parent.mkdir()
    page.write_text(GENERATED)
    memo = GeneratedPages(tmp_path / "cache")
    assert memo.is_generated(page)
    memo.save()

    with monkeypatch.context() as patch:
        patch.setattr(pages, "is_generated", _unparsable)
        assert GeneratedPages(tmp_path / "cache").is_generated(page)

    stamp = page.stat()
    page.write_text(PERSONS)
    os.utime(page, ns=(stamp.st_atime_ns, stamp.st_mtime_ns))   # size and mtime as before
    assert not GeneratedPages(tmp_path / "cache").is_generated(page)


def test_a_page_not_asked_about_is_forgotten(tmp_path):
    a, b = tmp_path / "a.html", tmp_path / "b.html"
    a.write_text(GENERATED)
    b.write_text(GENERATED)
    memo = GeneratedPages(tmp_path / "cache")
    assert memo.is_generated(a) and memo.is_generated(b)
    memo.save()
    b.unlink()
    memo = GeneratedPages(tmp_path / "cache")
    assert memo.is_generated(a)
    memo.save()
    assert set(GeneratedPages(tmp_path / "cache").entries) == {os.fspath(a)}


@pytest.mark.parametrize("text", ["not json", "[1, 2]", '{"x": 3}'])
def test_a_damaged_memo_is_read_as_empty(tmp_path, text):
    (tmp_path / "cache").mkdir()
    (tmp_path / "cache" / "generated-pages.json").write_text(text)
    page = tmp_path / "p.html"
    page.write_text(GENERATED)
    assert GeneratedPages(tmp_path / "cache").is_generated(page)


def test_a_page_the_build_wrote_is_known_without_a_parse(tmp_path, monkeypatch):
    """The build records the report pages it wrote (runner._record -> written): after a build
    from nothing, which asked of no page before writing them, the next one parses none."""
    page = tmp_path / "_reports" / "r.html"
    page.parent.mkdir()
    page.write_text(GENERATED)
    memo = GeneratedPages(tmp_path / "cache")
    memo.written(page)
    memo.save()
    with monkeypatch.context() as patch:
        patch.setattr(pages, "is_generated", _unparsable)
        assert GeneratedPages(tmp_path / "cache").is_generated(page)
    page.write_text(PERSONS)
    assert not GeneratedPages(tmp_path / "cache").is_generated(page)
