"""scripts/mirror_static.py lists only the folders that changed since its last run: a folder
whose source and published copy have the mtime and inode recorded then is not listed again
(at 1,000 runs listing ~190,000 files was most of the mirror's time). What it publishes must
stay what a walk of every file publishes."""
from __future__ import annotations

import errno
import json
import os
import sys
import time
from pathlib import Path

import pytest

from tests.helpers import TREES, small_site

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "scripts"))
import mirror_static  # noqa: E402


def mirror(src: Path, dest: Path, monkeypatch) -> set[str]:
    """One run of the script in src; the folders it listed, relative to src or dest."""
    listed: set[str] = set()
    scandir = os.scandir

    def counting(path=".", *args):
        if isinstance(path, int):      # shutil.rmtree lists by descriptor
            return scandir(path, *args)
        path = os.fspath(path)
        for top in (dest, src):
            if path.startswith(str(top) + os.sep) or path == str(top):
                listed.add(os.path.relpath(path, top))
                break
        return scandir(path, *args)

    config = src / ".cache" / "site-base.yml"
    config.parent.mkdir(exist_ok=True)
    config.write_text(json.dumps({"exclude": ["scripts/", ".cache/"]}), encoding="utf-8")
    monkeypatch.chdir(src)
    monkeypatch.setattr(sys, "argv", ["mirror_static.py", "--config", str(config), "--dest",
                                      str(dest), "--overlay", str(src / ".cache" / "mirror.yml"),
                                      *TREES])
    with monkeypatch.context() as m:
        m.setattr(mirror_static.os, "scandir", counting)
        assert mirror_static.main() == 0
    return listed


def age(*tops: Path) -> None:
    """Every folder under tops an hour old: older than the script's settling time."""
    then = time.time() - 3600
    for top in tops:
        for folder in [top, *(p for p in top.rglob("*") if p.is_dir())]:
            os.utime(folder, (then, then))


def published(dest: Path) -> dict[str, tuple[bytes, int]]:
    return {p.relative_to(dest).as_posix(): (p.read_bytes(), p.stat().st_ino)
            for tree in TREES for p in sorted((dest / tree).rglob("*")) if p.is_file()}


def test_unchanged_folders_are_not_listed_and_changes_are_still_published(tmp_path,
                                                                            monkeypatch):
    src, dest = small_site(tmp_path / "src"), tmp_path / "site"
    mirror(src, dest, monkeypatch)
    age(src, dest)
    mirror(src, dest, monkeypatch)     # walks everything, records the settled folders
    # (folders with nothing published have no copy to compare: listed, as cheap as before)
    assert {f for f in mirror(src, dest, monkeypatch) if (dest / f).is_dir()} <= set(TREES)
    # a file added two levels down, a published file removed by hand, a run added, a
    # folder emptied, a file edited in place (a hard link: it shows through)
    (src / "runs" / "r1" / "sub" / "c.hlog").write_text("new\n")
    (dest / "assets" / "charts" / "r2" / "a.csv").unlink()
    (src / "runs" / "r3").mkdir()
    (src / "runs" / "r3" / "d.csv").write_text("r3\n")
    (src / "assets" / "data" / "r2" / "sub" / "b.hlog").unlink()
    with open(src / "assets" / "data" / "r1" / "a.csv", "a", encoding="utf-8") as f:
        f.write("appended\n")
    listed = mirror(src, dest, monkeypatch)
    assert "runs/r1/sub" in listed and "runs/r1" not in listed and "runs/r2/sub" not in listed
    assert published(dest) == published(mirror_from_nothing(src, tmp_path, monkeypatch))
    assert not (dest / "assets" / "data" / "r2" / "sub").exists()
    assert (dest / "runs" / "r1" / "sub" / "c.hlog").read_text() == "new\n"


def mirror_from_nothing(src: Path, tmp_path: Path, monkeypatch) -> Path:
    """The same source mirrored into an empty site by a walk of every file."""
    (src / ".cache" / "mirror-state.json").unlink()
    fresh = tmp_path / "fresh"
    mirror(src, fresh, monkeypatch)
    return fresh


@pytest.mark.parametrize("recorded", [True, {"walked": {}}])
def test_a_state_without_folders_walks_everything(tmp_path, monkeypatch, recorded):
    """The state an older script wrote (`true`), or a run that recorded no folder: every
    folder is listed."""
    src, dest = small_site(tmp_path / "src"), tmp_path / "site"
    mirror(src, dest, monkeypatch)
    state_path = src / ".cache" / "mirror-state.json"
    state = json.loads(state_path.read_text(encoding="utf-8"))
    state_path.write_text(json.dumps({key: recorded for key in state}), encoding="utf-8")
    age(src, dest)
    assert "runs/r1/sub" in mirror(src, dest, monkeypatch)


def test_each_destination_folder_is_made_real_once_not_once_a_file(tmp_path, monkeypatch):
    """real_dirs (a relpath and an lstat a level) once for each folder a run places files in:
    at 1,000 runs once a file was ~40 % of placing 227,000 files. Each file is still placed."""
    src, dest = small_site(tmp_path / "src"), tmp_path / "src" / "_site"
    for tree in TREES:
        for k in range(5):
            (src / tree / "r1" / f"more{k}.csv").write_text(f"{tree} {k}\n")
    made: list[str] = []
    real_dirs = mirror_static.real_dirs

    def counting(top: str, rel: str) -> None:
        made.append(rel)
        real_dirs(top, rel)

    monkeypatch.setattr(mirror_static, "real_dirs", counting)
    mirror(src, dest, monkeypatch)
    assert sorted(made) == sorted(set(made))
    folders = {p.parent.relative_to(dest).as_posix() for tree in TREES
               for p in (dest / tree).rglob("*") if p.is_file()}
    assert set(made) == folders
    shown = published(dest)
    assert {f"{tree}/r1/more{k}.csv" for tree in TREES for k in range(5)} <= set(shown)
    assert all(shown[rel] == ((src / rel).read_bytes(), (src / rel).stat().st_ino)
               for rel in shown)      # each a hard link of its source


def test_files_are_tested_and_linked_by_name_through_their_folders(tmp_path, monkeypatch):
    """The front-matter test opens a file by its name in the source folder's descriptor and
    reads three bytes; the link is made between the two folders' descriptors. A path looked
    up from the root and a Python file object a file were most of placing 227,000 files at
    1,000 runs. Only a file that starts with `---` gets the whole first-line test."""
    src, dest = small_site(tmp_path / "src"), tmp_path / "site"
    (src / "runs" / "r1" / "dashes.csv").write_text("---x,not a header\n")
    (src / "runs" / "r1" / "short").write_text("--")
    whole_test: list[str] = []
    by_name: list[str] = []
    linked: list[tuple[str, str]] = []
    os_open, os_link = os.open, os.link

    def counting_open(path, *args, **kwargs):
        whole_test.append(os.fspath(path))
        return open(path, *args, **kwargs)

    def counting_os_open(path, flags, *args, dir_fd=None, **kwargs):
        if dir_fd is not None:
            by_name.append(path)
        return os_open(path, flags, *args, dir_fd=dir_fd, **kwargs)

    def counting_link(src_path, dst_path, **kwargs):
        if kwargs.get("src_dir_fd") is not None and kwargs.get("dst_dir_fd") is not None:
            linked.append((src_path, dst_path))
        return os_link(src_path, dst_path, **kwargs)

    monkeypatch.setattr(mirror_static, "open", counting_open, raising=False)
    monkeypatch.setattr(mirror_static.os, "open", counting_os_open)
    monkeypatch.setattr(mirror_static.os, "link", counting_link)
    mirror(src, dest, monkeypatch)
    monkeypatch.undo()
    shown = published(dest)
    names = sorted(rel.rsplit("/", 1)[-1] for rel in shown)
    assert "runs/r1/dashes.csv" in shown and "runs/r1/short" in shown
    assert [os.path.basename(p) for p in whole_test] == ["dashes.csv"]
    assert sorted(by_name) == names
    assert sorted(a for a, b in linked if a == b) == names
    assert all(shown[rel] == ((src / rel).read_bytes(), (src / rel).stat().st_ino)
               for rel in shown)


def test_a_page_found_among_a_folders_files_leaves_the_tree_to_jekyll(tmp_path, monkeypatch,
                                                                     capsys):
    """A file whose first line is `---` and blanks is a page to Jekyll, whichever file of its
    folder it is: the tree is left to Jekyll (nothing of it in the site), the others
    mirrored."""
    src, dest = small_site(tmp_path / "src"), tmp_path / "site"
    (src / "assets" / "data" / "r2" / "sub" / "page.txt").write_text("--- \t\ntitle: x\n---\n")
    mirror(src, dest, monkeypatch)
    assert "assets/data/r2/sub/page.txt starts with a '---' line" in capsys.readouterr().err
    assert not (dest / "assets" / "data").exists()
    assert (dest / "runs" / "r1" / "a.csv").is_file()
    assert (dest / "assets" / "charts" / "r2" / "sub" / "b.hlog").is_file()


def test_a_link_refused_half_way_copies_the_rest_with_their_times(tmp_path, monkeypatch):
    """Another file system (EXDEV) met after some links: those stay links, every other file is
    a copy with its source's bytes and mtime, and the next run finds all of them current."""
    src, dest = small_site(tmp_path / "src"), tmp_path / "site"
    os_link = os.link
    links = []

    def refusing(*args, **kwargs):
        if len(links) == 3:
            raise OSError(errno.EXDEV, "Invalid cross-device link")
        links.append(args)
        return os_link(*args, **kwargs)

    with monkeypatch.context() as m:
        m.setattr(mirror_static.os, "link", refusing)
        mirror(src, dest, monkeypatch)
    shown = published(dest)
    linked = [rel for rel in shown if shown[rel][1] == (src / rel).stat().st_ino]
    assert len(linked) == 3 and len(shown) > 6
    for rel, (data, _) in shown.items():
        assert data == (src / rel).read_bytes()
        assert (dest / rel).stat().st_mtime_ns == (src / rel).stat().st_mtime_ns
    placed = []
    place = mirror_static.Mirror.place
    monkeypatch.setattr(mirror_static.Mirror, "place",
                        lambda self, *a: placed.append(a) or place(self, *a))
    monkeypatch.setattr(mirror_static.Mirror, "link_all",
                        lambda self, *a: placed.append(a))
    mirror(src, dest, monkeypatch)
    assert placed == [] and published(dest) == shown
