"""Checks of a loaded YAML document that name the line of each problem: a loader that keeps
dates as strings, key paths -> line numbers, the list of problems, and one checker per kind of
value (string, number, id, path inside the run, date, list, map of scalars)."""
from __future__ import annotations

import datetime as _dt
import os
import re
import reprlib
from pathlib import Path

import yaml

ID_RE = re.compile(r"^[a-z0-9_-]+$")
DATE_RE = re.compile(r"^\d{4}-\d{2}-\d{2}$")

# Values quoted in problem messages are shortened: a YAML alias bomb (`&a [*b, *b, ...]`) is
# cheap to load (shared references) but its full repr would be exponentially long.
SHORT = reprlib.Repr()
SHORT.maxstring = SHORT.maxother = 80
SHORT.maxlong = 40
SHORT.maxlevel = 2
show = SHORT.repr


class Loader(yaml.SafeLoader):
    """The safe loader, but dates stay strings: we check them ourselves, so a bad date such as
    2026-13-01 is one problem in the list instead of an exception from the YAML library."""


Loader.yaml_implicit_resolvers = {
    first: [(tag, regexp) for tag, regexp in resolvers if tag != "tag:yaml.org,2002:timestamp"]
    for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()}


# --- loading --------------------------------------------------------------------------------
#
# PyYAML's pure-Python parser took 20 ms of a run's ~0.9 s build for a 300-line run.yml; libyaml's
# takes 2 ms. Its composer is recursive C, though: a document nested ~100,000 deep (`[[[[...`)
# overflows the C stack and kills the process, where the Python parser raises RecursionError.
# So libyaml only composes documents it has first parsed (its parser is a loop, not a
# recursion) to no more than C_DEPTH levels; anything deeper, and anything libyaml refuses,
# goes through the Python loader as before: same values, same errors, same messages. So does
# text with a tab: libyaml reads some tabs as blanks where the Python parser refuses them
# (tests/test_yaml_load.py found `title: <tab>`).
C_DEPTH = 100
_C_BASE = getattr(yaml, "CSafeLoader", None)


def _c_twin(loader: type) -> type | None:
    """libyaml's safe loader with `loader`'s implicit resolvers (its constructors: SafeLoader's)."""
    if _C_BASE is None:
        return None
    twin = type("C" + loader.__name__, (_C_BASE,), {})
    twin.yaml_implicit_resolvers = loader.yaml_implicit_resolvers
    return twin


_C_TWINS = {Loader: _c_twin(Loader), yaml.SafeLoader: _C_BASE}


def _nests_deeper(text: str, limit: int) -> bool:
    depth = 0
    for event in yaml.parse(text, Loader=_C_BASE):
        if isinstance(event, yaml.CollectionStartEvent):
            depth += 1
            if depth > limit:
                return True
        elif isinstance(event, yaml.CollectionEndEvent):
            depth -= 1
    return False


def load_yaml(text: str, loader: type = Loader):
    """`yaml.load(text, Loader=loader)` (Loader, or yaml.SafeLoader), through libyaml where that
    gives the same result (see C_DEPTH)."""
    twin = _C_TWINS.get(loader)
    if twin is not None and "\t" not in text:
        try:
            if not _nests_deeper(text, C_DEPTH):
                return yaml.load(text, Loader=twin)  # noqa: S506 - a SafeLoader
        except (yaml.YAMLError, ValueError):
            pass    # the Python loader raises it again, in the words callers expect
    return yaml.load(text, Loader=loader)  # noqa: S506 - a SafeLoader


# --- line numbers ---------------------------------------------------------------------------

def line_index(text: str) -> dict[tuple, int]:
    """Map key paths ('systems', 0, 'id') to 1-based line numbers, so problems name a line."""
    index: dict[tuple, int] = {}
    try:
        root = yaml.compose(text, Loader=Loader)
    except (yaml.YAMLError, RecursionError):
        return index

    seen: set[int] = set()

    def walk(node, path):
        # an alias repeats a node: visit each node once (alias bombs, recursive aliases)
        if id(node) in seen:
            return
        seen.add(id(node))
        index.setdefault(path, node.start_mark.line + 1)
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                key = k.value if isinstance(k, yaml.ScalarNode) else None
                index[path + (key,)] = k.start_mark.line + 1
                index[path + (key, "__value__")] = v.start_mark.line + 1
                walk(v, path + (key,))
        elif isinstance(node, yaml.SequenceNode):
            for i, v in enumerate(node.value):
                walk(v, path + (i,))

    if root is not None:
        walk(root, ())
    return index


class Problems:
    """The problems found in a document, each placed on its line. `lines` is line_index's map,
    or the document's text: indexing it is a second parse, as costly as loading the document,
    so it is done when the first problem is added (a valid document never needs it)."""

    def __init__(self, lines: dict[tuple, int] | str):
        self._lines = lines
        self.items: list[tuple[int, str]] = []

    @property
    def lines(self) -> dict[tuple, int]:
        if isinstance(self._lines, str):
            self._lines = line_index(self._lines)
        return self._lines

    def add(self, path: tuple, message: str) -> None:
        line = None
        p = path
        while line is None and p:
            line = self.lines.get(p)
            p = p[:-1]
        name = path_name(path)
        text = f"{name}: {message}" if name else message
        self.items.append((line or 0, f"line {line}: {text}" if line else text))

    def messages(self) -> list[str]:
        return [m for _, m in sorted(self.items, key=lambda item: item[0])]


def path_name(path: tuple) -> str:
    out = ""
    for part in path:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            # a key is quoted when odd (newline, huge): one error line, of bounded length
            plain = isinstance(part, str) and part.isprintable() and len(part) <= 80
            out += ("." if out else "") + (part if plain else show(part))
    return out


# --- checks ---------------------------------------------------------------------------------

def unknown_keys(data: dict, allowed: set, path: tuple, problems: Problems) -> None:
    for key in data:
        if key not in allowed:
            problems.add(path + (key,), f"unknown key (allowed: {', '.join(sorted(allowed))})")


def is_number(v) -> bool:
    return isinstance(v, (int, float)) and not isinstance(v, bool) and v == v \
        and v not in (float("inf"), float("-inf")) and (isinstance(v, float) or abs(v) < 2**63)


def string_at(data, key, path, problems, *, required=False) -> str | None:
    if key not in data or data[key] is None:
        if required:
            problems.add(path + (key,), "required")
        return None
    value = data[key]
    if not isinstance(value, str) or not value.strip():
        problems.add(path + (key,), "must be a non-empty string")
        return None
    return value


def number_at(data, key, path, problems, *, required=False, positive=True, integer=False):
    if key not in data or data[key] is None:
        if required:
            problems.add(path + (key,), "required")
        return None
    value = data[key]
    kind = "an integer" if integer else "a number"
    if not is_number(value) or (integer and not isinstance(value, int)):
        problems.add(path + (key,), f"must be {kind}, not {show(value)}")
        return None
    if positive and value <= 0:
        problems.add(path + (key,), f"must be {kind} > 0, not {show(value)}")
        return None
    if not positive and value < 0:
        problems.add(path + (key,), f"must be {kind} >= 0, not {show(value)}")
        return None
    return value


def ident_at(data, key, path, problems) -> str | None:
    value = string_at(data, key, path, problems, required=True)
    if value is not None and not ID_RE.match(value):
        problems.add(path + (key,), f"{show(value)} must use only a-z, 0-9, '-' and '_'")
        return None
    return value


def check_relpath(run_dir: Path, relpath: str) -> str | None:
    """Why `relpath` may not be used inside `run_dir`, or None when it is fine."""
    if not relpath or "\0" in relpath:
        return "must be a non-empty path"
    if os.path.isabs(relpath) or relpath.startswith(("/", "\\")) or re.match(r"^[A-Za-z]:", relpath):
        return f"{show(relpath)} is absolute; give a path relative to the run folder"
    parts = re.split(r"[\\/]", relpath)
    if ".." in parts:
        return f"{show(relpath)} leaves the run folder ('..' is not allowed)"
    # Relative, without '..': only a symbolic link on the way can lead outside. Looking for
    # one costs a stat per part of `relpath`; resolving costs one per part of the whole
    # absolute path, twice (a manifest names ~100 files: 13 ms of a run's build).
    if not _link_on_the_way(run_dir, relpath):
        return None
    root = run_dir.resolve()
    target = (run_dir / relpath).resolve()
    if target != root and root not in target.parents:
        return f"{show(relpath)} resolves outside the run folder (a symlink?)"
    return None


def _link_on_the_way(run_dir: Path, relpath: str) -> bool:
    # the parts as this system names files (a backslash is part of a name on POSIX)
    here = str(run_dir)
    for part in Path(relpath).parts:
        here = os.path.join(here, part)
        if os.path.islink(here):
            return True
    return False


def relpath_at(data, key, path, problems, run_dir: Path) -> str | None:
    value = string_at(data, key, path, problems)
    if value is None:
        return None
    why = check_relpath(run_dir, value)
    if why:
        problems.add(path + (key,), why)
        return None
    return value


def relpaths_at(data, key, path, problems, run_dir: Path) -> tuple[str, ...] | None:
    """A path, or a list of paths (issue 33: one file per load generator of a cell), as a tuple;
    None when absent or unusable. A list must be non-empty, of strings only, each file once."""
    value = data.get(key)
    if not isinstance(value, list):
        one = relpath_at(data, key, path, problems, run_dir)
        return None if one is None else (one,)
    if not value:
        problems.add(path + (key,), "an empty list: give one file per load generator, or one "
                     "file as a string")
        return None
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, str):
            problems.add(path + (key, i), f"must be a path (a string), not {show(item)}: "
                         "a list holds one file per load generator")
            return None
        why = check_relpath(run_dir, item)
        if why:
            problems.add(path + (key, i), why)
            return None
        if item in out:
            problems.add(path + (key, i), f"{show(item)} is given twice (item {out.index(item) + 1}"
                         f" and {i + 1}): each generator's file once")
            return None
        out.append(item)
    return tuple(out)


def scalar_map_at(data, key, labels: dict, path, problems) -> dict:
    block = data.get(key)
    if block is None:
        return {}
    if not isinstance(block, dict):
        problems.add(path + (key,), "must be a mapping")
        return {}
    unknown_keys(block, set(labels), path + (key,), problems)
    out = {}
    for k, v in block.items():
        if k not in labels or v is None:
            continue
        if isinstance(v, (dict, list)):
            problems.add(path + (key, k), "must be a single value")
            continue
        if isinstance(v, (_dt.date, _dt.datetime)):
            v = v.isoformat()
        out[k] = v
    return out


def date_at(data, problems) -> str | None:
    if "date" not in data or data["date"] is None:
        problems.add(("date",), "required (YYYY-MM-DD)")
        return None
    value = data["date"]
    if isinstance(value, _dt.datetime):
        value = value.date()
    if isinstance(value, _dt.date):
        return value.isoformat()
    if isinstance(value, str) and DATE_RE.match(value):
        try:
            return _dt.date.fromisoformat(value).isoformat()
        except ValueError:
            pass
    problems.add(("date",), f"must be a date YYYY-MM-DD, not {show(value)}")
    return None


def list_at(data, key, path, problems, *, required=False) -> list:
    value = data.get(key)
    if value is None:
        if required:
            problems.add(path + (key,), "required (a list with at least one entry)")
        return []
    if not isinstance(value, list) or (required and not value):
        problems.add(path + (key,), "must be a list" + (" with at least one entry" if required else ""))
        return []
    return value


def header_at(data, problems) -> tuple[str | None, str | None, str | None, list[str]]:
    """A run's title, date, description (all required) and tags, of any kind of run.yml."""
    title = string_at(data, "title", (), problems, required=True)
    date = date_at(data, problems)
    description = string_at(data, "description", (), problems, required=True)
    tags = []
    for i, tag in enumerate(list_at(data, "tags", (), problems)):
        if not isinstance(tag, str) or not tag.strip():
            problems.add(("tags", i), "must be a non-empty string")
        else:
            tags.append(tag)
    return title, date, description, tags
