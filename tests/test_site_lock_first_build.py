"""The build after a site's first build skips Jekyll when nothing changed, also when bundler
wrote Gemfile.lock during that first build (a fresh clone built with scripts/site.sh or
build-site.sh, not `make site`, whose jekyll-deps step checks the bundle first; the scale
bench's corpora): build-site.sh settles the lock before scripts/site_stamp.py hashes it.
Before, the second build found the lock changed, removed Jekyll's record and rendered every
page, which at 1,000 runs made the first added run cost a full render (issue 36)."""
from __future__ import annotations

import shutil

import pytest

from tests.helpers import assert_same_site, github_pages_build, small_site
from tests.test_site_stamp import built

pytestmark = pytest.mark.site


def test_a_lock_written_by_the_first_build_does_not_rebuild_the_second(tmp_path):
    if shutil.which("bundle") is None:
        pytest.skip("bundler is not installed: no Gemfile.lock is written")
    src, dest = small_site(tmp_path / "src", bundle_checked=False), tmp_path / "local"
    assert not (src / "Gemfile.lock").exists()
    assert built(src, dest)
    assert (src / "Gemfile.lock").is_file()
    assert not built(src, dest)
    github_pages_build(src, tmp_path / "pages")
    assert_same_site(dest, tmp_path / "pages")
