#!/usr/bin/env bash
# `make site`: analyse runs/, build the tag feeds, run Jekyll - and publish every good run even
# when some fail. A failed run gets no page (the build removes what earlier builds made for it);
# the site is built from the others, then its errors are listed last and the exit status is the
# analysis's (1 bad input, 2 internal error). When the analysis fails as a whole (lock held, no
# runs folder: no error list written), nothing is built.
#   PY=.venv/bin/python RUNS=runs LOADCURVE_URL=... bash scripts/site.sh
set -uo pipefail
cd "$(dirname "$0")/.."
PY="${PY:-.venv/bin/python}"
errors=.cache/loadcurve/errors.txt
rm -f "$errors"
"$PY" -m analysis build --runs "${RUNS:-runs}"
status=$?
if [ "$status" -ne 0 ] && [ ! -f "$errors" ]; then
  exit "$status"
fi
"$PY" scripts/tag_feeds.py || exit $?
bash scripts/build-site.sh || exit $?
if [ "$status" -ne 0 ]; then
  n=$(grep -c '^error:' "$errors" || true)
  echo "" >&2
  echo "The site was built without the run(s) that failed; $n error(s):" >&2
  cat "$errors" >&2
fi
exit "$status"
