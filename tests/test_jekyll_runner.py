"""scripts/jekyll.sh runs `bundle check` once, not on every build: a build records that it
passed for this bundle, Gemfile and Gemfile.lock, and checks again when they change or when
`bundle exec` fails (a locked gem removed since). Here `bundle` and `jekyll` are recorders."""
from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]

BUNDLE = """#!/bin/sh
echo "bundle $*" >> "$CALLS"
case "$1" in
  check) exit "${CHECK_STATUS:-0}" ;;
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
    # Jekyll fails, bundler still resolves: Jekyll's status, the record kept
    status, calls = run(src, env, "jekyll.sh", "build", JEKYLL_STATUS="1")
    assert (status, calls[-1]) == (1, "bundle check")
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle exec jekyll build"
    # a locked gem gone: bundle exec fails, the check too: plain jekyll, and checked next time
    status, calls = run(src, env, "jekyll.sh", "build", EXEC_STATUS="1", CHECK_STATUS="1")
    assert (status, calls) == (0, ["bundle exec jekyll build", "bundle check", "jekyll build"])
    assert run(src, env, "jekyll.sh", "build")[1][0] == "bundle check"
