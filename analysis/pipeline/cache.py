"""The content-hash cache: a run is rebuilt only when its files, its place or the analysis code
(every source file of the package, subpackages included) changed."""
from __future__ import annotations

import hashlib
import json
import os
import stat
from pathlib import Path
from typing import Any

from analysis import atomic
from analysis.errors import BuildError
from analysis.paths import repo_relative
from analysis.pipeline import dist_versions, native_walk

STATE_VERSION = 1
CACHE_DIR = ".cache/loadcurve"
PACKAGE_DIR = Path(__file__).resolve().parents[1]   # analysis/
# the libraries whose versions are in the code digest
LIBRARIES = ("matplotlib", "numpy", "PyYAML", "Jinja2", "pandas", "python-liquid")



def code_version() -> str:
    """Hash of the analysis package's source and the library versions that shape the output."""
    h = hashlib.sha256()
    for path in sorted(PACKAGE_DIR.rglob("*")):
        if path.is_file() and path.suffix in (".py", ".j2", ".md", ".txt") \
                and "__pycache__" not in path.parts:
            h.update(path.relative_to(PACKAGE_DIR).as_posix().encode() + b"\0")
            h.update(path.read_bytes())
    for line in dist_versions.versions(LIBRARIES):
        h.update(f"{line}\0".encode())
    return h.hexdigest()


def templates_version(site_root: Path) -> str:
    """Hash of what the report pages are rendered from (write/liquid_pages.py): every include,
    every kind's layouts (analysis/kinds.py), and _config.yml's baseurl."""
    from analysis.kinds import layouts
    from analysis.write.site_templates import baseurl, template_root
    h = hashlib.sha256()
    site = template_root(site_root)
    h.update(f"baseurl={baseurl(site)}\0".encode())   # in every link of every page
    files = sorted((site / "_includes").glob("*.html")) if (site / "_includes").is_dir() else []
    files += [site / "_layouts" / name for name in layouts()]
    for path in files:
        h.update(path.relative_to(site).as_posix().encode() + b"\0")
        h.update(path.read_bytes() if path.is_file() else b"(missing)")
    return h.hexdigest()[:16]


class FileHashes:
    """sha256 of files, re-read only when size or mtime changed (like git's index)."""

    def __init__(self, path: Path):
        self.path = path
        try:
            self.entries = json.loads(path.read_text())
            if not isinstance(self.entries, dict):
                self.entries = {}
        except (OSError, ValueError):
            self.entries = {}
        self.dirty = False
        self.seen: set[str] = set()

    def digest(self, real_path: str, st: os.stat_result | None = None) -> str:
        """The file's sha256; `real_path` is its resolved path (the cache's key), `st` its
        stat when the caller has it. Raises NotRegularFile for a FIFO, device or socket:
        reading one would block forever (a FIFO with no writer) or never end (/dev/zero)."""
        path = real_path
        st = st or os.stat(path)
        if not stat.S_ISREG(st.st_mode):
            raise NotRegularFile(Path(path))
        key = path
        self.seen.add(key)
        cached = self.entries.get(key)
        if cached and cached[0] == st.st_size and cached[1] == st.st_mtime_ns:
            return cached[2]
        h = hashlib.sha256()
        # O_NONBLOCK and a second check on the open file: a file swapped for a FIFO after the
        # stat above must not block the open (for a regular file the flag changes nothing).
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
        with open(fd, "rb") as f:
            st = os.fstat(fd)
            if not stat.S_ISREG(st.st_mode):
                raise NotRegularFile(Path(path))
            for block in iter(lambda: f.read(1 << 20), b""):
                h.update(block)
        self.entries[key] = [st.st_size, st.st_mtime_ns, h.hexdigest()]
        self.dirty = True
        return h.hexdigest()

    def run_key(self, run_dir: Path, site_root: Path, code: str) -> str:
        return run_input_hash(run_dir, site_root, code, self)

    def save(self) -> None:
        """Write the cache, forgetting files this build did not look at (deleted runs)."""
        stale = set(self.entries) - self.seen
        if stale:
            for key in stale:
                del self.entries[key]
            self.dirty = True
        if self.dirty:
            atomic.write_text(self.path, json.dumps(self.entries, sort_keys=True))
            self.dirty = False


class NotRegularFile(Exception):
    def __init__(self, path: Path):
        super().__init__(str(path))
        self.path = path


def not_regular_error(path: Path, site_root: Path) -> BuildError:
    """The one error for a FIFO, device or socket among a run's inputs."""
    return BuildError("not a regular file", path=repo_relative(path, site_root))


def run_input_hash(run_dir: Path, site_root: Path, code: str, hashes: FileHashes) -> str:
    """Hash of everything a run's outputs depend on: its files, where it sits, the code.

    Raises BuildError for an entry of the run folder that is not a regular file (FIFO, device,
    socket, also through a symlink that stays inside the run): hashing it would hang the build,
    and the analysis could not read it either."""
    h = hashlib.sha256()
    h.update(code.encode() + b"\0")
    h.update(os.path.relpath(run_dir.absolute(), site_root.absolute()).encode() + b"\0")
    root = run_dir.resolve()
    root_text = str(root)
    for rel, entry in native_walk.walk_files(str(run_dir), ""):
        try:
            if entry.is_symlink():
                real = Path(entry.path).resolve()
                if root not in real.parents:
                    h.update(f"{rel}\0outside\0".encode())  # the manifest check reports it
                    continue
                digest = hashes.digest(str(real))
            else:
                # a file reached without a link is where its path says (resolving each of
                # 1,000 runs' files took seconds); not a link, so lstat is its stat
                digest = hashes.digest(f"{root_text}/{rel}", entry.stat(follow_symlinks=False))
            h.update(f"{rel}\0{digest}\0".encode())
        except NotRegularFile:
            raise not_regular_error(Path(entry.path), site_root) from None
        except OSError:
            h.update(f"{rel}\0unreadable\0".encode())
    return h.hexdigest()


# Runs new to the key cache from which they are hashed on worker processes, not threads: the
# Python part of a run's hashing (~3 of its ~12 ms: the walk, a file's open and stat, the file
# hashes' JSON) holds the interpreter lock, so two threads went at ~1.5 times one (the 1,000-run
# build from nothing: 9.5 s before any worker started). A pool starts in tens of milliseconds.
PROCESSES_FROM = 16


def run_input_hashes(run_dirs: list[Path], site_root: Path, code: str,
                     hashes: "FileHashes | RunKeys", threads: int):
    """run_input_hash of each run folder, in their order: its digest, or the BuildError it
    raised. Spread over `threads` threads: sha256 and the reads let go of the interpreter lock,
    so a build from nothing hashes its runs (8 MB each in the scale corpus, ~13 ms of CPU) on
    every core, before the workers start (one thread: ~13 s of one core at 1,000 runs, the
    other idle). At least PROCESSES_FROM runs new to a RunKeys: those on as many processes."""
    def one(run_dir: Path):
        try:
            return hashes.run_key(run_dir, site_root, code)
        except BuildError as exc:
            return exc
    if threads <= 1 or len(run_dirs) <= 1:
        return map(one, run_dirs)
    new = hashes.new_runs(run_dirs) if isinstance(hashes, RunKeys) else set()
    if len(new) >= PROCESSES_FROM:
        return _new_runs_on_processes(run_dirs, new, site_root, code, hashes, threads, one)
    from concurrent.futures import ThreadPoolExecutor
    pool = ThreadPoolExecutor(max_workers=threads)
    try:
        return list(pool.map(one, run_dirs))
    finally:   # (Ctrl-C: the runs not yet started are not hashed)
        pool.shutdown(wait=True, cancel_futures=True)


def _new_runs_on_processes(run_dirs: list[Path], new: set[int], site_root: Path, code: str,
                           keys: "RunKeys", processes: int, one) -> list:
    """run_input_hashes with the runs at the indexes `new` keyed on a pool of `processes`
    workers (each writes its run's file hashes, RunKeys.shard) and the others here meanwhile."""
    from analysis.pipeline import workers
    pool = workers.pool(processes)
    try:
        picked = [i for i in range(len(run_dirs)) if i in new]
        found = pool.map(_new_run_key, [str(keys.folder.parent)] * len(picked),
                         [str(run_dirs[i]) for i in picked], [str(site_root)] * len(picked),
                         [code] * len(picked), chunksize=4)
        digests = [None if i in new else one(d) for i, d in enumerate(run_dirs)]
        for i, (seen, digest) in zip(picked, found):
            keys.seen.update(seen)
            digests[i] = digest if isinstance(digest, str) else BuildError(**digest)
        return digests
    except BaseException:
        workers.stop(pool)   # (Ctrl-C: the tasks in hand are not waited for)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _new_run_key(cache: str, run_dir: str, site_root: str, code: str) -> tuple[dict, Any]:
    """In a worker: a run's key as RunKeys.run_key makes it, with what it adds to `seen`; a
    BuildError as its fields (its pickle would lose the keyword ones)."""
    keys = RunKeys(Path(cache), index={})
    try:
        return keys.seen, keys.run_key(Path(run_dir), Path(site_root), code)
    except BuildError as exc:
        return {}, {"message": exc.message, "path": exc.path, "line": exc.line,
                    "offset": exc.offset, "hint": exc.hint}


def read_json_object(path: Path) -> dict:
    """A cache file's JSON object; empty when the file is missing, unreadable or not an object
    (a cache is rebuilt, never trusted)."""
    try:
        value = json.loads(path.read_text())
    except (OSError, ValueError):
        return {}
    return value if isinstance(value, dict) else {}


class RunKeys:
    """run_input_hash of each run, kept between builds with the stat of every file it covered
    (like FileHashes, a file is trusted while its size and mtime are unchanged; its inode too):
    an unchanged run is keyed from one walk of its folder, without its files' hashes. Each run
    has its own FileHashes (files/<digest of its path>.json), read only when the run changed:
    one cache of every file (~110,000 at 1,000 runs, 18 MB of JSON) was read, and written
    whole when a run was added, by every build. Keyed by the run's resolved path, so hard-linked
    copies of a run (bench/perf/site_scale.py) never share a key."""

    def __init__(self, cache: Path, index: dict[str, list] | None = None):
        self.folder = cache / "files"
        self.index_path = cache / "run-keys.json"
        self.index: dict[str, list] = read_json_object(self.index_path) if index is None \
            else index
        self.seen: dict[str, list] = {}

    def new_runs(self, run_dirs: list[Path]) -> set[int]:
        """The indexes of the runs this cache holds no key of (each is hashed in full)."""
        return {i for i, d in enumerate(run_dirs) if str(d.resolve()) not in self.index}

    def shard(self, root_text: str) -> Path:
        return self.folder / (hashlib.sha256(root_text.encode()).hexdigest()[:32] + ".json")

    def run_key(self, run_dir: Path, site_root: Path, code: str) -> str:
        root_text = str(run_dir.resolve())
        stamp = _stat_stamp(run_dir, site_root, code)
        entry = self.index.get(root_text)
        if stamp is not None and isinstance(entry, list) and len(entry) == 2 \
                and entry[0] == stamp:
            self.seen[root_text] = entry
            return entry[1]
        hashes = FileHashes(self.shard(root_text))
        digest = run_input_hash(run_dir, site_root, code, hashes)
        hashes.save()
        if stamp is not None:
            # (a run with a link or an unreadable entry is hashed in full by every build)
            self.seen[root_text] = [stamp, digest]
        return digest

    def save(self) -> None:
        """Keep the keys of the runs seen in this build; a gone run's file hashes go too."""
        if self.seen != self.index:
            atomic.write_text(self.index_path, json.dumps(self.seen, sort_keys=True))
            self.index = dict(self.seen)
        keep = {self.shard(root).name for root in self.seen}
        try:
            names = os.listdir(self.folder)
        except OSError:
            return
        for name in names:
            if name.endswith(".json") and name not in keep:
                try:
                    os.unlink(self.folder / name)
                except OSError:
                    pass


def _stat_stamp(run_dir: Path, site_root: Path, code: str) -> str | None:
    """A digest of what run_input_hash covers but the files' bytes: the code, the run's place,
    and each file's path, size, mtime and inode (native_walk.listing). None when the run holds
    a link, an entry that is not a regular file or one that cannot be stat'ed: those take the
    full path."""
    listing = native_walk.listing(str(run_dir))
    if listing is None:
        return None
    h = hashlib.sha256()
    h.update(code.encode() + b"\0")
    h.update(os.path.relpath(run_dir.absolute(), site_root.absolute()).encode() + b"\0")
    h.update(listing)
    return h.hexdigest()


def check_regular_inputs(manifest, rels: list[str], site_root: Path) -> None:
    """The data files the run's readers open (`rels`, its kind's `inputs`: analysis/kinds.py)
    that exist must be regular files. The hashing walk already refuses others; this guards the
    reads themselves (a file swapped after it)."""
    for rel in rels:
        path = manifest.resolve(rel)
        try:
            mode = path.stat().st_mode
        except OSError:
            continue  # missing: the analysis reports it
        if not stat.S_ISREG(mode) and not stat.S_ISDIR(mode):
            raise not_regular_error(path, site_root)


# Why a symlink under runs/ is refused. runs/ is published file by file, and Jekyll copies a
# link as a link: a deploy that follows links would publish whatever it points at (one leaving
# the run: anything on the machine). Copying the target's content instead was the other choice;
# refusing keeps what is published exactly what is in the repository.
LINK_RULE = ("runs/ is published as regular files only (Jekyll would publish the link "
             "itself): replace it with a copy of the file")
LINK_PROBLEM = f"is a symbolic link; {LINK_RULE}"


def stray_links(runs_root: Path) -> list[Path]:
    """Symbolic links directly in runs/ that are not run folders (files, broken links)."""
    if not runs_root.is_dir():
        return []
    return sorted(p for p in runs_root.iterdir() if p.is_symlink() and not p.is_dir())


def check_no_links(run_dir: Path, site_root: Path) -> None:
    """Refuse a run folder that is, or holds, a symbolic link (see LINK_PROBLEM); the first
    found is named, with where it points when that leaves the run."""
    run_dir = Path(run_dir)
    if run_dir.is_symlink():
        raise BuildError(f"the run folder {LINK_PROBLEM}", path=repo_relative(run_dir, site_root))
    root = run_dir.resolve()
    for dirpath, dirnames, filenames in os.walk(run_dir):
        dirnames.sort()
        for name in sorted(dirnames + filenames):
            path = Path(dirpath) / name
            if not path.is_symlink():
                continue
            try:
                leaves = root not in path.resolve().parents
            except (OSError, RuntimeError):    # a loop of links
                leaves = True
            where = " pointing outside the run folder" if leaves else ""
            raise BuildError(f"is a symbolic link{where}; {LINK_RULE}",
                             path=repo_relative(path, site_root))
