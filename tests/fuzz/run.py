"""Coverage-guided fuzzing of the .hlog reader, the manifest loader and the JFR reader (atheris).

    .venv/bin/pip install atheris          # not in requirements-dev.txt: run by hand
    .venv/bin/python tests/fuzz/run.py hlog     [libFuzzer options]
    .venv/bin/python tests/fuzz/run.py manifest -max_total_time=300
    .venv/bin/python tests/fuzz/run.py jfr      -max_total_time=300 -rss_limit_mb=1024

The seed corpus is tests/fuzz/corpus/<target>/ plus, for hlog and jfr, the fixtures under
tests/fixtures/; new inputs go to a scratch folder (.cache/fuzz/<target>/, not committed).
A finding is written by libFuzzer as crash-<sha1> (or timeout-/oom-) in the current folder:
minimise it (`-minimize_crash=1 -runs=10000 crash-...`), copy it into
tests/fuzz/corpus/<target>/ under a name saying what it found, fix the bug, and
`pytest tests/test_hardening_corpus.py` keeps it fixed.
"""
from __future__ import annotations

import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

import atheris  # noqa: E402

# Instrument the readers, including the JFR package's submodules (imported lazily otherwise,
# which would hide their branches from the fuzzer).
with atheris.instrument_imports(include=["analysis"]):
    import importlib
    import pkgutil

    import analysis.read.jfr
    for _module in ["analysis.read.hdr.log", "analysis.read.hdr.histogram", "analysis.read.manifest"] + [
            m.name for m in pkgutil.walk_packages(analysis.read.jfr.__path__, "analysis.read.jfr.")]:
        importlib.import_module(_module)

from tests.fuzz.targets import TARGETS  # noqa: E402

SEEDS = {
    "hlog": [REPO / "tests/fuzz/corpus/hlog", REPO / "tests/fixtures/hlog"],
    "manifest": [REPO / "tests/fuzz/corpus/manifest"],
    "jfr": [REPO / "tests/fuzz/corpus/jfr", REPO / "tests/fixtures/jfr"],
}


def main() -> None:
    if len(sys.argv) < 2 or sys.argv[1] not in TARGETS:
        sys.exit(f"usage: {sys.argv[0]} {{{','.join(TARGETS)}}} [libFuzzer options]")
    name = sys.argv[1]
    scratch = REPO / ".cache" / "fuzz" / name
    scratch.mkdir(parents=True, exist_ok=True)
    dirs = [str(scratch)] + [str(d) for d in SEEDS[name] if d.is_dir()]
    given = sys.argv[2:]
    if any(not a.startswith("-") for a in given):
        dirs = []      # inputs given (e.g. `-minimize_crash=1 -runs=10000 crash-...`): just those
    args = [sys.argv[0], *given, *dirs]
    if not any(a.startswith("-max_len=") for a in args):
        args.insert(1, "-max_len=65536")
    atheris.Setup(args, TARGETS[name])
    atheris.Fuzz()


if __name__ == "__main__":
    main()
