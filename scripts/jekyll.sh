#!/usr/bin/env bash
# Run Jekyll with the arguments given (`scripts/jekyll.sh build`, `... serve --host 127.0.0.1`).
# Through bundler when the Gemfile resolves, so the versions are the ones it names; plain
# `jekyll` otherwise (e.g. Debian's packages present but bundler missing).
#   `scripts/jekyll.sh --checked`: exit 0 when a build recorded that `bundle check` passed for
#   this bundle, Gemfile and Gemfile.lock (scripts/ensure-jekyll.sh then checks nothing).
set -euo pipefail
cd "$(dirname "$0")/.."
# `bundle check` is a Ruby start and a resolve of its own (0.35 CPU s of the 1-2 s a build
# that adds one run may take, and `make site` ran it twice): a build remembers that it passed
# for this bundle, Gemfile and Gemfile.lock. Should a gem locked there be gone since,
# `bundle exec` fails: then the check runs again, and its answer decides, as it did before.
checked=.cache/bundle-checked
# The key is what bundler resolves from: the Gemfile's and the lock's contents (not their inodes
# or times: a site assembled from copies of them, as the test suite's small sites are, finds the
# record its source wrote; a missing file is its error line), bundler's local config and its
# BUNDLE_ variables.
bundle_key() {
  local gemfile="${BUNDLE_GEMFILE:-Gemfile}"
  printf '%s\n' "$(command -v bundle)" "$gemfile"
  sha256sum "$gemfile" "$gemfile.lock" .bundle/config 2>&1 || true
  env | grep '^BUNDLE_' | LC_ALL=C sort || true
}
recorded() { command -v bundle >/dev/null 2>&1 && [ -f "$checked" ] && [ "$(cat "$checked")" = "$(bundle_key)" ]; }
# The Ruby that `bundle` runs on, from its first line (`#!/usr/bin/ruby3.1`, `#!/usr/bin/env
# ruby`); nothing when it is not a Ruby script (a version manager's shim, say).
bundle_ruby() {
  local line words
  IFS= read -r line < "$(command -v bundle)" || return 1
  [ "${line:0:2}" = '#!' ] || return 1
  read -r -a words <<< "${line:2}"
  if [ "${words[0]##*/}" = env ] && [ "${#words[@]}" = 2 ]; then
    words[0]=$(command -v "${words[1]}") || return 1
  fi
  case "${words[0]##*/}" in ruby|ruby[0-9]*) printf '%s\n' "${words[0]}" ;; *) return 1 ;; esac
}
if [ "${1:-}" = --checked ]; then
  recorded
  exit
fi
#   `scripts/jekyll.sh --check`: `bundle check`, recorded when it passes (ensure-jekyll.sh's, so
#   that sites assembled from this one's Gemfile and lock find the record before any build).
if [ "${1:-}" = --check ]; then
  command -v bundle >/dev/null 2>&1 && bundle check >/dev/null 2>&1 || exit 1
  mkdir -p .cache && bundle_key > "$checked"
  exit 0
fi
#   `scripts/jekyll.sh --settle`: when bundler would write Gemfile.lock (none yet, or older than
#   the Gemfile), check the bundle now, before build-site.sh's stamp hashes the lock: a lock
#   written inside the build made the next build render every page, and a no-change one run.
if [ "${1:-}" = --settle ]; then
  gemfile="${BUNDLE_GEMFILE:-Gemfile}"
  if command -v bundle >/dev/null 2>&1 && { [ ! -e "$gemfile.lock" ] || [ "$gemfile" -nt "$gemfile.lock" ]; } \
      && ! recorded && bundle check >/dev/null 2>&1; then
    mkdir -p .cache && bundle_key > "$checked"
  fi
  exit 0
fi
if command -v bundle >/dev/null 2>&1; then
  if [ "${1:-}" = build ] && recorded; then
    status=0
    # `bundle exec` starts bundler's command line (Thor, its resolver) before Jekyll, ~0.25
    # CPU s of a build that adds one run: with the lock resolved and checked, bundler/setup
    # in bundle's own Ruby activates the same locked gems, and Jekyll requires the plugins
    # group from the Gemfile itself (PluginManager.require_from_bundler), as it does under
    # `bundle exec`.
    if interpreter=$(bundle_ruby); then
      "$interpreter" -rbundler/setup -e 'load Gem.bin_path("jekyll", "jekyll")' -- "$@" || status=$?
    else
      bundle exec jekyll "$@" || status=$?
    fi
    if [ "$status" = 0 ] || bundle check >/dev/null 2>&1; then
      exit "$status"
    fi
    rm -f "$checked"
    echo "warning: bundler no longer resolves the Gemfile; trying plain jekyll" >&2
  elif bundle check >/dev/null 2>&1; then
    if [ "${1:-}" = build ]; then
      mkdir -p .cache && bundle_key > "$checked"
    fi
    exec bundle exec jekyll "$@"
  fi
fi
if command -v jekyll >/dev/null 2>&1; then
  exec jekyll "$@"
fi
echo "error: jekyll not found (run \`make jekyll-deps\`)" >&2
exit 1
