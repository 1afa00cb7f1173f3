"""scripts/tag_feeds.py reads a page's front matter only when the page changed since its last
run (size, mtime, ctime, inode): at 1,000 runs parsing every report was 0.3 CPU s of a build
that adds one. The feed pages it writes must be the ones a reading of every page gives."""
from __future__ import annotations

from pathlib import Path

from tests.sitebuild import tag_feeds


def page(path: Path, tags: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"---\ntitle: {path.stem}\ntags: {tags}\n---\n<p>body</p>\n", encoding="utf-8")


def feeds(src: Path) -> set[str]:
    return {p.name for p in (src / "feed" / "by_tag").glob("*.xml")}


def test_unchanged_pages_are_not_parsed_again_and_changes_still_count(tmp_path, monkeypatch):
    module = tag_feeds()
    parsed: list[str] = []
    parse = module.front_matter
    monkeypatch.setattr(module, "front_matter", lambda path: parsed.append(path.name) or parse(path))
    src = tmp_path / "src"
    page(src / "_posts" / "2026-01-01-a.md", "[jvm, http]")
    page(src / "_reports" / "r1.html", "[jvm, loom]")
    page(src / "_reports" / "r2.html", "[grpc]")
    module.write(src)
    assert feeds(src) == {"jvm.xml", "http.xml", "loom.xml", "grpc.xml"}
    assert sorted(parsed) == ["2026-01-01-a.md", "r1.html", "r2.html"]
    parsed.clear()
    assert module.write(src) == [] and parsed == []
    # a page retagged, a page removed, a page added: those are read, and the feeds follow
    page(src / "_reports" / "r1.html", "[jvm, virtual-threads]")
    (src / "_reports" / "r2.html").unlink()
    page(src / "_reports" / "r3.html", "[jmh]")
    module.write(src)
    assert sorted(parsed) == ["r1.html", "r3.html"]
    assert feeds(src) == {"jvm.xml", "http.xml", "virtual-threads.xml", "jmh.xml"}
    # the same answer as a run without the record
    (src / ".cache" / "tag-feeds.json").unlink()
    assert module.write(src) == [] and feeds(src) == {"jvm.xml", "http.xml", "virtual-threads.xml", "jmh.xml"}
