#!/usr/bin/env bash
# `make site`'s Jekyll step: `jekyll build` with the site's address for this one build.
#   LOADCURVE_URL=https://you.example.org (or `make site URL=...`): written to .cache/url.yml and
#   layered over _config.yml, which stays as it is. A path sets `baseurl` as well
#   (https://you.github.io/loadcurve -> url https://you.github.io, baseurl /loadcurve). Without it, _config.yml's `url` is used, and
#   a loud warning is printed while that is still the placeholder: entry ids and canonical links
#   derive from it, and changing it after readers subscribe makes every old post reappear as new.
set -euo pipefail
cd "$(dirname "$0")/.."
PLACEHOLDER="https://loadcurve.example.org"
configs="_config.yml"
url="${LOADCURVE_URL:-}"
if [ -n "$url" ]; then
  if ! [[ "$url" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$ ]] || [[ "$url" == */ ]]; then
    echo "error: URL must look like https://host or https://host/path, without a trailing slash: $url" >&2
    exit 1
  fi
  origin="$(printf '%s' "$url" | sed -E 's|^(https?://[^/]+).*|\1|')"
  mkdir -p .cache
  printf '# Written by scripts/build-site.sh for one build (make site URL=...).\nurl: "%s"\nbaseurl: "%s"\n' \
    "$origin" "${url#"$origin"}" > .cache/url.yml
  configs="$configs,.cache/url.yml"
elif grep -Eq "^url: *\"?$PLACEHOLDER\"?\s*$" _config.yml; then
  {
    echo "**************************************************************************************"
    echo "WARNING: url in _config.yml is the placeholder $PLACEHOLDER."
    echo "  Feed entry ids and canonical links are built from it; publishing with it, then"
    echo "  changing it, shows every old post to subscribers as new. Set url: in _config.yml,"
    echo "  or for one build: make site URL=https://your.host (or LOADCURVE_URL=...)."
    echo "**************************************************************************************"
  } >&2
fi
exec bash scripts/jekyll.sh build --config "$configs" "$@"
