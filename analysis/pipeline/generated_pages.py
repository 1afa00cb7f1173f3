"""pages.is_generated's answers kept between builds: every build asks it of each page under
_reports/ (png_use.runs_in_posts: a page a person wrote may name runs), and it parses the
page's front matter with PyYAML's Python loader, ~2.5 ms a page (libyaml's is not safe here:
tests/test_yaml_load.py), so at 1,000 runs ~2.5 s of adding one. An answer is reused while the
page's path, size, modification and change times and inode are what they were when it was
read (as git's index trusts a file's stat); any other page is read again."""
from __future__ import annotations

import json
import os
from pathlib import Path

from analysis import atomic
from analysis.pipeline.cache import read_json_object

FILE = "generated-pages.json"


class GeneratedPages:
    def __init__(self, cache: Path):
        self.path = cache / FILE
        self.entries: dict[str, list] = read_json_object(self.path)
        self.seen: dict[str, list] = {}

    def is_generated(self, path: Path) -> bool:
        from analysis.write.pages import is_generated
        key = os.fspath(path)
        try:
            st = os.stat(key)
        except OSError:
            return is_generated(path)
        stamp = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino]
        entry = self.entries.get(key)
        if isinstance(entry, list) and entry[:-1] == stamp:
            answer = entry[-1] is True
        else:
            answer = is_generated(path)
        self.seen[key] = stamp + [answer]
        return answer

    def written(self, path: Path) -> None:
        """`path` is a report page this build wrote (its front matter says generated_by): known
        without a parse. A build from nothing asked of no page before writing them all, so the
        next build (adding a run to 1,000) parsed every page's front matter."""
        try:
            st = os.stat(path)
        except OSError:
            return
        self.seen[os.fspath(path)] = [st.st_size, st.st_mtime_ns, st.st_ctime_ns, st.st_ino, True]

    def save(self) -> None:
        """Keep the answers of the pages asked about in this build (a gone page is forgotten)."""
        if self.seen != self.entries:
            atomic.write_text(self.path, json.dumps(self.seen, sort_keys=True))   # (lost: re-read)
