"""The installed versions of the libraries that shape the outputs (cache.code_version), as
importlib.metadata.version gives them, without importing importlib.metadata: its import
(email, zipfile, csv, ...) was ~0.08 s of every build's state phase, an added run's included.

importlib.metadata looks through sys.path in order and takes the first `<name>-*.dist-info`
folder whose name normalizes to the library's, then the `Version:` header of its METADATA. This
does the same for the plain case, and hands to importlib.metadata whatever it could see
otherwise: another distribution finder, a zip or .egg on sys.path, an .egg-info, two candidate
folders in one directory (their order is the listing's), a METADATA that is not a short header
block of one-line fields. Nothing is cached: a METADATA edited in place is read as it is now."""
from __future__ import annotations

import os
import re
import sys

# importlib.metadata.Prepared.normalize: PEP 503, dashes as underscores
_SEPARATORS = re.compile(r"[-_.]+")
# a header line as email's parser (compat32) reads one: its name, a colon, its value
_HEADER = re.compile(r"([\x21-\x39\x3b-\x7e]+):[ \t]*(.*)")
_VERSION = re.compile(r"[A-Za-z0-9.+!_-]+")


def normalize(name: str) -> str:
    return _SEPARATORS.sub("-", name).lower().replace("-", "_")


def versions(names: tuple[str, ...]) -> list[str]:
    """`name=version` of each name, in order, as the loop `version(name)` over them gives; the
    loop stopped at the first library importlib.metadata could not find (code_version hashed
    the ones before it), and so does this."""
    found = _from_folders(names)
    if found is not None:
        return [f"{name}={found[name]}" for name in names]
    from importlib.metadata import version
    out = []
    try:
        for name in names:
            out.append(f"{name}={version(name)}")
    except Exception:  # noqa: BLE001 - metadata missing: the versions before it still count
        pass
    return out


def _from_folders(names: tuple[str, ...]) -> dict[str, str] | None:
    """Each name's version, read from its dist-info folder; None when any is not plain."""
    from importlib.machinery import PathFinder
    finders = [f for f in sys.meta_path if getattr(f, "find_distributions", None) is not None]
    if finders != [PathFinder]:
        return None
    wanted = {normalize(name): name for name in names}
    if len(wanted) != len(names):
        return None
    folders: dict[str, str] = {}
    for entry in sys.path:
        root = entry or "."
        if os.path.basename(root).lower().endswith(".egg"):
            return None
        try:
            children = os.listdir(root)
        except OSError:
            if os.path.exists(root):   # a zip file: importlib.metadata reads its listing
                return None
            continue
        here: dict[str, list[str]] = {}
        for child in children:
            low = child.lower()
            if low.endswith((".dist-info", ".egg-info")):
                key = normalize(low.rpartition(".")[0].partition("-")[0])
                if key in wanted and key not in folders:
                    here.setdefault(key, []).append(child)
        for key, found in here.items():
            if len(found) != 1 or not found[0].lower().endswith(".dist-info"):
                return None
            folders[key] = os.path.join(root, found[0])
        if len(folders) == len(wanted):
            break
    else:
        return None
    out = {}
    for key, folder in folders.items():
        version = _metadata_version(os.path.join(folder, "METADATA"))
        if version is None:
            return None
        out[wanted[key]] = version
    return out


def _metadata_version(path: str) -> str | None:
    """The first Version header of a METADATA's header block, when every line before it is a
    one-line header and the value a plain version; else None."""
    try:
        with open(path, encoding="utf-8") as f:
            for line in f:
                line = line.rstrip("\r\n")
                match = _HEADER.fullmatch(line)
                if match is None:
                    return None
                if match.group(1).lower() == "version":
                    value = match.group(2)
                    following = next(f, "")
                    if following[:1] in (" ", "\t") or not _VERSION.fullmatch(value):
                        return None
                    return value
    except (OSError, UnicodeDecodeError):
        return None
    return None
