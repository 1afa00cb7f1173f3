"""The libraries' versions in the code digest (pipeline/dist_versions.py) are importlib.metadata's,
read without importing it; whatever is not the plain case is left to importlib.metadata."""
from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version

import pytest

from analysis.pipeline import cache, dist_versions
from tests.conftest import REPO


def _old_loop(names) -> list[str]:
    """What code_version hashed before: `version(name)` in turn, up to the first missing one."""
    out = []
    try:
        for name in names:
            out.append(f"{name}={version(name)}")
    except Exception:  # noqa: BLE001
        pass
    return out


def _printed_by_a_fresh_process(script: str) -> list[str]:
    """The words a new interpreter prints running script in the repository (no test's imports)."""
    out = subprocess.run([sys.executable, "-c", script], cwd=REPO, capture_output=True,
                         text=True, timeout=120, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert out.returncode == 0, out.stderr
    return out.stdout.split()


def test_the_installed_libraries_read_as_importlib_metadata_reads_them():
    assert dist_versions.versions(cache.LIBRARIES) == _old_loop(cache.LIBRARIES)
    # The fast way runs in a build's own process. It is asked in a fresh one: this process may
    # have imported dask (test_build_executor), whose importlib_metadata backport puts a second
    # distribution finder on sys.meta_path, and then the folders are rightly left alone.
    assert _printed_by_a_fresh_process(
        "from analysis.pipeline import cache, dist_versions; "
        "print(dist_versions._from_folders(cache.LIBRARIES) is not None)") == ["True"]


def test_a_second_distribution_finder_leaves_the_versions_to_importlib_metadata(monkeypatch):
    """What importing dask does (importlib_metadata's MetadataPathFinder on sys.meta_path):
    importlib.metadata asks that finder too, so the folders alone may not be its answer."""
    class Finder:
        @staticmethod
        def find_distributions(context=None):
            return iter(())

    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder()])
    assert dist_versions._from_folders(cache.LIBRARIES) is None
    assert dist_versions.versions(cache.LIBRARIES) == _old_loop(cache.LIBRARIES)


def test_the_code_digest_does_not_import_importlib_metadata():
    assert _printed_by_a_fresh_process(
        "import sys; from analysis.pipeline.cache import code_version; code_version(); "
        "print('importlib.metadata' in sys.modules)") == ["False"]


def _dist(folder, name: str, text: str):
    info = folder / name
    info.mkdir(parents=True)
    (info / "METADATA").write_text(text)
    return info / "METADATA"


def test_the_first_folder_on_the_path_wins_and_an_edit_in_place_is_read(tmp_path, monkeypatch):
    metadata = _dist(tmp_path, "pyYAML-99.1.dist-info",
                     "Metadata-Version: 2.1\nName: PyYAML\nVersion: 99.1\n\nbody\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert dist_versions.versions(cache.LIBRARIES) == _old_loop(cache.LIBRARIES)
    assert "PyYAML=99.1" in dist_versions.versions(cache.LIBRARIES)
    metadata.write_text("Metadata-Version: 2.1\nName: PyYAML\nVersion: 99.2rc1\n")
    assert "PyYAML=99.2rc1" in dist_versions.versions(cache.LIBRARIES)
    assert dist_versions.versions(cache.LIBRARIES) == _old_loop(cache.LIBRARIES)


@pytest.mark.parametrize("layout", ["two folders", "egg-info", "folded", "no version",
                                    "spaces", "missing library"])
def test_what_is_not_plain_is_left_to_importlib_metadata(tmp_path, monkeypatch, layout):
    names = cache.LIBRARIES
    if layout == "two folders":
        _dist(tmp_path, "numpy-98.0.dist-info", "Name: numpy\nVersion: 98.0\n")
        _dist(tmp_path, "NumPy-97.0.dist-info", "Name: numpy\nVersion: 97.0\n")
    elif layout == "egg-info":
        _dist(tmp_path, "numpy-96.0.egg-info", "Name: numpy\nVersion: 96.0\n")
        (tmp_path / "numpy-96.0.egg-info" / "PKG-INFO").write_text("Name: numpy\nVersion: 96\n")
    elif layout == "folded":
        _dist(tmp_path, "numpy-95.0.dist-info", "Name: numpy\nVersion: 95.0\n  .1\n")
    elif layout == "no version":
        _dist(tmp_path, "numpy-94.0.dist-info", "Name: numpy\nSummary: x\n\nVersion: 94\n")
    elif layout == "spaces":
        _dist(tmp_path, "numpy-93.0.dist-info", "Name: numpy\nVersion: 93.0 \n")
    else:
        names = ("numpy", "no-such-library-here", "pandas")
    monkeypatch.syspath_prepend(str(tmp_path))
    assert dist_versions._from_folders(names) is None
    assert dist_versions.versions(names) == _old_loop(names)
