"""Which charts get a PNG (issue 15): pages show the SVG; a PNG is drawn only where something
cannot: a page's og:image (link cards want a raster), and a feed entry (feed readers drop
<picture>/<source> and show the <img>, so every chart a post includes needs its PNG).

Posts can include any chart of any run through Liquid, so the cut is by run: every chart of a run
some post names (its id as a word anywhere in _posts/), and the og:image charts of every run.
At 1,000 runs and a few posts that drops the PNG of almost every chart, about half the drawing.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

POSTS_DIR = "_posts"
WORD = re.compile(r"[A-Za-z0-9_-]+")   # a run id (manifest.ID_RE) is one such word


def runs_in_posts(site_root: Path, run_ids: set[str], is_generated=None) -> set[str]:
    """The runs whose id appears as a word in some file under _posts/ or _drafts/, or in a page
    a person wrote in _reports/ (an include's run=, an `assign run = "..."`, an image path):
    over-inclusive by design, a PNG or a data document too many is harmless. These runs' data
    documents go to _data/runs/, where the includes read them (paths.data_path).
    `is_generated`: pages.is_generated or a memo of it (pipeline/generated_pages.py)."""
    if is_generated is None:
        from analysis.write.pages import is_generated
    words: set[str] = set()
    for folder_name in (POSTS_DIR, "_drafts", "_reports"):
        folder = Path(site_root) / folder_name
        for path in sorted(folder.rglob("*")) if folder.is_dir() else ():
            if not path.is_file() or path.is_symlink() or \
                    (folder_name == "_reports" and is_generated(path)):
                continue
            words.update(WORD.findall(path.read_text(encoding="utf-8", errors="replace")))
    return words & set(run_ids)


def keep_pngs(jobs: list[dict[str, Any]], doc: dict[str, Any], pngs: set[str] | None) -> None:
    """Draw only the PNGs in `pngs` (None: all): the other jobs get png None, and the data
    file's chart entries lose their `png` key (chart.html then uses the SVG as the <img>)."""
    if pngs is None:
        return
    for job in jobs:
        if job["png"] not in pngs:
            job["png"] = None
    _drop_png_keys(doc, pngs)


def _drop_png_keys(value: Any, pngs: set[str]) -> None:
    if isinstance(value, dict):
        if "svg" in value and value.get("png") not in (None, *pngs):
            del value["png"]
        for item in value.values():
            _drop_png_keys(item, pngs)
    elif isinstance(value, list):
        for item in value:
            _drop_png_keys(item, pngs)
