"""repo_relative (analysis/paths.py): the path as the site links it, the same text the
pathlib form gave (Path.absolute of both, relpath, as_posix) for every shape of path."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from analysis.paths import repo_relative


def through_pathlib(path, site_root) -> str:
    return Path(os.path.relpath(Path(path).absolute(), Path(site_root).absolute())).as_posix()


@pytest.mark.parametrize("path,site_root", [
    ("runs/a/b.hlog", "."), ("runs/a/../b//c/./d", "."), ("runs/", "./"), (".", "."),
    ("", "."), ("runs/x", ""), ("a/b/", "a"), ("a//b", "a/./"), ("../outside", "."),
    (Path("runs/a"), Path(".")), ("/etc/hosts", "sub/.."),
])
def test_same_text_as_through_pathlib(tmp_path, monkeypatch, path, site_root):
    monkeypatch.chdir(tmp_path)
    assert repo_relative(path, site_root) == through_pathlib(path, site_root)
    absolute = tmp_path / "site"
    assert repo_relative(absolute / "runs" / "r" / path, absolute) == \
        through_pathlib(absolute / "runs" / "r" / path, absolute)
