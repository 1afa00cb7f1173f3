#!/usr/bin/env bash
# The screenshots under docs/screens/ (issue 34): the phone/desktop layout test, run with
# LOADCURVE_PHONE_SCREENS set so that it saves what it checks. Needs chromium + chromedriver.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -f docs/screens/*.png
LOADCURVE_PHONE_SCREENS=docs/screens "${PY:-.venv/bin/python}" -m pytest -q tests/test_phone_layout.py "$@"
