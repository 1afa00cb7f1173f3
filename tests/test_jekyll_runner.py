"""The Ruby starts around Jekyll, each made once, not on every build: scripts/jekyll.sh's
`bundle check` (a build records that it passed for this bundle, Gemfile and Gemfile.lock, and
checks again when they change or when `bundle exec` fails: a locked gem removed since), and
build-site.sh's config step. Here `bundle` and `jekyll` are recorders."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BUNDLE = """#!/bin/sh
echo "bundle $*" >> "$CALLS"
case "$1" in
  check) [ -z "${LOCK_ON_CHECK:-}" ] || echo "GEM" > Gemfile.lock; exit "${CHECK_STATUS:-0}" ;;
  exec) shift; [ "${EXEC_STATUS:-0}" = 0 ] || exit "$EXEC_STATUS"; exec "$@" ;;
esac
exit 0
"""
JEKYLL = """#!/bin/sh
echo "jekyll $*" >> "$CALLS"
exit "${JEKYLL_STATUS:-0}"
"""


def project(tmp_path: Path) -> tuple[Path, dict]:
    src, tools = tmp_path / "src", tmp_path / "bin"
    for rel in ("scripts/jekyll.sh", "scripts/ensure-jekyll.sh", "Gemfile"):
        (src / rel).parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(REPO / rel, src / rel)
    (src / "Gemfile.lock").write_text("GEM\n")
    tools.mkdir()
    for name, text in (("bundle", BUNDLE), ("jekyll", JEKYLL)):
        (tools / name).write_text(text)
        (tools / name).chmod(0o755)
    env = {**os.environ, "CALLS": str(tmp_path / "calls.txt"),
           "PATH": f"{tools}{os.pathsep}{os.environ['PATH']}"}
    return src, env


def run(src: Path, env: dict, script: str, *args: str, **extra: str) -> tuple[int, list[str]]:
    calls = Path(env["CALLS"])
    calls.unlink(missing_ok=True)
    result = subprocess.run(["bash", f"scripts/{script}", *args], cwd=src,
                            env={**env, **extra}, capture_output=True, text=True, timeout=60)
    lines = calls.read_text().splitlines() if calls.exists() else []
    return result.returncode, lines


def test_bundle_check_runs_again_only_when_the_bundle_may_have_changed(tmp_path):
    src, env = project(tmp_path)
    assert run(src, env, "jekyll.sh", "build") == \
        (0, ["bundle check", "bundle exec jekyll build", "jekyll build"])
    assert run(src, env, "jekyll.sh", "build") == (0, ["bundle exec jekyll build", "jekyll build"])
    assert run(src, env, "ensure-jekyll.sh") == (0, [])
    # serve keeps its check (and exec: it runs until stopped)
    assert run(src, env, "jekyll.sh", "serve")[1][0] == "bundle check"
    # the lock rewritten: checked again
    (src / "Gemfile.lock").write_text("GEM\n  specs:\n")
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle check"
    # another Gemfile named for bundler: checked
    assert run(src, env, "jekyll.sh", "build",
               BUNDLE_GEMFILE=str(src / "Gemfile"))[1][0] == "bundle check"
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle check"
    # Jekyll fails, bundler still resolves: Jekyll's status, the record kept
    status, calls = run(src, env, "jekyll.sh", "build", JEKYLL_STATUS="1")
    assert (status, calls[-1]) == (1, "bundle check")
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle exec jekyll build"
    # a locked gem gone: bundle exec fails, the check too: plain jekyll, and checked next time
    status, calls = run(src, env, "jekyll.sh", "build", EXEC_STATUS="1", CHECK_STATUS="1")
    assert (status, calls) == (0, ["bundle exec jekyll build", "bundle check", "jekyll build"])
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle check"


def test_settle_checks_the_bundle_only_when_bundler_would_write_the_lock(tmp_path):
    """build-site.sh runs `jekyll.sh --settle` before its stamp hashes Gemfile.lock: with no lock
    (or one older than the Gemfile) the check runs then, so the lock bundler writes is there
    before the hash, and the build's Jekyll needs no check of its own."""
    src, env = project(tmp_path)
    (src / "Gemfile.lock").unlink()
    env = {**env, "LOCK_ON_CHECK": "1"}
    assert run(src, env, "jekyll.sh", "--settle") == (0, ["bundle check"])
    assert (src / "Gemfile.lock").is_file()
    assert run(src, env, "jekyll.sh", "build") == (0, ["bundle exec jekyll build", "jekyll build"])
    assert run(src, env, "jekyll.sh", "--settle") == (0, [])
    # the Gemfile edited after the lock: bundler may rewrite the lock, so checked now
    lock_time = (src / "Gemfile.lock").stat().st_mtime
    with open(src / "Gemfile", "a", encoding="utf-8") as gemfile:
        gemfile.write("# edited\n")
    os.utime(src / "Gemfile", (lock_time + 10, lock_time + 10))
    assert run(src, env, "jekyll.sh", "--settle") == (0, ["bundle check"])
    # a lock newer than the Gemfile, not yet checked: left to the build, as before
    (src / ".cache" / "bundle-checked").unlink()
    os.utime(src / "Gemfile", (lock_time - 10, lock_time - 10))
    assert run(src, env, "jekyll.sh", "--settle") == (0, [])
    # a failing check records nothing
    (src / "Gemfile.lock").unlink()
    assert run(src, env, "jekyll.sh", "--settle", CHECK_STATUS="1") == (0, ["bundle check"])
    assert not (src / ".cache" / "bundle-checked").exists()


def test_a_copy_of_a_checked_bundle_with_its_record_is_not_checked_again(tmp_path):
    """The record keys on the Gemfile's and the lock's contents, bundler's local config and its
    variables, not on inodes and times: a site assembled from copies (each of the test suite's
    small sites) with the record copied beside them skips `bundle check` (~0.6 CPU s of its
    first build); a change of any of those is checked."""
    src, env = project(tmp_path)
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle check"
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)      # new inodes, new change times
    assert run(copy, env, "jekyll.sh", "build")[1] == ["bundle exec jekyll build", "jekyll build"]
    assert run(copy, env, "jekyll.sh", "build", BUNDLE_PATH="vendor")[1][0] == "bundle check"
    assert run(copy, env, "jekyll.sh", "build")[1][0] == "bundle check"
    (copy / ".bundle").mkdir()
    (copy / ".bundle" / "config").write_text("BUNDLE_PATH: vendor\n")
    assert run(copy, env, "jekyll.sh", "build")[1][0] == "bundle check"
    (copy / "Gemfile.lock").write_text("GEM\n  specs:\n")
    assert run(copy, env, "jekyll.sh", "build")[1][0] == "bundle check"
    assert run(copy, env, "jekyll.sh", "build")[1][0] == "bundle exec jekyll build"


# `ruby` for a `bundle` whose first line names it: runs bundle's shell text, records the rest
RUBY = """#!/bin/sh
case "$1" in
  -rbundler/setup) echo "ruby $*" >> "$CALLS"; exit "${RUBY_STATUS:-0}" ;;
esac
exec sh "$@"
"""


def test_a_checked_bundle_runs_jekyll_in_its_ruby_without_bundle_exec(tmp_path):
    """Once `bundle check` passed, a build loads Jekyll's program under bundler/setup in the
    Ruby that `bundle` runs on: bundle exec's command line is not started."""
    src, env = project(tmp_path)
    tools = Path(env["PATH"].split(os.pathsep)[0])
    (tools / "bundle").write_text("#!/usr/bin/env ruby\n" + BUNDLE.split("\n", 1)[1])
    (tools / "ruby").write_text(RUBY)
    (tools / "ruby").chmod(0o755)
    fast = "ruby -rbundler/setup -e load Gem.bin_path(\"jekyll\", \"jekyll\") -- build -q"
    assert run(src, env, "jekyll.sh", "build", "-q") == \
        (0, ["bundle check", "bundle exec jekyll build -q", "jekyll build -q"])
    assert run(src, env, "jekyll.sh", "build", "-q") == (0, [fast])
    # Jekyll fails, bundler still resolves: Jekyll's status, no second try
    assert run(src, env, "jekyll.sh", "build", "-q", RUBY_STATUS="1") == \
        (1, [fast, "bundle check"])
    # bundler/setup fails and so does the check: plain jekyll, and checked next time
    assert run(src, env, "jekyll.sh", "build", "-q", RUBY_STATUS="1", CHECK_STATUS="1") == \
        (0, [fast, "bundle check", "jekyll build -q"])
    assert run(src, env, "jekyll.sh", "build", "-q")[1][0] == "bundle check"
    # serve still goes through bundle exec
    assert run(src, env, "jekyll.sh", "serve")[1] == \
        ["bundle check", "bundle exec jekyll serve", "jekyll serve"]


def test_the_mirror_config_is_made_by_ruby_only_when_its_inputs_change(tmp_path):
    """build-site.sh's Ruby step (_config.yml's exclude and defaults as JSON) runs when
    _config.yml, the symbolic links or the program changed, not on every build."""
    src, env = project(tmp_path)
    for rel in ("scripts/build-site.sh", "scripts/mirror_static.py", "scripts/site_stamp.py",
                "_config.yml"):
        shutil.copy2(REPO / rel, src / rel)
    (src / "runs" / "r1").mkdir(parents=True)
    (src / "runs" / "r1" / "a.csv").write_text("a\n")
    real_ruby = shutil.which("ruby")
    tools = Path(env["PATH"].split(os.pathsep)[0])
    (tools / "ruby").write_text(f'#!/bin/sh\necho "ruby" >> "$CALLS"\nexec {real_ruby} "$@"\n')
    (tools / "ruby").chmod(0o755)
    env = {**env, "PY": shutil.which("python3") or "python3", "CHECK_STATUS": "1"}
    base = src / ".cache" / "site-base.yml"

    def rubies() -> int:
        status, calls = run(src, env, "build-site.sh")
        assert status == 0
        return calls.count("ruby")

    assert rubies() == 1 and '"runs/r1/link"' not in base.read_text()
    assert rubies() == 0
    os.symlink("a.csv", src / "runs" / "r1" / "link")
    assert rubies() == 1 and '"runs/r1/link"' in base.read_text()
    assert rubies() == 0
    with open(src / "_config.yml", "a", encoding="utf-8") as config:
        config.write("\nkeep_files: [kept]\n")
    assert rubies() == 1 and '"kept"' in base.read_text()
