#!/usr/bin/env bash
# `make site`'s Jekyll step: `jekyll build` with the site's address for this one build.
#   LOADCURVE_URL=https://you.example.org (or `make site URL=...`): written to .cache/url.yml and
#   layered over _config.yml, which stays as it is. A path sets `baseurl` as well
#   (https://you.github.io/loadcurve -> url https://you.github.io, baseurl /loadcurve). Without it, _config.yml's `url` is used, and
#   a loud warning is printed while that is still the placeholder: entry ids and canonical links
#   derive from it, and changing it after readers subscribe makes every old post reappear as new.
# `build-site.sh serve --host 127.0.0.1` (make serve): the same site, then `jekyll serve` (which
#   sets a local url itself); runs/ and the charts are mirrored once, at the start. It builds
#   into .cache/preview/, with configuration files of its own (.cache/preview-config/), never
#   into _site/: a `make site` beside it would otherwise take the charts away from the preview
#   while its Jekyll runs, and two Jekylls would write one folder (issue 22).
set -euo pipefail
cd "$(dirname "$0")/.."
PLACEHOLDER="https://loadcurve.example.org"
configs="_config.yml"
jekyll_command=build
dest=_site
conf=.cache/site   # the prefix of the configuration files this build writes
url_conf=.cache/url.yml
also_exclude=""
if [ "${1:-}" = serve ]; then
  jekyll_command=serve
  dest=.cache/preview
  conf=.cache/preview-config/site
  url_conf=.cache/preview-config/url.yml
  also_exclude=_site   # (else each `make site` beside it sets its watch regenerating)
  mkdir -p .cache/preview-config
  shift
fi
url="${LOADCURVE_URL:-}"
if [ -n "$url" ]; then
  if ! [[ "$url" =~ ^https?://[A-Za-z0-9.-]+(:[0-9]+)?(/[A-Za-z0-9._~/-]*)?$ ]] || [[ "$url" == */ ]]; then
    echo "error: URL must look like https://host or https://host/path, without a trailing slash: $url" >&2
    exit 1
  fi
  origin="$(printf '%s' "$url" | sed -E 's|^(https?://[^/]+).*|\1|')"
  mkdir -p .cache
  printf '# Written by scripts/build-site.sh for one build (make site URL=...).\nurl: "%s"\nbaseurl: "%s"\n' \
    "$origin" "${url#"$origin"}" > "$url_conf"
  configs="$configs,$url_conf"
elif [ "$jekyll_command" = build ] && grep -Eq "^url: *\"?$PLACEHOLDER\"?\s*$" _config.yml; then
  {
    echo "**************************************************************************************"
    echo "WARNING: url in _config.yml is the placeholder $PLACEHOLDER."
    echo "  Feed entry ids and canonical links are built from it; publishing with it, then"
    echo "  changing it, shows every old post to subscribers as new. Set url: in _config.yml,"
    echo "  or for one build: make site URL=https://your.host (or LOADCURVE_URL=...)."
    echo "**************************************************************************************"
  } >&2
fi
args=("$@")
given_dest=0
for ((i = 0; i < ${#args[@]}; i++)); do
  case "${args[i]}" in
    -d|--destination) dest="${args[i+1]:-_site}"; given_dest=1 ;;
    --destination=*) dest="${args[i]#--destination=}"; given_dest=1 ;;
  esac
done
if [ "$jekyll_command" = serve ]; then
  # jekyll serve hands its web server the destination as given, and Jekyll's reader changes the
  # process's directory (Dir.chdir) while it regenerates: a relative root then resolved inside
  # the source folders, and the preview answered 404 for files it had, now and then.
  case "$dest" in /*) ;; *) dest="$PWD/$dest" ;; esac
  if [ "$given_dest" = 0 ]; then
    set -- "$@" --destination "$dest"
  else
    for ((i = 0; i < ${#args[@]}; i++)); do
      case "${args[i]}" in
        -d|--destination) args[i+1]="$dest" ;;
        --destination=*) args[i]="--destination=$dest" ;;
      esac
    done
    set -- "${args[@]}"
  fi
fi
# A destination that cannot be written (a read-only file system; root ignores mode bits) is
# refused before anything moves: Jekyll and the mirror would fail half-way, file by file.
probe="$dest/.build-site-probe"
if [ -d "$dest" ] && ! { : > "$probe"; } 2>/dev/null; then
  echo "error: $dest: cannot write there (a read-only file system?); the site in it is left as it was: make it writable, or give another folder with --destination, then build again" >&2
  exit 1
fi
rm -f -- "$probe"
# The big static trees: the raw run files (published so every table cell links its data), the
# charts and the CSVs. Jekyll would copy every file of them on every build (gigabytes at 1,000
# runs); scripts/mirror_static.py publishes the same files into $dest itself, as hard links, only
# what changed, and Jekyll skips them (exclude) and leaves them alone (keep_files).
# LOADCURVE_MIRROR=0: Jekyll copies them, as GitHub Pages does with _config.yml alone.
MIRRORED=(runs assets/charts assets/data)
mkdir -p .cache
# Symbolic links in them are kept out of the site: Jekyll copies a link as a link, or (safe
# mode, JEKYLL_ENV=production) copies what it points at, which may lie outside the run. The
# analysis fails such a run with an error naming the link; here each is excluded from the build.
links=$(find "${MIRRORED[@]}" -type l 2>/dev/null | sort || true)
while IFS= read -r link; do
  [ -n "$link" ] && echo "warning: $link is a symbolic link: not published" >&2
done <<< "$links"
# _config.yml's exclude + those links (a layered config replaces the list: it is repeated), and
# the include/keep_files it sets, for the mirror. JSON: a YAML file Python reads without PyYAML.
base_from_config='c = YAML.load_file("_config.yml") || {}
  base = {"exclude" => (c["exclude"] || []) + STDIN.read.split("\n").reject(&:empty?)}
  %w[include keep_files collections_dir].each { |k| base[k] = c[k] if c.key?(k) }
  # (for site_stamp.py --partial, which layers its own over them: only when JSON keeps them as
  # they are, e.g. no dates)
  d = c["defaults"] || []
  base["defaults"] = JSON.parse(JSON.generate(d)) == d ? d : "not portable"
  puts "# Written by scripts/build-site.sh: _config.yml exclude + the symbolic links (JSON is YAML)"
  puts JSON.pretty_generate(base)'
# Written again only when what it is made of changed (a Ruby start, 0.1 CPU s a build): the
# digest of _config.yml, the links, the extra excludes and this program sits beside it
base_key=$( { printf '%s\n%s\n' "$links" "$also_exclude"; cat _config.yml; printf '%s' "$base_from_config"; } \
  | sha256sum | cut -d' ' -f1)
if [ ! -f "$conf-base.yml" ] || [ "$(cat "$conf-base.key" 2>/dev/null)" != "$base_key" ]; then
  rm -f "$conf-base.key"
  printf '%s\n%s\n' "$links" "$also_exclude" | ruby -ryaml -rjson -e "$base_from_config" > "$conf-base.yml"
  printf '%s\n' "$base_key" > "$conf-base.key"
fi
py="${PY:-python3}"
# The mirrored trees a build holds outside $dest while Jekyll runs (below)
HOLD=.cache/site-held
held_back() {
  local tree
  for tree in "${MIRRORED[@]}"; do
    if [ -e "$HOLD/$tree" ]; then
      if [ -e "$dest/$tree" ]; then
        rm -rf -- "${HOLD:?}/$tree"   # hard links of a tree the mirror has published again
      else
        mkdir -p "$(dirname "$dest/$tree")" && mv -- "$HOLD/$tree" "$dest/$tree"
      fi
    fi
  done
  rm -rf -- "$HOLD"
}
if [ "$jekyll_command" = build ]; then
  held_back   # trees an interrupted build left held (a serve leaves them: they are a build's)
fi
mirrored=0
if [ "${LOADCURVE_MIRROR:-1}" != 0 ] && command -v "$py" >/dev/null 2>&1; then
  "$py" scripts/mirror_static.py --config "$conf-base.yml" --dest "$dest" \
    --overlay "$conf-mirror.yml" "${MIRRORED[@]}"
  configs="$configs,$conf-mirror.yml"
  mirrored=1
else
  configs="$configs,$conf-base.yml"
fi
held=$(IFS=,; echo "${MIRRORED[*]}")
incremental=()
if [ "$jekyll_command" = build ] && [ "$mirrored" = 1 ] && [ "${LOADCURVE_SKIP_JEKYLL:-1}" != 0 ]; then
  # Nothing Jekyll reads changed since its last build, and $dest is as it left it: skip it
  # (scripts/site_stamp.py says what is compared). Else (exit 3) an incremental build that
  # renders only what changed: the generated report pages whose file and whose layout's inputs
  # are as the last build left them are read, not rendered again (site_stamp.py says how).
  # LOADCURVE_SKIP_JEKYLL=0 always builds, everything.
  verdict=0
  bash scripts/jekyll.sh --settle   # Gemfile.lock as this build's Jekyll will find it
  "$py" scripts/site_stamp.py check --dest "$dest" --filter "$conf-mirror.yml" \
      --configs "$configs" --held "$held" --partial "$conf-partial.yml" --base "$conf-base.yml" \
      -- "$@" || verdict=$?
  if [ "$verdict" = 0 ]; then
    echo "Jekyll: nothing it reads changed since its last build of $dest; skipped"
    exit 0
  elif [ "$verdict" = 3 ]; then
    configs="$configs,$conf-partial.yml"
    incremental=(--incremental)
  fi
elif [ "$jekyll_command" = build ] || [ "$dest" = _site ] || [ "$dest" = "$PWD/_site" ]; then
  rm -f .cache/jekyll-stamp.json   # a build this script cannot vouch for, or a serve of _site
fi
# Jekyll's cleaner lists every file under $dest, the ~150,000 mirrored ones too (1.2 s of a
# 5 s build at 1,000 runs), before keep_files spares them: a build moves the mirrored trees out
# of $dest while Jekyll runs (a rename, when .cache is on the same file system) and back after.
# Not for serve, which keeps running: the site would lack them meanwhile.
if [ "$jekyll_command" = build ] && [ "$mirrored" = 1 ] && mkdir -p "$HOLD" \
    && [ "$(stat -c %d "$dest" 2>/dev/null)" = "$(stat -c %d "$HOLD" 2>/dev/null)" ]; then
  trap held_back EXIT
  for tree in "${MIRRORED[@]}"; do
    if [ -d "$dest/$tree" ]; then
      mkdir -p "$(dirname "$HOLD/$tree")" && mv -- "$dest/$tree" "$HOLD/$tree"
    fi
  done
fi
bash scripts/jekyll.sh "$jekyll_command" --config "$configs" ${incremental[@]+"${incremental[@]}"} "$@"
# Publish regular files only: Jekyll copies a symbolic link under runs/ as a link, and a deploy
# that follows links would publish its target. The analysis refuses such runs (their error says
# so); a link that reached _site anyway is removed here, and the build fails. (The held trees
# are the mirror's: regular files only.)
links=$(find "$dest" -type l 2>/dev/null || true)
held_back
trap - EXIT
if [ -n "$links" ]; then
  while IFS= read -r link; do
    echo "error: $link: a symbolic link (from ${link#"$dest"/}); removed: the site publishes regular files only" >&2
    rm -f -- "$link"
  done <<< "$links"
  exit 1
fi
if [ "$jekyll_command" = build ] && [ "$mirrored" = 1 ]; then
  "$py" scripts/site_stamp.py record --dest "$dest" --held "$held"
fi
