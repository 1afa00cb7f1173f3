"""Publish the big static trees (runs/, assets/charts/, assets/data/) into _site/ without Jekyll.

Jekyll copies every static file on every build (StaticFile#write compares mtimes against a table
that starts empty in each process): at 1,000 runs that is gigabytes per `make site`. For local
builds scripts/build-site.sh keeps these trees out of Jekyll (`exclude`) and out of its cleaner
(`keep_files`), and this script makes the same files appear in _site/: hard links where the file
system allows (else copies), only files that changed, and files whose source is gone removed.

It publishes exactly what Jekyll would: entries Jekyll skips (names starting with `.`, `_`, `#`
or `~` or ending with `~`; symbolic links; `exclude` patterns) are skipped, `include` patterns
override that. A tree holding a file Jekyll would take for a page (first line `---`), or a name
ending in `.` (Jekyll 4 skips it, 3 publishes it), is left to Jekyll for that build.
Stdlib only (no PyYAML): the config comes in as JSON, written by build-site.sh's Ruby step.

    python3 scripts/mirror_static.py --config .cache/site-base.json --dest _site \\
        --overlay .cache/site-mirror.yml runs assets/charts assets/data

Writes the overlay (JSON, which Jekyll reads as YAML): the base `exclude`/`keep_files` plus the
trees mirrored. Prints one line per tree left to Jekyll, on stderr.
"""
from __future__ import annotations

import argparse
import errno
import json
import os
import re
import shutil
import stat
import sys
import time
from fnmatch import fnmatchcase
from pathlib import Path

# Utils.has_yaml_header? (Jekyll 3.10 and 4.3): the first line is `---` and blanks.
YAML_HEADER = re.compile(rb"---[ \t\r\f\v]*\n")
# Jekyll::Configuration::DEFAULTS["keep_files"] and ["include"]
DEFAULT_KEEP = [".git", ".svn"]
DEFAULT_INCLUDE = [".htaccess"]
# A folder modified this recently is not recorded as walked: a change in the same tick of the
# file system's clock leaves its mtime as it was (ext4 stamps in jiffies)
SETTLED_NS = 2_000_000_000


class NotMirrored(Exception):
    """A file the mirror cannot publish as Jekyll would: the tree is left to Jekyll."""


def glob_include(patterns: list[str], rel: str, is_dir: bool) -> bool:
    """EntryFilter#glob_include? on paths relative to the source (both sides get the same
    prefix there, so it cancels): fnmatch without FNM_PATHNAME (`*` crosses `/`, as Python's
    fnmatchcase), a plain prefix, or `dir/` naming the directory itself."""
    entry = "/" + rel
    for pattern in patterns:
        item = "/" + pattern
        if fnmatchcase(entry, item) or entry.startswith(item) or (is_dir and item == entry + "/"):
            return True
    return False


def skipped(name: str, rel: str, is_dir: bool, config: dict) -> bool:
    """EntryFilter#filter for one entry (symbolic links are handled by the walk)."""
    excluded = glob_include(config["exclude"], rel, is_dir)
    if (excluded or name[0] in "._#~" or name.endswith("~")) \
            and not glob_include(config["include"], name, is_dir):   # include wins over both
        return True
    if name.endswith("."):    # Jekyll 4.3 skips it, 3.x publishes it
        raise NotMirrored(f"{rel}: a name ending in '.' (Jekyll 4 skips it, Jekyll 3 publishes it)")
    return False


def read_config(path: Path) -> dict:
    """A JSON config written by build-site.sh or this script (`#` comment lines, then JSON)."""
    text = path.read_text(encoding="utf-8")
    return json.loads("\n".join(x for x in text.splitlines() if not x.startswith("#")))


def entry_filter(config: dict) -> dict:
    """The config's exclude and include; a key the config sets replaces Jekyll's default
    (Configuration#merge), even when empty."""
    return {"exclude": config.get("exclude") or [],
            "include": config.get("include", DEFAULT_INCLUDE) or []}


def for_tree(config: dict, tree: str) -> dict:
    """config with only the exclude patterns that can match inside tree/ (most name other
    top-level folders): the test runs for every file."""
    inside = "/" + tree + "/"
    return {**config, "exclude": [
        p for p in config["exclude"] if any(c in p for c in "*?[")
        or inside.startswith("/" + p) or ("/" + p).startswith(inside)]}


def has_yaml_header(path: str) -> bool:
    with open(path, "rb") as f:
        if f.read(3) != b"---":
            return False
        return YAML_HEADER.match(b"---" + f.readline()) is not None


class Mirror:
    """One tree: walks root/tree and dest/tree side by side (scandir: the inode comparison
    needs no system call per file). Files are opened for the front-matter test when placed,
    or all of them when `check_all` (no earlier complete run with this config).

    At 1,000 runs the trees hold ~190,000 files in ~5,000 folders, and listing them all was most
    of the mirror's 0.5 CPU s on a build that adds one run. `walked` records, for each folder
    below the tree the last run walked, its source's and destination's mtime and inode, its
    file count and its subfolders: when both folders are as recorded, no entry was added,
    removed or renamed in either since, and each published file is a hard link of its source
    (an edit in place shows through it), so only the subfolders are visited. Copies (another
    file system) compare sizes and times file by file: no skipping then."""

    def __init__(self, root: Path, dest: Path, tree: str, config: dict, check_all: bool,
                 walked: dict | None = None):
        self.root, self.dest, self.tree = str(root), str(dest), tree
        self.config, self.check_all = for_tree(config, tree), check_all
        self.can_link = True
        self.placed = self.removed = 0
        # destination folders made real in this run: real_dirs once a folder, not once a file
        # (its relpath and an lstat a level were ~40 % of placing a file; 227,000 at 1,000 runs)
        self.ready: set[str] = set()
        self.walked_before = {} if check_all or walked is None else walked
        self.walked: dict[str, list] = {}
        self.settled_before = time.time_ns() - SETTLED_NS

    def run(self) -> None:
        parts = self.tree.split("/")
        for i in range(len(parts)):
            # never write through a link: dest/tree is walked as a real folder or made one
            path = os.path.join(self.dest, *parts[:i + 1])
            if os.path.islink(path):
                os.unlink(path)
            # the tree and the folders above it, as Jekyll meets them
            path = os.path.join(self.root, *parts[:i + 1])
            if not os.path.isdir(path) or os.path.islink(path) \
                    or skipped(parts[i], "/".join(parts[:i + 1]), True, self.config):
                self.drop(os.path.join(self.dest, self.tree))   # nothing published there
                return
        self.can_link = os.stat(os.path.join(self.root, self.tree)).st_dev == \
            os.stat(self.dest).st_dev
        if not self.walk(self.tree):
            self.drop(os.path.join(self.dest, self.tree))

    def folder_keys(self, rel_dir: str) -> list[int] | None:
        """[source mtime, inode, destination mtime, inode] of a folder, None when either is
        missing or was modified too recently to vouch for."""
        try:
            src = os.stat(os.path.join(self.root, rel_dir), follow_symlinks=False)
            dst = os.stat(os.path.join(self.dest, rel_dir), follow_symlinks=False)
        except OSError:
            return None
        if not (stat.S_ISDIR(src.st_mode) and stat.S_ISDIR(dst.st_mode)) \
                or max(src.st_mtime_ns, dst.st_mtime_ns) > self.settled_before:
            return None
        return [src.st_mtime_ns, src.st_ino, dst.st_mtime_ns, dst.st_ino]

    def walk(self, rel_dir: str) -> int:
        """Mirror one folder; the number of files published in it and below."""
        dest_dir = os.path.join(self.dest, rel_dir)
        if rel_dir != self.tree and self.can_link:
            old = self.walked_before.get(rel_dir)
            if old is not None and old[:4] == self.folder_keys(rel_dir):
                count = old[4] + sum(self.walk(f"{rel_dir}/{sub}") for sub in old[5])
                if count:
                    self.walked[rel_dir] = old
                else:
                    self.drop(dest_dir)
                return count
        count, files, subs = self.walk_entries(rel_dir, dest_dir)
        if not count and rel_dir != self.tree and os.path.lexists(dest_dir):
            self.drop(dest_dir)
        if rel_dir != self.tree and count and self.can_link:
            keys = self.folder_keys(rel_dir)
            if keys is not None:
                self.walked[rel_dir] = keys + [files, subs]
        return count

    def walk_entries(self, rel_dir: str, dest_dir: str) -> tuple[int, int, list[str]]:
        """Mirror one folder's entries: the files published in it and below, in it, and the
        names of its subfolders walked. Its files are tested and placed before its subfolders
        are walked."""
        try:
            with os.scandir(dest_dir) as it:
                there = {e.name: e for e in it}
        except (FileNotFoundError, NotADirectoryError):
            there = {}
        src_dir = os.path.join(self.root, rel_dir)
        with os.scandir(src_dir) as it:
            entries = list(it)
        dirs = []
        to_test: list[str] = []
        to_place: list[str] = []
        replaced: list[tuple[os.DirEntry, os.DirEntry]] = []
        filtered = bool(self.config["exclude"])
        files = 0
        for entry in entries:
            if entry.is_symlink():
                continue       # build-site.sh excludes (and warns about) every link
            name = entry.name
            is_dir = entry.is_dir()
            # (only a pattern, or a name's first or last character, can make Jekyll skip it)
            if (filtered or name[0] in "._#~" or name[-1] in "~.") \
                    and skipped(name, f"{rel_dir}/{name}", is_dir, self.config):
                continue
            old = there.pop(name, None) if there else None
            if is_dir:
                if old is not None and not old.is_dir(follow_symlinks=False):
                    self.drop(old.path)
                dirs.append(name)
            elif entry.is_file():
                files += 1
                if old is None:
                    to_test.append(name)
                    to_place.append(name)
                elif not self.same(entry, old):
                    to_test.append(name)
                    replaced.append((entry, old))
                elif self.check_all:
                    to_test.append(name)
        if to_test:
            self.place_folder(rel_dir, src_dir, dest_dir, to_test, to_place)
        for entry, old in replaced:
            self.place(entry.path, old, dest_dir, entry.name)
        for old in there.values():       # no longer published
            self.drop(old.path)
        count = files
        for name in dirs:
            count += self.walk(f"{rel_dir}/{name}")
        return count, files, dirs

    def place_folder(self, rel_dir: str, src_dir: str, dest_dir: str, to_test: list[str],
                     to_place: list[str]) -> None:
        """Test one folder's files for front matter, then link those with nothing in the way,
        through the two folders' descriptors: the per-file work is system calls on one name
        each (227,000 files at 1,000 runs; a path's lookup, Python's file object and a join
        a file were most of the mirror's time)."""
        # the source folder as scandir met it: a folder swapped for a link since is refused
        src_fd = os.open(src_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        try:
            for name in to_test:
                fd = os.open(name, os.O_RDONLY, dir_fd=src_fd)
                try:
                    head = os.read(fd, 3)
                finally:
                    os.close(fd)
                if head == b"---" and has_yaml_header(os.path.join(src_dir, name)):
                    raise NotMirrored(f"{rel_dir}/{name} starts with a '---' line: "
                                      "Jekyll renders it as a page")
            if not to_place:
                return
            if dest_dir not in self.ready:
                real_dirs(self.dest, os.path.relpath(dest_dir, self.dest))
                self.ready.add(dest_dir)
            # real_dirs made each level a folder of its own: never written through a link
            dest_fd = os.open(dest_dir, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
            try:
                self.link_all(src_fd, dest_fd, src_dir, dest_dir, to_place)
            finally:
                os.close(dest_fd)
        finally:
            os.close(src_fd)

    def link_all(self, src_fd: int, dest_fd: int, src_dir: str, dest_dir: str,
                 names: list[str]) -> None:
        """dest_dir/name = src_dir/name for each name (none there): hard links when the file
        system allows, else copies with the source's mtime."""
        self.placed += len(names)
        for i, name in enumerate(names):
            if not self.can_link:
                for rest in names[i:]:
                    shutil.copy2(os.path.join(src_dir, rest), os.path.join(dest_dir, rest))
                return
            try:
                os.link(name, name, src_dir_fd=src_fd, dst_dir_fd=dest_fd)
            except OSError as e:
                if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                    raise
                self.can_link = False
                shutil.copy2(os.path.join(src_dir, name), os.path.join(dest_dir, name))

    def same(self, src: os.DirEntry, old: os.DirEntry) -> bool:
        if not old.is_file(follow_symlinks=False):
            return False
        if self.can_link and src.inode() == old.inode():
            return True      # our hard link; an edit in place shows through it
        s, d = src.stat(), old.stat(follow_symlinks=False)
        return d.st_size == s.st_size and d.st_mtime_ns == s.st_mtime_ns   # our copy (copy2)

    def place(self, src: str, old: os.DirEntry, dest_dir: str, name: str) -> None:
        """dest = src in place of `old` (a new file goes through place_folder): a hard link
        when the file system allows, else a copy with src's mtime."""
        self.drop(old.path)
        self.removed -= 1
        target = os.path.join(dest_dir, name)
        self.placed += 1
        if self.can_link:
            try:
                os.link(src, target)
                return
            except OSError as e:
                if e.errno not in (errno.EXDEV, errno.EPERM, errno.EMLINK, errno.ENOTSUP):
                    raise
                self.can_link = False
        shutil.copy2(src, target)

    def drop(self, path: str) -> None:
        """Remove a file, link or folder of the mirror (a link is removed, never followed)."""
        if os.path.isdir(path) and not os.path.islink(path):
            shutil.rmtree(path)
        elif os.path.lexists(path):
            os.unlink(path)
        else:
            return
        self.removed += 1


def real_dirs(dest: str, rel: str) -> None:
    """dest/rel as folders of their own, each level: a file or link in the way is removed."""
    path = dest
    for part in rel.split("/"):
        path = os.path.join(path, part)
        try:
            if stat.S_ISDIR(os.lstat(path).st_mode):
                continue
            os.unlink(path)
        except FileNotFoundError:
            pass
        os.mkdir(path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--config", type=Path, required=True,
                        help="JSON: the build's exclude, include and keep_files")
    parser.add_argument("--dest", type=Path, required=True, help="the site folder (_site)")
    parser.add_argument("--overlay", type=Path, required=True,
                        help="where to write the Jekyll config overlay (JSON)")
    parser.add_argument("trees", nargs="+", help="folders of the source, relative to it")
    args = parser.parse_args()
    base = read_config(args.config)
    config = entry_filter(base)
    # Whether a run with this config finished for the tree: then every file kept was tested for
    # front matter when placed (an edit in place that adds one shows only when the file is
    # replaced, or in a fresh _site; a fresh clone, as in CI, tests every file).
    state_path = args.overlay.with_name("mirror-state.json")
    try:
        state = json.loads(state_path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        state = {}
    root = Path.cwd()
    args.dest.mkdir(parents=True, exist_ok=True)
    mirrored = []
    for tree in args.trees:
        tree = tree.strip("/")
        key = tree + " " + json.dumps(config, sort_keys=True)
        done = state.pop(key, False)
        job = Mirror(root, args.dest, tree, config, check_all=not done,
                     walked=done.get("walked") if isinstance(done, dict) else None)
        state_path.write_text(json.dumps(state, sort_keys=True) + "\n", encoding="utf-8")
        try:
            job.run()
        except NotMirrored as why:
            print(f"warning: {why}; {tree}/ is copied by Jekyll in this build (slow)",
                  file=sys.stderr)
            # Jekyll writes a page into its file in place: not through a link to the source
            shutil.rmtree(args.dest / tree, ignore_errors=True)
            continue
        # (a link refused half-way made copies, which only a file-by-file walk compares)
        state[key] = {"walked": job.walked if job.can_link else {}}
        mirrored.append(tree)
        if job.placed or job.removed:
            print(f"mirror {tree}/: {job.placed} placed, {job.removed} removed", file=sys.stderr)
    overlay = {"exclude": config["exclude"] + [f"{t}/" for t in mirrored],
               "keep_files": (base.get("keep_files", DEFAULT_KEEP) or []) + mirrored}
    args.overlay.write_text("# Written by scripts/mirror_static.py for one build (JSON is YAML)\n"
                            + json.dumps(overlay, indent=1) + "\n", encoding="utf-8")
    state_path.write_text(json.dumps(state, sort_keys=True) + "\n", encoding="utf-8")
    return 0


if __name__ == "__main__":
    sys.exit(main())
