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
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import json
import os
import sys
from pathlib import Path

# (this folder is on sys.path: a script's own)
from mirror_static import entry_filter, glob_include, read_config

STAMP = Path(".cache/jekyll-stamp.json")
PENDING = Path(".cache/jekyll-stamp.pending")


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


def inputs_digest(source: Path, dest: Path, config: dict, configs: list[str],
                  args: list[str]) -> str:
    h = hashlib.sha256()
    today = datetime.datetime.now(datetime.timezone.utc).date().isoformat()
    h.update(json.dumps([args, os.environ.get("JEKYLL_ENV", ""), today]).encode() + b"\0")
    for name in configs + ["Gemfile", "Gemfile.lock"]:
        try:
            h.update(name.encode() + b"\0" + (source / name).read_bytes() + b"\0")
        except OSError:
            h.update(name.encode() + b"\0-\0")
    dest_rel = os.path.relpath(dest.resolve(), source.resolve())
    listing(str(source), "", lambda name, rel, is_dir: rel != dest_rel
            and not unseen(name, rel, is_dir, config), h)
    return h.hexdigest()


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
        if stamp.get("inputs") == inputs and opts.dest.is_dir() \
                and stamp.get("outputs") == outputs_digest(opts.dest, held):
            return 0
        # the inputs as they were before this build: a file changed while Jekyll runs makes
        # the next check fail, not pass
        STAMP.unlink(missing_ok=True)
        write_json(PENDING, {"inputs": inputs})
        return 1
    pending = read_json(PENDING)
    PENDING.unlink(missing_ok=True)
    if "inputs" in pending:
        write_json(STAMP, {"inputs": pending["inputs"], "outputs": outputs_digest(opts.dest, held)})
    return 0


if __name__ == "__main__":
    sys.exit(main())
