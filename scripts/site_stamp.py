"""Whether `make site` can skip Jekyll: nothing Jekyll reads changed since its last successful
build, and the site folder is as that build left it.

At 1,000 runs Jekyll takes 4-5 s to write the same pages again when nothing changed (issue 15:
a no-change `make site` under 5 s). scripts/build-site.sh asks this script first:

    python3 scripts/site_stamp.py check --dest _site --filter .cache/site-mirror.yml \\
        --configs _config.yml,.cache/site-mirror.yml --held runs,assets/charts,assets/data -- ARGS
        (exit 0: up to date, Jekyll skipped; 1: build; the inputs' digest is kept for `record`)
    python3 scripts/site_stamp.py record --dest _site --held runs,assets/charts,assets/data
        (after a successful `jekyll build`: the site folder as Jekyll left it)

What counts as Jekyll's input, compared by path, size and modification time: every file of the
source folder that Jekyll's reader can see (the `exclude` and `include` of --filter applied as
Jekyll applies them; folders starting with `_` are all counted - over-inclusive is safe), the
config files' bytes, Gemfile and Gemfile.lock (the gem versions), the arguments, JEKYLL_ENV and
today's UTC date (a post dated in the future appears on the first build on or after its date,
and the feed's <updated> is the build time). The site folder is compared the same way, apart
from the trees scripts/mirror_static.py publishes (--held); any difference, a missing stamp or
any doubt means a build. Stdlib only: it runs before, and without, the analysis environment.

When Jekyll must run, most of its work at 1,000 runs is wrapping the generated report pages
(`_reports/`, front matter then finished HTML) in `_layouts/default.html` again: with --partial,
`check` says how little it can redo (exit 3, Jekyll then runs with --incremental and the overlay
written there). A generated report page's output depends on its own file and on what the
default layout reads, the "wrapper" inputs: the configs, Gemfile(.lock), arguments, JEKYLL_ENV,
the date, _layouts/, _includes/, _posts/, _drafts/, _plugins/ and _data/authors (the only data
its templates read: tests/test_site_stamp.py checks that). When neither changed since the last
build, and the site folder is as that build left it, only the report pages whose file changed
(path, size, mtime, inode) are rendered again: the overlay sets Jekyll's per-page `regenerate`
flag (front-matter defaults) on every page, post and document but the unchanged generated
reports, which Jekyll then reads (the runs index, tags and feeds list them) without rendering
or writing them. When the wrapper inputs changed, every page is rendered (an incremental build
whose static files are copied when changed, as Jekyll's metadata records them); when the site
folder is not as the last build left it, Jekyll's metadata is removed first, so that build
renders and copies everything, as a plain build does.

Jekyll need not even read the unchanged generated reports (reading them was ~1.3 s at 1,000
runs, and Jekyll 4.3's duplicate check compares every document with every one before it): the
list pages print the reports from _data/report_pages.yml (scripts/report_index.py), so when
only some reports changed the overlay also excludes _reports/, includes back the files Jekyll
must read (the changed and the person-written pages, static files), and keeps the unchanged
pages' outputs in the site folder (`keep_files`, which Jekyll 3.9, 3.10 and 4.3 all honour),
their place known from the index's record of each page's URL (.cache/report-index.json, only
for a page whose file is as that record saw it and whose output is there).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import posixpath
import re
import sys
from fnmatch import fnmatchcase
from pathlib import Path
from urllib.parse import unquote

# (this folder is on sys.path: a script's own)
from mirror_static import DEFAULT_INCLUDE, DEFAULT_KEEP, entry_filter, glob_include, read_config

STAMP = Path(".cache/jekyll-stamp.json")
PENDING = Path(".cache/jekyll-stamp.pending")
# Jekyll's record of what an incremental build wrote (source mtimes, layout dependencies)
METADATA = Path(".jekyll-metadata")
REPORTS = "_reports"
# What the default layout around a generated report reads besides the page itself
WRAPPER_DIRS = ("_layouts", "_includes", "_posts", "_drafts", "_plugins")
# Front matter of a page the analysis wrote: finished HTML, no Liquid (analysis/write/pages.py)
GENERATED = "\ngenerated_by: loadcurve\n"
# More changed reports than this: every page is rendered (the defaults list grows per page, and
# Jekyll matches each page against every entry)
MOST_CHANGED = 200
# scripts/report_index.py's record: each page's URL, by path, with the file's key
REPORT_INDEX = Path(".cache/report-index.json")


def unseen(name: str, rel: str, is_dir: bool, config: dict) -> bool:
    """An entry Jekyll's reader never opens: excluded, or hidden (`.`, `#`, `~`), unless
    included. Unlike Jekyll, names starting with `_` are kept: _posts, _layouts, collections
    and _data are read by other readers, and counting one folder too many only costs a build."""
    hidden = name[0] in ".#~" or name.endswith("~")
    return (hidden or glob_include(config["exclude"], rel, is_dir)) \
        and not glob_include(config["include"], rel, is_dir)


def listing(top: str, rel_dir: str, keep, digest) -> None:
    """Feed (path, size, mtime) of every file under top/rel_dir, sorted, into `digest`."""
    folder = os.path.join(top, rel_dir) if rel_dir else top
    try:
        entries = sorted(os.scandir(folder), key=lambda e: e.name)
    except OSError as why:
        digest.update(f"{rel_dir}\0unreadable {why.errno}\0".encode())
        return
    for entry in entries:
        rel = f"{rel_dir}/{entry.name}" if rel_dir else entry.name
        is_dir = entry.is_dir(follow_symlinks=False)
        if not keep(entry.name, rel, is_dir):
            continue
        if is_dir:
            listing(top, rel, keep, digest)
        else:
            st = entry.stat(follow_symlinks=False)
            digest.update(f"{rel}\0{st.st_mode}\0{st.st_size}\0{st.st_mtime_ns}\0".encode())


def settings_hash(source: Path, configs: list[str], args: list[str]):
    """A hash started with what every page's rendering depends on beside the files: Jekyll's
    arguments, JEKYLL_ENV, today's date (posts dated in the future appear with it), the
    configs and the Gemfile and its lock."""
    h = hashlib.sha256()
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    h.update(json.dumps([args, os.environ.get("JEKYLL_ENV", ""), today]).encode() + b"\0")
    for name in configs + ["Gemfile", "Gemfile.lock"]:
        try:
            h.update(name.encode() + b"\0" + (source / name).read_bytes() + b"\0")
        except OSError:
            h.update(name.encode() + b"\0-\0")
    return h


def inputs_digest(source: Path, dest: Path, config: dict, configs: list[str],
                  args: list[str]) -> str:
    h = settings_hash(source, configs, args)
    dest_rel = os.path.relpath(dest.resolve(), source.resolve())
    listing(str(source), "", lambda name, rel, is_dir: rel != dest_rel
            and not unseen(name, rel, is_dir, config), h)
    return h.hexdigest()


def wrapper_digest(source: Path, configs: list[str], args: list[str]) -> str:
    """What the default layout around a generated report page reads, besides the page."""
    h = settings_hash(source, configs, args)
    for folder in WRAPPER_DIRS:
        listing(str(source), folder, lambda name, rel, is_dir: True, h)
    listing(str(source), "_data", lambda name, rel, is_dir: rel.count("/") > 1
            or name.split(".")[0] == "authors", h)
    return h.hexdigest()


def generated(path: str) -> bool:
    """A page the analysis wrote (its front matter says so), read up to its front matter."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read(8192)
    except OSError:
        return False
    end = text.find("\n---", 3)
    return text.startswith("---\n") and end > 0 and GENERATED in text[3:end + 1]


def report_files(source: Path, known: dict) -> dict[str, list]:
    """rel path -> [size, mtime_ns, inode, generated] of every file under _reports/; the
    front matter is read only for files not in `known` as they are now."""
    found: dict[str, list] = {}

    def walk(rel_dir: str) -> None:
        try:
            entries = list(os.scandir(source / rel_dir))
        except OSError:
            return
        for entry in entries:
            rel = f"{rel_dir}/{entry.name}"
            if entry.is_dir(follow_symlinks=False):
                walk(rel)
            elif entry.is_file(follow_symlinks=False):
                st = entry.stat(follow_symlinks=False)
                key = [st.st_size, st.st_mtime_ns, st.st_ino]
                old = known.get(rel)
                found[rel] = key + [old[3] if old and old[:3] == key else generated(entry.path)]
            elif entry.is_symlink():     # its target's changes are not seen here: always again
                found[rel] = [0, 0, 0, False]
    walk(REPORTS)
    return found


def partial_defaults(base_defaults: list, stamp: dict, reports: dict, wrapper: str) -> list:
    """The front-matter defaults of an incremental build: `regenerate` on every page but the
    generated reports; those are rendered when Jekyll's metadata has no record of them, or
    records another mtime, and those whose file changed since the last build (or that are not
    generated) get the flag by their path. When the wrapper inputs changed, the metadata is
    removed: every page is rendered, and recorded (a page rendered for its flag is not)."""
    every = [{"scope": {"path": ""}, "values": {"regenerate": True}},
             {"scope": {"path": "", "type": "reports"}, "values": {"regenerate": False}}]
    old = stamp.get("reports") or {}
    again = [rel for rel, now in sorted(reports.items())
             if not now[3] or old.get(rel) != now]
    if stamp.get("wrapper") != wrapper or len(again) > MOST_CHANGED:
        METADATA.unlink(missing_ok=True)
        return base_defaults + every
    return base_defaults + every + \
        [{"scope": {"path": rel}, "values": {"regenerate": True}} for rel in again]


def output_of(url: str) -> str:
    """Document#destination, relative to the site folder."""
    path = unquote(url).lstrip("/")
    if path == "" or url.endswith("/"):
        path += "index"
    return path if path.endswith(".html") else path + ".html"


def unread_reports(stamp: dict, reports: dict, wrapper: str, dest: Path) -> dict[str, str]:
    """The generated reports Jekyll need not read, each with its output (relative to dest):
    unchanged since the last build, which was a build of the same wrapper inputs, and the
    index's record of the file as it is now gives its output, which exists."""
    old = stamp.get("reports") or {}
    again = [rel for rel, now in reports.items() if not now[3] or old.get(rel) != now]
    if not old or stamp.get("wrapper") != wrapper or len(again) > MOST_CHANGED:
        return {}
    known = read_json(REPORT_INDEX).get("pages") or {}
    unread = {}
    for rel, now in reports.items():
        page = known.get(rel[len(REPORTS) + 1:])
        if not now[3] or old.get(rel) != now or not isinstance(page, list) or len(page) != 5 \
                or [page[0], page[1], page[3]] != now[:3] or not isinstance(page[4], dict):
            continue
        output = output_of(str(page[4].get("url")))
        if (dest / output).is_file():
            unread[rel] = output
    return unread


def literal_glob(inside: str, exclude: list[str]) -> str | None:
    """The `include` pattern that lets Jekyll read the collection's file `inside` (its path
    below _reports/: EntryFilter#included? gets a collection's entries relative to its folder)
    and no other file. File.fnmatch? matches it to that path alone; the last character goes in
    brackets, so the pattern names no file (Jekyll 4 reads a file `include` names as a page of
    its own, Reader#read_included_excludes). Another folder's file of the same path is
    included too, which changes nothing unless an exclude pattern names it. None: not so."""
    name = posixpath.basename(inside)
    if not inside[-1].isalnum() or any(
            fnmatchcase(name, posixpath.basename(p.rstrip("/"))) for p in exclude):
        return None
    return re.sub(r"([*?\[\]{}\\])", r"\\\1", inside[:-1]) + f"[{inside[-1]}]"


def reading_overlay(filter_config: dict, base: dict, reports: dict,
                    unread: dict[str, str]) -> dict | None:
    """exclude/include/keep_files that keep the unread reports out of Jekyll's reading and
    their outputs in the site folder: _reports/ excluded (one pattern: Jekyll matches every
    entry with every pattern, so one per page cost 1.8 s at 1,000 runs), and every other file
    of it Jekyll reads (not hidden, not excluded: `include` would publish those too) included
    back. None when a name cannot be included back."""
    config = entry_filter({**filter_config, "include": base.get("include", DEFAULT_INCLUDE)})
    read = []
    for rel in sorted(reports):
        name = rel.rsplit("/", 1)[-1]
        inside = rel[len(REPORTS) + 1:]
        if rel in unread or inside[0] in "._#~" or name[0] in "._#~" or rel.endswith("~") \
                or glob_include(config["exclude"], rel, False):
            continue
        pattern = literal_glob(inside, config["exclude"])
        if pattern is None:
            return None
        read.append(pattern)
    return {"exclude": config["exclude"] + [REPORTS + "/"],
            "include": config["include"] + read,
            "keep_files": (filter_config.get("keep_files", DEFAULT_KEEP) or [])
            + sorted(unread.values())}


def file_key(path: Path) -> list[int] | None:
    try:
        st = path.stat()
    except OSError:
        return None
    return [st.st_size, st.st_mtime_ns, st.st_ino]


def outputs_digest(dest: Path, held: list[str]) -> str:
    h = hashlib.sha256()
    listing(str(dest), "", lambda name, rel, is_dir: rel not in held, h)
    return h.hexdigest()


def read_json(path: Path) -> dict:
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
        return value if isinstance(value, dict) else {}
    except (OSError, ValueError):
        return {}


def write_json(path: Path, value: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps(value, sort_keys=True) + "\n", encoding="utf-8")
    os.replace(tmp, path)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("command", choices=("check", "record"))
    parser.add_argument("--dest", type=Path, default=Path("_site"), help="the site folder")
    parser.add_argument("--filter", type=Path,
                        help="check: JSON config with the build's exclude and include")
    parser.add_argument("--configs", default="_config.yml",
                        help="check: the --config list Jekyll gets (comma-separated)")
    parser.add_argument("--held", default="", help="trees of the site folder not compared "
                        "(published by scripts/mirror_static.py), comma-separated")
    parser.add_argument("--partial", type=Path, metavar="OVERLAY",
                        help="check: when Jekyll must run, write OVERLAY (its front-matter "
                        "defaults) and exit 3 for `jekyll build --incremental`")
    parser.add_argument("--base", type=Path,
                        help="check --partial: JSON config holding _config.yml's defaults")
    argv = sys.argv[1:]
    cut = argv.index("--") if "--" in argv else len(argv)
    opts = parser.parse_args(argv[:cut])
    opts.args = argv[cut + 1:]    # check: Jekyll's other arguments, after `--`
    held = [t.strip("/") for t in opts.held.split(",") if t.strip("/")]
    source = Path.cwd()
    if opts.command == "check":
        PENDING.unlink(missing_ok=True)
        if opts.filter is None:
            parser.error("check needs --filter")
        inputs = inputs_digest(source, opts.dest, entry_filter(read_config(opts.filter)),
                               opts.configs.split(","), opts.args)
        stamp = read_json(STAMP)
        as_left = opts.dest.is_dir() and stamp.get("outputs") == outputs_digest(opts.dest, held)
        if stamp.get("inputs") == inputs and as_left:
            return 0
        # the inputs as they were before this build: a file changed while Jekyll runs makes
        # the next check fail, not pass
        STAMP.unlink(missing_ok=True)
        pending = {"inputs": inputs}
        base = read_config(opts.base) if opts.base else {}
        if opts.partial is None or not isinstance(base.get("defaults", []), list) \
                or "collections_dir" in base:
            write_json(PENDING, pending)
            return 1
        pending["wrapper"] = wrapper_digest(source, opts.configs.split(","), opts.args)
        pending["reports"] = report_files(source, stamp.get("reports") or {})
        write_json(PENDING, pending)
        if not as_left or stamp.get("metadata") != file_key(METADATA):
            # a site folder this script cannot vouch for, or Jekyll's record written by another
            # build (`jekyll serve --incremental` by hand: its static files' times): everything
            stamp = {}
        defaults = partial_defaults(base.get("defaults", []), stamp, pending["reports"],
                                    pending["wrapper"])
        overlay = {"defaults": defaults}
        unread = unread_reports(stamp, pending["reports"], pending["wrapper"], opts.dest)
        if unread:
            overlay.update(reading_overlay(read_config(opts.filter), base, pending["reports"],
                                           unread) or {})
        opts.partial.write_text("# Written by scripts/site_stamp.py for one build (JSON is YAML)\n"
                                + json.dumps(overlay, indent=1) + "\n", encoding="utf-8")
        return 3
    pending = read_json(PENDING)
    PENDING.unlink(missing_ok=True)
    if "inputs" in pending:
        write_json(STAMP, {**pending, "outputs": outputs_digest(opts.dest, held),
                           "metadata": file_key(METADATA)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
