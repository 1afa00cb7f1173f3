"""Which site's templates render the report pages, and the baseurl their links carry.

Apart from write/liquid_pages.py because every build asks this (pipeline/cache.py's
templates_version, part of each run's key), while only a build that renders a page needs
python-liquid: its import (~0.2 CPU s, babel and asyncio with it) was most of a no-change
build's start.
"""
from __future__ import annotations

import functools
import os
import re
from pathlib import Path

import yaml

# The site this package is part of: its templates render the pages of a site root that has none
# (a build into a data-only folder, as the tests and golden recorders do).
OWN_SITE = Path(__file__).resolve().parents[2]


def template_root(site_root: str | Path) -> Path:
    """The site whose _layouts and _includes render the pages: the site being built, or, when
    it has no report layout, the one this package belongs to."""
    site = Path(site_root)
    return site if (site / "_layouts" / layout_file("report")).is_file() else OWN_SITE


def layout_file(layout: str) -> str:
    """The file in _layouts/ of a page's `layout` (report, scenario, jmh-report, or another
    kind's: analysis/kinds.py)."""
    return f"{layout}.html"


def baseurl(site_root: str | Path) -> str:
    """The baseurl Jekyll will build with, as its URL filters use it (no trailing slash, ""
    for none): the path of `make site URL=https://host/path` (LOADCURVE_URL, as
    scripts/build-site.sh splits it), else _config.yml's."""
    url = os.environ.get("LOADCURVE_URL", "")
    match = re.match(r"^https?://[^/]+(/.*)?$", url)
    if match:
        return (match.group(1) or "").rstrip("/")
    config = Path(site_root) / "_config.yml"
    try:
        return _baseurl(str(config), config.stat().st_mtime_ns)
    except OSError:
        return ""


@functools.lru_cache(maxsize=4)
def _baseurl(config: str, mtime_ns: int) -> str:
    """(once per version of the file: parsing _config.yml costs more than rendering a page)"""
    try:
        value = yaml.safe_load(Path(config).read_text(encoding="utf-8")).get("baseurl")
    except (OSError, AttributeError, yaml.YAMLError):
        return ""
    text = "" if value is None else str(value).rstrip("/")
    return text if not text or text.startswith("/") else "/" + text
