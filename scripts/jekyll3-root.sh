#!/usr/bin/env bash
# Make (once) a Debian bullseye root with the GitHub Pages generation of Jekyll: Jekyll 3.9,
# Liquid 4.0, Ruby 2.7, jekyll-feed 0.15, jekyll-seo-tag 2.7. tests/test_jekyll3.py builds the
# site in it and compares the result with the Jekyll 4 build. Prints the root's path.
#   LOADCURVE_JEKYLL3_ROOT  where the root lives (default /var/cache/loadcurve/bullseye-jekyll3);
#                           kept between runs: the first takes about 2 minutes, later ones none.
# Needs root and debootstrap (apt-get install debootstrap); says so in one `error:` line.
set -euo pipefail
ROOT="${LOADCURVE_JEKYLL3_ROOT:-/var/cache/loadcurve/bullseye-jekyll3}"
MIRROR="${LOADCURVE_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

if [ -x "$ROOT/usr/bin/jekyll" ] && [ -f "$ROOT/.loadcurve-ready" ]; then
  echo "$ROOT"; exit 0
fi
if [ "$(id -u)" != 0 ]; then
  echo "error: building the Jekyll 3 root needs root (debootstrap, chroot)" >&2; exit 1
fi
if ! command -v debootstrap >/dev/null 2>&1; then
  if command -v apt-get >/dev/null 2>&1; then
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap >/dev/null ||
      { echo "error: apt-get could not install debootstrap" >&2; exit 1; }
  else
    echo "error: needs debootstrap (Debian's package)" >&2; exit 1
  fi
fi

# Build beside the final place and rename at the end: an interrupted run leaves no half root.
partial="$ROOT.partial"
rm -rf "$partial"
mkdir -p "$(dirname "$ROOT")"
echo "jekyll3-root: debootstrap bullseye into $partial (about 2 minutes)" >&2
debootstrap --variant=minbase bullseye "$partial" "$MIRROR" >"$partial.log" 2>&1 ||
  { echo "error: debootstrap failed (see $partial.log)" >&2; exit 1; }
chroot "$partial" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin DEBIAN_FRONTEND=noninteractive \
  sh -c 'apt-get update -qq && apt-get install -y -qq --no-install-recommends jekyll ruby-jekyll-feed ruby-jekyll-seo-tag' \
  >>"$partial.log" 2>&1 ||
  { echo "error: apt-get in the bullseye root failed (see $partial.log)" >&2; exit 1; }
chroot "$partial" /usr/bin/env -i PATH=/usr/bin:/bin LANG=C.UTF-8 jekyll --version >&2
touch "$partial/.loadcurve-ready"
rm -rf "$ROOT"
mv "$partial" "$ROOT"
mv "$partial.log" "$ROOT.log"
echo "$ROOT"
