"""checks.load_yaml: libyaml's parser where it gives what PyYAML's Python loader gives (values,
errors and their messages), and the Python loader where libyaml would crash the process."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from analysis.read import checks
from analysis.read.checks import Loader, load_yaml
from tests.test_hardening import HOSTILE, VALID, yaml_fragments

REPO = Path(__file__).resolve().parents[1]
pytestmark = pytest.mark.skipif(not yaml.__with_libyaml__, reason="PyYAML without libyaml")


def outcome(text: str, load) -> tuple:
    """('ok', value) or ('error', type, message)."""
    try:
        return ("ok", load(text))
    except (yaml.YAMLError, ValueError, RecursionError) as exc:
        return ("error", type(exc).__name__, str(exc))


def same(a, b, seen=None) -> bool:
    """Equality that visits each pair of shared objects once: an alias bomb's 9^9 leaves are
    nine lists deep, and a recursive alias refers to itself."""
    seen = set() if seen is None else seen
    if (id(a), id(b)) in seen:
        return True
    if type(a) is not type(b):
        return False
    if isinstance(a, (list, tuple)):
        seen.add((id(a), id(b)))
        return len(a) == len(b) and all(same(x, y, seen) for x, y in zip(a, b))
    if isinstance(a, dict):
        seen.add((id(a), id(b)))
        return list(a) == list(b) and all(same(a[k], b[k], seen) for k in a)
    return a == b or (a != a and b != b)    # nan


def assert_as_python(text: str) -> None:
    ours = outcome(text, load_yaml)
    python = outcome(text, lambda t: yaml.load(t, Loader=Loader))  # noqa: S506 - a SafeLoader
    assert ours[0] == python[0], (ours[:3], python[:3])
    if ours[0] == "ok":
        assert same(ours[1], python[1])
    else:
        assert ours == python


def committed_yaml() -> list[Path]:
    """Every run.yml and comparison file in the repository and its test fixtures."""
    return sorted({p for pattern in ("runs/*/run.yml", "tests/fixtures/**/run.yml",
                                    "_comparisons/*.yml", "tests/fixtures/**/*.yml")
                   for p in REPO.glob(pattern)})


def test_committed_manifests_load_as_with_the_python_loader():
    paths = committed_yaml()
    assert len(paths) > 10
    for path in paths:
        assert_as_python(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("name", sorted(k for k, v in HOSTILE.items() if isinstance(v, str)))
def test_hostile_documents_load_or_fail_as_with_the_python_loader(name):
    assert_as_python(HOSTILE[name])


# where the two parsers might part: line breaks and characters outside YAML's printable set
edges = st.sampled_from(["\x85", "\u2028", "\u2029", "\x07", "\x7f", "\r", "\r\n", "\u00a0", "\ufffe",
                         "'a\n  b'", '"\\x41\\q"', "? [a]", "!!str", "!<tag:yaml.org,2002:int> 3",
                         "&a", "*z", "{a: 1, a: 2}", "[a: 1]", "- - x", "@", "`"])


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(parts=st.lists(st.tuples(st.sampled_from(list(VALID) + ["x"]),
                                st.lists(st.one_of(yaml_fragments, edges), min_size=1,
                                         max_size=3)),
                      min_size=1, max_size=8))
def test_random_yaml_loads_or_fails_as_with_the_python_loader(parts):
    assert_as_python("".join(f"{k}: {' '.join(frags)}\n" for k, frags in parts))


def test_dates_stay_strings_through_libyaml():
    assert load_yaml("date: 2026-11-22\n") == {"date": "2026-11-22"}
    assert load_yaml("date: 2026-11-22\n", yaml.SafeLoader)["date"].isoformat() == "2026-11-22"


def test_an_ordinary_manifest_is_composed_by_libyaml(monkeypatch):
    """The fast path is taken (a Python-parser fallback for everything would pass the tests
    above and cost 10x)."""
    used = []
    real = yaml.load
    monkeypatch.setattr(yaml, "load", lambda text, Loader: used.append(Loader) or real(text, Loader))
    load_yaml((REPO / "runs" / "pool-vs-virtual" / "run.yml").read_text(encoding="utf-8"))
    assert used == [checks._C_TWINS[Loader]] and issubclass(used[0], yaml.CSafeLoader)


# (built in the child: 400 KB is too long for its command line)
DEEP = '"generated_by: " + "[" * 200_000 + "]" * 200_000 + "\\n"'


def run_python(code: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], cwd=REPO, capture_output=True, text=True,
                          timeout=60)


def test_a_document_nested_too_deeply_for_libyaml_is_an_error_not_a_crash():
    """libyaml's composer recurses in C: 200,000 levels killed the process (SIGSEGV)."""
    out = run_python("import yaml\nfrom analysis.read.checks import load_yaml\n"
                     f"try:\n    load_yaml({DEEP})\nexcept RecursionError:\n    print('refused')\n")
    assert out.returncode == 0 and out.stdout == "refused\n", (out.returncode, out.stderr[-300:])


def test_a_page_whose_front_matter_nests_too_deeply_is_not_ours(tmp_path):
    """pages.is_generated reads every page under _reports/ on each build; such a page crashed
    the build (libyaml's loader) before."""
    page = tmp_path / "page.html"
    out = run_python("from pathlib import Path\nfrom analysis.write.pages import is_generated\n"
                     f"page = Path({str(page)!r})\n"
                     f"page.write_text('---\\n' + {DEEP} + '---\\n<p>hand-written</p>\\n')\n"
                     "print(is_generated(page))\n")
    assert out.returncode == 0 and out.stdout == "False\n", (out.returncode, out.stderr[-300:])
