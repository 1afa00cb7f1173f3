"""Every command has --help (style: sqlite-utils' test that enforces it)."""
import importlib
import subprocess
import sys

import pytest

from analysis.cli import COMMANDS
from tests.conftest import REPO


def run(*args):
    return subprocess.run([sys.executable, "-m", "analysis", *args], cwd=REPO,
                          capture_output=True, text=True, timeout=120)


def test_top_level_help_lists_every_command():
    out = run("--help")
    assert out.returncode == 0, out.stderr
    for name in COMMANDS:
        assert name in out.stdout


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_command_help(name):
    out = run(name, "--help")
    assert out.returncode == 0, out.stderr
    assert out.stdout.startswith("usage: python -m analysis " + name)
    assert "Traceback" not in out.stderr


def test_unknown_command_is_a_usage_error():
    out = run("no-such-command")
    assert out.returncode == 2
    assert "Traceback" not in out.stderr


@pytest.mark.parametrize("name", sorted(COMMANDS))
def test_help_line_is_the_module_docstring(name):
    module_name, summary = COMMANDS[name]
    doc = importlib.import_module(module_name).__doc__
    assert " ".join(doc.strip().split("\n\n")[0].split()) == summary


def test_only_the_chosen_command_is_imported():
    code = ("import sys; from analysis.cli import build_parser; "
            "build_parser(['new-post', 'x']); "
            "print('analysis.commands.hgrm' in sys.modules, 'analysis.commands.new_post' in sys.modules)")
    out = subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True,
                         text=True, timeout=120)
    assert out.stdout.split() == ["False", "True"], out.stderr


def test_ctrl_c_while_a_class_is_made_is_an_interruption_not_an_internal_error(
        monkeypatch, capsys):
    """CI (b2e6632): Ctrl-C landed while the corpus step imported a module defining a
    dataclass; Python 3.11 turned it into RuntimeError("Error calling __set_name__ ..."), and
    the build said "internal error" and exited 2 instead of 130."""
    from analysis import cli
    from analysis.commands import hgrm

    def interrupted_while_making_a_class(args):
        class Field:
            def __set_name__(self, owner, name):
                raise KeyboardInterrupt
        # 3.11 raises RuntimeError from it; 3.12+ the KeyboardInterrupt itself
        type("CellHistory", (), {"changes": Field()})

    monkeypatch.setattr(hgrm, "run", interrupted_while_making_a_class)
    assert cli.main(["hgrm", "-i", "x.hlog"]) == 130
    assert capsys.readouterr().err == "error: interrupted\n"
