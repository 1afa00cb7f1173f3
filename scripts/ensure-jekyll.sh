#!/usr/bin/env bash
# Make Jekyll and its plugins usable (called by `make jekyll-deps`, so by `make site`).
#   1. already usable (bundler resolves the Gemfile, or plain jekyll has the plugins): nothing.
#   2. RubyGems reachable and bundler present: `bundle install`.
#   3. otherwise, as root on Debian/Ubuntu: apt-get the packaged Jekyll and plugins, which
#      `bundle install --local` then resolves against.
# Anything else ends with one `error:` line naming what to install.
set -euo pipefail
cd "$(dirname "$0")/.."

DEBS=(jekyll ruby-jekyll-feed ruby-jekyll-seo-tag ruby-bundler)

plain_jekyll_ok() {
  command -v jekyll >/dev/null 2>&1 &&
    ruby -e 'require "jekyll"; require "jekyll-feed"; require "jekyll-seo-tag"' >/dev/null 2>&1
}

bundle_ok() {
  command -v bundle >/dev/null 2>&1 && bundle check >/dev/null 2>&1
}

# (a record that bundler resolved this Gemfile, written by a build or by `--check`:
# scripts/jekyll.sh checks again when `bundle exec` fails)
if bash scripts/jekyll.sh --checked || bash scripts/jekyll.sh --check; then exit 0; fi
# --local resolves against installed gems only (Debian's); quick and offline.
if command -v bundle >/dev/null 2>&1 && bundle install --local --quiet >/dev/null 2>&1; then
  exit 0
fi
if plain_jekyll_ok; then exit 0; fi

# A short timeout: on a machine without network we want the apt path, not a long hang.
if command -v bundle >/dev/null 2>&1 && command -v curl >/dev/null 2>&1 &&
   curl -fsS --max-time 10 -o /dev/null https://rubygems.org/; then
  echo "jekyll-deps: installing gems with bundle install"
  bundle install --quiet && exit 0
  echo "jekyll-deps: bundle install failed; trying Debian packages" >&2
fi

if command -v apt-get >/dev/null 2>&1 && [ "$(id -u)" = 0 ]; then
  echo "jekyll-deps: installing Debian packages: ${DEBS[*]}"
  if ! apt-get update -qq ||
     ! DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${DEBS[@]}" >/dev/null; then
    echo "error: apt-get could not install ${DEBS[*]} (see apt's message above)" >&2
    exit 1
  fi
  bundle install --local --quiet >/dev/null 2>&1 || true
  if bundle_ok || plain_jekyll_ok; then exit 0; fi
fi

echo "error: Jekyll with jekyll-feed and jekyll-seo-tag is not usable and could not be installed" \
     "(install Ruby and run \`bundle install\`, or as root: apt-get install ${DEBS[*]})" >&2
exit 1
