#!/usr/bin/env bash
# Run Jekyll with the arguments given (`scripts/jekyll.sh build`, `... serve --host 127.0.0.1`).
# Through bundler when the Gemfile resolves, so the versions are the ones it names; plain
# `jekyll` otherwise (e.g. Debian's packages present but bundler missing).
set -euo pipefail
cd "$(dirname "$0")/.."
if command -v bundle >/dev/null 2>&1 && bundle check >/dev/null 2>&1; then
  exec bundle exec jekyll "$@"
fi
if command -v jekyll >/dev/null 2>&1; then
  exec jekyll "$@"
fi
echo "error: jekyll not found (run \`make jekyll-deps\`)" >&2
exit 1
