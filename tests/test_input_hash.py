"""The build's cache key of a run (analysis/pipeline/cache.py run_input_hash): which files it
covers, in which order, and that it follows a change. Checked against a plain os.walk of the
folder written here (the walk the cache used before it read folders with scandir), so the key
neither drops nor reorders a file."""
from __future__ import annotations

import hashlib
import json
import os
import shutil
from pathlib import Path

import pytest

from analysis.pipeline.cache import FileHashes, RunKeys, run_input_hash, run_input_hashes
from analysis.errors import BuildError


def walk_hash(run_dir: Path, site: Path, code: str) -> str:
    h = hashlib.sha256()
    h.update(code.encode() + b"\0")
    h.update(os.path.relpath(run_dir, site).encode() + b"\0")
    root = run_dir.resolve()
    for dirpath, dirnames, filenames in os.walk(run_dir):
        dirnames.sort()
        folder = os.path.relpath(dirpath, run_dir)
        for name in sorted(filenames):
            path = Path(dirpath, name)
            rel = name if folder == "." else f"{folder}/{name}"
            real = path.resolve()
            if path.is_symlink() and root not in real.parents:
                h.update(f"{rel}\0outside\0".encode())
                continue
            h.update(f"{rel}\0{hashlib.sha256(real.read_bytes()).hexdigest()}\0".encode())
    return h.hexdigest()


@pytest.fixture
def run(tmp_path):
    site = tmp_path / "site"
    run_dir = site / "runs" / "r1"
    for rel, text in {"run.yml": "a", "B.hlog": "b", "a-b/x.hlog": "c", "a/z.jfr": "d",
                      "a/deeper/y": "e", "_under": "f", "a.b": "g"}.items():
        (run_dir / rel).parent.mkdir(parents=True, exist_ok=True)
        (run_dir / rel).write_text(text)
    (tmp_path / "elsewhere").write_text("secret")
    os.symlink("run.yml", run_dir / "link-in")                  # a file link inside the run
    os.symlink(tmp_path / "elsewhere", run_dir / "link-out")    # one leaving it
    os.symlink("a", run_dir / "linked-folder")                  # not entered
    return site, run_dir


def test_same_files_and_order_as_a_plain_walk(run, tmp_path):
    site, run_dir = run
    hashes = FileHashes(tmp_path / "files.json")
    assert run_input_hash(run_dir, site, "code", hashes) == walk_hash(run_dir, site, "code")


def test_a_changed_file_changes_the_key_and_an_unchanged_one_is_not_reread(run, tmp_path):
    site, run_dir = run
    hashes = FileHashes(tmp_path / "files.json")
    before = run_input_hash(run_dir, site, "code", hashes)
    assert run_input_hash(run_dir, site, "code", hashes) == before
    (run_dir / "a" / "deeper" / "y").write_text("changed, longer")
    after = run_input_hash(run_dir, site, "code", hashes)
    assert after != before and after == walk_hash(run_dir, site, "code")
    assert run_input_hash(run_dir, site, "other code", hashes) != after


def test_a_fifo_among_the_inputs_is_an_error_naming_it(run, tmp_path):
    site, run_dir = run
    os.mkfifo(run_dir / "a" / "pipe")
    with pytest.raises(BuildError, match="not a regular file") as caught:
        run_input_hash(run_dir, site, "code", FileHashes(tmp_path / "files.json"))
    assert "runs/r1/a/pipe" in str(caught.value)


def test_hard_linked_copies_of_a_run_keep_keys_of_their_own(run, tmp_path):
    """The scale corpus (bench/perf/site_scale.py) is one run's files hard-linked under many
    ids: equal bytes, even one inode, must never make one run's key another's, or its analysis
    would be skipped as done. The key holds the run's path, and each path is its own entry of
    the file-hash cache."""
    site, run_dir = run
    copy = site / "runs" / "r2"
    for path in sorted(run_dir.rglob("*")):
        target = copy / path.relative_to(run_dir)
        if path.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.symlink(os.readlink(path), target)
        elif path.is_dir():
            target.mkdir(parents=True, exist_ok=True)
        else:
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)
    assert (copy / "run.yml").stat().st_ino == (run_dir / "run.yml").stat().st_ino
    hashes = FileHashes(tmp_path / "files.json")
    keys = {name: run_input_hash(site / "runs" / name, site, "code", hashes)
            for name in ("r1", "r2")}
    assert keys["r1"] != keys["r2"]
    assert keys["r2"] == walk_hash(copy, site, "code")
    assert str((copy / "run.yml").resolve()) in hashes.entries
    assert str((run_dir / "run.yml").resolve()) in hashes.entries


def test_runs_hashed_on_threads_keep_their_order_keys_and_errors(run, tmp_path):
    """A build hashes its runs on as many threads as it has jobs (run_input_hashes): each run
    gets its own key, in the runs' order, and a run with a FIFO gets its error in its place,
    while the file-hash cache records every file of the others."""
    site, run_dir = run
    names = [f"r{i}" for i in range(2, 9)]
    for name in names:
        hard_link_copy(run_dir, site / "runs" / name)
    os.mkfifo(site / "runs" / "r5" / "a" / "pipe")
    dirs = [site / "runs" / name for name in ["r1"] + names]
    hashes = FileHashes(tmp_path / "files.json")
    got = list(run_input_hashes(dirs, site, "code", hashes, 3))
    for run_dir_i, key in zip(dirs, got):
        if run_dir_i.name == "r5":
            assert isinstance(key, BuildError) and "runs/r5/a/pipe" in str(key)
        else:
            assert key == walk_hash(run_dir_i, site, "code")
    assert len(set(k for k in got if isinstance(k, str))) == len(dirs) - 1
    assert str((site / "runs" / "r8" / "a" / "z.jfr").resolve()) in hashes.entries


def hard_link_copy(run_dir: Path, copy: Path) -> None:
    for path in sorted(run_dir.rglob("*")):
        target = copy / path.relative_to(run_dir)
        if path.is_dir() and not path.is_symlink():
            target.mkdir(parents=True, exist_ok=True)
        elif path.is_file() and not path.is_symlink():
            target.parent.mkdir(parents=True, exist_ok=True)
            os.link(path, target)


def test_run_keys_follow_changes_and_read_no_file_hashes_of_an_unchanged_run(run, tmp_path):
    """RunKeys (the build's key cache): each run's key equals run_input_hash's; a later build
    keys an unchanged run from its files' stat alone (its file hashes are not read: here they
    are gone), a changed file of one hard-linked copy changes that copy's key only, and a gone
    run's records go."""
    site, run_dir = run
    for link in ("link-in", "link-out", "linked-folder"):
        (run_dir / link).unlink()
    hard_link_copy(run_dir, site / "runs" / "r2")
    cache = tmp_path / "cache"
    dirs = [site / "runs" / name for name in ("r1", "r2")]
    keys = RunKeys(cache)
    first = list(run_input_hashes(dirs, site, "code", keys, 2))
    keys.save()
    assert first == [walk_hash(d, site, "code") for d in dirs] and first[0] != first[1]
    assert len(list((cache / "files").iterdir())) == 2

    for shard in (cache / "files").iterdir():
        shard.write_text("not read")
    keys = RunKeys(cache)
    assert [keys.run_key(d, site, "code") for d in dirs] == first
    keys.save()
    assert {p.read_text() for p in (cache / "files").iterdir()} == {"not read"}

    # (replaced, not rewritten: the copy's file is the same inode)
    (run_dir / "a" / "deeper" / "y.new").write_text("changed, longer")
    (run_dir / "a" / "deeper" / "y.new").replace(run_dir / "a" / "deeper" / "y")
    keys = RunKeys(cache)
    again = [keys.run_key(d, site, "code") for d in dirs]
    assert again[1] == first[1]
    assert again[0] != first[0] and again[0] == walk_hash(run_dir, site, "code")
    assert keys.run_key(dirs[1], site, "other code") != first[1]

    shutil.rmtree(dirs[1])
    keys = RunKeys(cache)
    keys.run_key(dirs[0], site, "code")
    keys.save()
    assert list(json.loads((cache / "run-keys.json").read_text())) == [str(run_dir.resolve())]
    assert len(list((cache / "files").iterdir())) == 1


def test_run_keys_of_a_run_with_links_or_a_fifo_are_those_of_run_input_hash(run, tmp_path):
    site, run_dir = run
    keys = RunKeys(tmp_path / "cache")
    assert keys.run_key(run_dir, site, "code") == walk_hash(run_dir, site, "code")
    keys.save()
    os.mkfifo(run_dir / "a" / "pipe")
    with pytest.raises(BuildError, match="not a regular file"):
        RunKeys(tmp_path / "cache").run_key(run_dir, site, "code")


def test_runs_new_to_the_key_cache_are_hashed_on_worker_processes(run, tmp_path, monkeypatch):
    """From PROCESSES_FROM runs the cache holds no key of, a build hashes those on a pool of
    processes (threads shared the interpreter lock): the same keys in the runs' order, a FIFO's
    error naming it, each run's file hashes written and its key kept for the next build; a run
    the cache knows is keyed here."""
    from analysis.pipeline import cache
    site, run_dir = run
    for link in ("link-in", "link-out", "linked-folder"):
        (run_dir / link).unlink()
    names = [f"r{i:02d}" for i in range(2, cache.PROCESSES_FROM + 3)]
    for name in names:
        hard_link_copy(run_dir, site / "runs" / name)
    os.mkfifo(site / "runs" / "r05" / "a" / "pipe")
    dirs = [site / "runs" / name for name in ["r1"] + names]
    keys = RunKeys(tmp_path / "cache")
    keys.run_key(dirs[0], site, "code")   # known to the next build: not new
    keys.save()
    keys = RunKeys(tmp_path / "cache")
    pids = tmp_path / "pids"
    real = cache.run_input_hash

    def noting_pid(run_dir, *args):
        with open(pids, "a") as f:
            f.write(f"{run_dir.name} {os.getpid()}\n")
        return real(run_dir, *args)
    monkeypatch.setattr(cache, "run_input_hash", noting_pid)
    pids.write_text("")
    got = list(run_input_hashes(dirs, site, "code", keys, 2))
    where = dict(line.split() for line in pids.read_text().splitlines())
    assert set(where) == set(names)   # r1's key was kept
    assert str(os.getpid()) not in where.values()
    for d, key in zip(dirs, got):
        if d.name == "r05":
            assert isinstance(key, BuildError) and str(key).startswith("runs/r05/a/pipe: ")
        else:
            assert key == walk_hash(d, site, "code")
    keys.save()
    kept = json.loads((tmp_path / "cache" / "run-keys.json").read_text())
    assert sorted(kept) == sorted(str(d.resolve()) for d in dirs if d.name != "r05")
    assert len(list((tmp_path / "cache" / "files").iterdir())) == len(kept)
    again = RunKeys(tmp_path / "cache")
    assert [again.run_key(d, site, "code") for d in dirs if d.name != "r05"] \
        == [k for d, k in zip(dirs, got) if d.name != "r05"]
