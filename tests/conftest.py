"""Shared test helpers. Area-specific fixtures live in each area's own test files."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
# CI clones the repo with shared/ beside it; the oracle scripts live there.
SHARED = Path(os.environ.get("LOADCURVE_SHARED", REPO.parent / "shared"))
ORACLE = SHARED / "oracle"
CORPUS = SHARED / "corpus" / "hlog" / "public"


@pytest.fixture
def repo() -> Path:
    return REPO


@pytest.fixture(scope="session")
def oracle() -> Path:
    """The Java reference tools; tests that need them live-skip only where shared/ is absent."""
    if not (ORACLE / "hlp").exists() or shutil.which("java") is None:
        pytest.skip("needs ../shared/oracle and java")
    return ORACLE
