"""The static trees' mirror alone (scripts/mirror_static.py), as a full build from nothing meets
it: runs/, assets/charts/ and assets/data/ of a corpus published into an empty destination with
no state, so every file is tested for front matter and linked (issue 36, the full build's Jekyll
step).

    .venv/bin/python bench/perf/mirror_cost.py DIR [--source OLD] [--repeat 3]
    .venv/bin/python bench/perf/mirror_cost.py DIR [--source OLD] --callgrind [--tree assets/data]

DIR is a corpus kept by `site_scale.py --keep` or `--clone` (its .cache/site-base.yml, written
by its first build, is the config). With --source (e.g. `git archive main | tar -x -C OLD`) the
two scripts run alternating, this tree's first, then the other's first, each into a fresh
destination; each line gives the script's user + system CPU seconds, and each (the child's
own, Python's start included), its wall seconds and the load average before and after. The two
destinations of a pair are compared (every path, the kind of each entry and the inode each file
links to).
--callgrind counts the user-space instructions of each script mirroring one tree (valgrind,
repeatable where CPU seconds are not), less those of a Python that only imports the script's
modules, per file placed (the kernel's work, the links and opens, is not counted).
"""
from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
TREES = ("runs", "assets/charts", "assets/data")


def load() -> str:
    return "load %.2f %.2f %.2f" % os.getloadavg()


def published(dest: Path) -> dict[str, object]:
    """Every entry under dest: a folder, or the inode of the source it links to."""
    found: dict[str, object] = {}
    for folder, dirs, files in os.walk(dest):
        rel = os.path.relpath(folder, dest)
        for name in dirs:
            found[os.path.join(rel, name)] = "dir"
        for name in files:
            st = os.lstat(os.path.join(folder, name))
            found[os.path.join(rel, name)] = (st.st_mode, st.st_ino)
    return found


def mirror_once(script: Path, corpus: Path, scratch: Path) -> tuple[float, float, float, Path]:
    dest = scratch / "_site"
    shutil.rmtree(scratch, ignore_errors=True)
    scratch.mkdir(parents=True)
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(["python3", str(script), "--config", str(corpus / ".cache/site-base.yml"),
                           "--dest", str(dest), "--overlay", str(scratch / "site-mirror.yml"),
                           *TREES], cwd=corpus, stderr=subprocess.PIPE, text=True)
    wall = time.perf_counter() - start
    # its "mirror runs/: N placed" lines are the same each time; anything else is shown
    sys.stderr.write("".join(x for x in done.stderr.splitlines(True)
                             if not x.startswith("mirror ")))
    done.check_returncode()
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return after.ru_utime - before.ru_utime, after.ru_stime - before.ru_stime, wall, dest


def instructions(command: list[str], cwd: Path) -> int:
    """User-space instructions of command under callgrind (the interpreter itself, not the
    python3 shim a version manager may put first on PATH)."""
    out = cwd / ".cache" / "mirror-cost.callgrind"
    done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={out}",
                           *command], cwd=cwd, capture_output=True, text=True, check=True)
    out.unlink(missing_ok=True)
    return int(re.search(r"Collected : (\d+)", done.stderr).group(1))


def count_instructions(scripts: list[tuple[str, Path]], corpus: Path, scratch: Path,
                       tree: str) -> None:
    python = subprocess.run(["python3", "-c", "import sys; print(sys.executable)"],
                            capture_output=True, text=True, check=True).stdout.strip()
    start = instructions([python, "-c", "import argparse, errno, json, os, re, shutil, stat, "
                          "sys, time, fnmatch, pathlib"], corpus)
    files = sum(len(f) for _, _, f in os.walk(corpus / tree))
    print(f"{tree}: {files} files; Python's start and imports: {start:,} instructions", flush=True)
    for name, script in scripts:
        shutil.rmtree(scratch, ignore_errors=True)
        scratch.mkdir(parents=True)
        total = instructions([python, str(script), "--config", str(corpus / ".cache/site-base.yml"),
                              "--dest", str(scratch / "_site"), "--overlay",
                              str(scratch / "site-mirror.yml"), tree], corpus)
        print(f"{name:<10} {total:,} instructions: {(total - start) / files:,.0f} a file",
              flush=True)
    shutil.rmtree(scratch, ignore_errors=True)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("corpus", type=Path, help="a corpus kept by site_scale.py --keep/--clone")
    parser.add_argument("--source", type=Path, help="the code before (a git archive of main)")
    parser.add_argument("--repeat", type=int, default=3, help="pairs in each order")
    parser.add_argument("--callgrind", action="store_true",
                        help="instructions a file under callgrind, one tree (--tree)")
    parser.add_argument("--tree", default="assets/data", choices=TREES,
                        help="the tree --callgrind mirrors")
    parser.add_argument("--scratch", type=Path,
                        help="where the destinations go (default DIR/.cache/mirror-cost: the "
                        "corpus's file system, so the mirror links)")
    args = parser.parse_args()
    corpus = args.corpus.resolve()
    scratch = args.scratch or corpus / ".cache/mirror-cost"
    scripts = [("this tree", REPO / "scripts/mirror_static.py")]
    if args.source:
        scripts.append(("--source", args.source.resolve() / "scripts/mirror_static.py"))
    if args.callgrind:
        count_instructions(scripts, corpus, scratch, args.tree)
        return 0
    files = sum(len(f) for t in TREES for _, _, f in os.walk(corpus / t))
    print(f"{corpus}: {files} files in {', '.join(TREES)}", flush=True)
    for turn in range(args.repeat * len(scripts)):
        order = scripts if turn % 2 == 0 else scripts[::-1]
        outputs = []
        for i, (name, script) in enumerate(order):
            before = load()
            user, system, wall, dest = mirror_once(script, corpus, scratch / str(i))
            print(f"{name:<10} CPU {user + system:6.2f} s (user {user:5.2f}, system "
                  f"{system:5.2f}), wall {wall:6.2f} s   [{before} -> {load()}]", flush=True)
            outputs.append(published(dest) if len(order) > 1 else None)
        if len(order) > 1:
            print("  same entries, same inodes: " + ("yes" if outputs[0] == outputs[1] else "NO"),
                  flush=True)
    shutil.rmtree(scratch, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
