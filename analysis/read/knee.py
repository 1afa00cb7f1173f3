"""A run's knee.json: bench/run.sh --find-knee's search, probe by probe (issue 32).

bench/knee.py writes it into the run folder (the probes' own .hlog and .counts.json go under
knee/<system>/); run.yml's method.knee_search keeps each probe's rate, verdict, why and host
check, this file also its figures: the warm-up and window it had, its window's sent, completed,
timed-out, errors and not-sent requests, and the p99 of the answered ones (null: none answered).
Searches recorded before the figures were kept have none: they read as None.

    {"rule": "...", "systems": {"<system>": {"probes": [{"rate": 10, "verdict": "good",
      "why": "...", "warmup_s": 1, "window_s": 2, "sent": 20, ..., "p99_ms": 196.5,
      "host_check": {...}}, ...], "knee": 70, "first_saturated": 80, "rates": [18, ...],
      "stopped": "..."}}}
"""
from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from analysis.errors import LoadcurveError

VERDICTS = ("good", "saturated")
COUNT_KEYS = ("sent", "completed", "timed_out", "errors", "not_sent")


class KneeError(LoadcurveError):
    """A knee.json that cannot be read, or does not hold a knee search."""


@dataclass(frozen=True)
class KneeProbe:
    rate: float
    verdict: str                            # good | saturated
    why: str
    warmup_s: float | None = None           # None: recorded before the figures were kept
    window_s: float | None = None
    sent: int | None = None
    completed: int | None = None
    timed_out: int | None = None
    errors: int | None = None
    not_sent: int | None = None
    p99_ms: float | None = None             # of the answered ones; None: none answered
    host_check: dict[str, Any] | None = None


@dataclass(frozen=True)
class KneeSystem:
    system: str
    probes: tuple[KneeProbe, ...]
    knee: float | None
    first_saturated: float | None
    rates: tuple[float, ...]
    stopped: str | None


@dataclass(frozen=True)
class KneeSearch:
    rule: str
    systems: tuple[KneeSystem, ...]


def read_knee(path: Path, shown: str) -> KneeSearch:
    """knee.json at PATH; errors name it as SHOWN (repo-relative)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as e:
        raise KneeError(f"not JSON: {e.msg}", path=shown, line=e.lineno) from None
    except UnicodeDecodeError:
        raise KneeError("not UTF-8 text", path=shown) from None
    where = _Where(shown)
    if not isinstance(data, dict):
        where.fail("", "must be a JSON object with rule and systems")
    rule = data.get("rule")
    if not isinstance(rule, str) or not rule:
        where.fail("rule", "must be a non-empty string")
    systems = data.get("systems")
    if not isinstance(systems, dict):
        where.fail("systems", "must be an object, one entry per system")
    return KneeSearch(rule=rule, systems=tuple(_system(sid, entry, where)
                                               for sid, entry in systems.items()))


class _Where:
    def __init__(self, shown: str):
        self.shown = shown

    def fail(self, key: str, message: str):
        raise KneeError(f"{key + ': ' if key else ''}{message}", path=self.shown,
                        hint="bench/knee.py writes this file; rerun bench/run.sh --find-knee "
                             "after deleting it")


def _system(sid: str, entry: Any, where: _Where) -> KneeSystem:
    at = f"systems.{sid}"
    if not isinstance(entry, dict):
        where.fail(at, "must be an object with probes")
    probes = entry.get("probes")
    if not isinstance(probes, list):
        where.fail(f"{at}.probes", "must be a list")
    rates = entry.get("rates") or []
    if not isinstance(rates, list) or not all(_is_number(r) for r in rates):
        where.fail(f"{at}.rates", "must be a list of numbers")
    stopped = entry.get("stopped")
    if stopped is not None and not isinstance(stopped, str):
        where.fail(f"{at}.stopped", "must be a string")
    return KneeSystem(
        system=sid,
        probes=tuple(_probe(p, f"{at}.probes[{i}]", where) for i, p in enumerate(probes)),
        knee=_number(entry, "knee", at, where), stopped=stopped,
        first_saturated=_number(entry, "first_saturated", at, where), rates=tuple(rates))


def _probe(probe: Any, at: str, where: _Where) -> KneeProbe:
    if not isinstance(probe, dict):
        where.fail(at, "must be an object with rate, verdict, why")
    rate = _number(probe, "rate", at, where)
    if rate is None:
        where.fail(f"{at}.rate", "required")
    if probe.get("verdict") not in VERDICTS:
        where.fail(f"{at}.verdict", f"must be good or saturated, not {probe.get('verdict')!r}")
    if not isinstance(probe.get("why"), str):
        where.fail(f"{at}.why", "must be a string")
    host = probe.get("host_check")
    if host is not None and not isinstance(host, dict):
        where.fail(f"{at}.host_check", "must be an object")
    counts = {}
    for key in COUNT_KEYS:
        value = probe.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < 0):
            where.fail(f"{at}.{key}", f"must be a whole number >= 0, not {value!r}")
        counts[key] = value
    return KneeProbe(rate=rate, verdict=probe["verdict"], why=probe["why"],
                     warmup_s=_number(probe, "warmup_s", at, where),
                     window_s=_number(probe, "window_s", at, where),
                     p99_ms=_number(probe, "p99_ms", at, where), host_check=host, **counts)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and value >= 0


def _number(block: dict, key: str, at: str, where: _Where) -> float | None:
    value = block.get(key)
    if value is not None and not _is_number(value):
        where.fail(f"{at}.{key}", f"must be a number >= 0, not {value!r}")
    return value
