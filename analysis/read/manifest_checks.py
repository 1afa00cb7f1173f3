"""Check a run.yml of a load test (`kind: load`, the default) against its schema
(analysis/read/manifest.py) and make its Manifest: every problem found at once, each with the
line of run.yml it is on. Unknown keys are errors (a typo must not be silently ignored); paths
must stay inside the run folder.
"""
from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from analysis.errors import ManifestError
from analysis.read.counts import WARMUP_MODES
from analysis.read.manifest import (CELL_KEYS, CO_CORRECTION_KEYS, DEFAULT_CPU_ACCOUNTING,
                                    HOST_CHECK_KEYS, JFR_ATTRIBUTION_KEYS, KNEE_PROBE_KEYS,
                                    KNEE_SEARCH_KEYS, KNEE_SYSTEM_KEYS, LOAD_KEYS, METHOD_KEYS,
                                    PROBE_HOST_CHECK_KEYS, RESULT_OPTION_KEYS, SCENARIO_KEYS,
                                    SCHEMA_VERSIONS, SETTLE_KEYS, SETTLE_SYSTEM_KEYS,
                                    SYSTEM_KEYS, TOP_KEYS, UNITS_PER_MS, WARMUP_CELL_KEYS,
                                    WARMUP_CELL_RE, WARMUP_KEYS, WINDOW_KEYS, CellSpec,
                                    LoadPointSpec, Manifest, Method, ScenarioSpec, SystemSpec,
                                    cell_folder)
from analysis.read.checks import (Problems, check_relpath, ident_at, header_at, list_at,
                                  number_at, relpath_at, relpaths_at, scalar_map_at, show,
                                  string_at, unknown_keys)
from analysis.vocabulary import ENVIRONMENT_LABELS, LOAD_GENERATOR_LABELS


def check_manifest(data: dict, text: str, run_dir: Path, path: Path) -> Manifest:
    """The Manifest of a load test's run.yml, parsed (`data`) from `text` at `path`; raises one
    ManifestError listing every problem."""
    run_id = run_dir.name
    problems = Problems(text)
    # (`kind: load` may be said; it is the default, not one of the keys listed in errors)
    unknown_keys({k: v for k, v in data.items() if k != "kind"}, TOP_KEYS, (), problems)

    schema_version = data.get("schema_version", 1)
    if schema_version not in SCHEMA_VERSIONS or isinstance(schema_version, bool):
        problems.add(("schema_version",), f"unknown version {show(schema_version)}; this "
                     f"loadcurve reads "
                     f"{', '.join(map(str, SCHEMA_VERSIONS))} (update loadcurve?)")

    title, date, description, tags = header_at(data, problems)

    value_unit = data.get("value_unit")
    if value_unit is None:
        pass        # required unless every cell is a load tool's file (checked with the cells)
    elif not isinstance(value_unit, str) or value_unit not in UNITS_PER_MS:
        problems.add(("value_unit",), f"must be ns, us or ms, not {show(value_unit)}")
        value_unit = None
    service_time_ms = number_at(data, "service_time_ms", (), problems)
    series = ident_at(data, "series", (), problems) if "series" in data else None
    version = _version_at(data, problems)

    systems: list[SystemSpec] = []
    declared_systems: list[str] = []   # valid ids, even of entries with other problems
    for p, entry in _mappings(data, "systems", SYSTEM_KEYS, "id and label", problems,
                              required=True):
        sid = ident_at(entry, "id", p, problems)
        label = string_at(entry, "label", p, problems, required=True)
        limit = number_at(entry, "concurrency_limit", p, problems, integer=True)
        desc = string_at(entry, "description", p, problems)
        family = string_at(entry, "family", p, problems)
        model = string_at(entry, "model", p, problems)
        if sid:
            declared_systems.append(sid)
        if sid and any(s.id == sid for s in systems):
            problems.add(p + ("id",), f"duplicate system id {show(sid)}")
        elif sid and label:
            systems.append(SystemSpec(sid, label, limit, desc, family, model))

    load_points: list[LoadPointSpec] = []
    declared_loads: list[str] = []
    kinds: list[tuple[tuple, str]] = []     # (path, offered_rate | connections | users)
    for p, entry in _mappings(data, "load_points", LOAD_KEYS,
                              "id, offered_rate (or connections) and duration_s", problems,
                              required=True):
        lid = ident_at(entry, "id", p, problems)
        connections = _connections_at(entry, p, problems)
        offered = number_at(entry, "offered_rate", p, problems,
                            required=connections is None)
        # a closed loop's files state how long they ran (wrk's "in 30.08s"): the build takes
        # it from them when run.yml gives none (derive/imported.py, duration_from_files)
        duration = number_at(entry, "duration_s", p, problems, required=connections is None)
        clients = number_at(entry, "clients", p, problems, integer=True)
        if lid:
            declared_loads.append(lid)
        if lid and any(lp.id == lid for lp in load_points):
            problems.add(p + ("id",), f"duplicate load point id {show(lid)}")
        elif lid and (offered is not None or connections is not None) and \
                (duration is not None or connections is not None):
            load_points.append(LoadPointSpec(lid, offered, duration, clients, connections,
                                         _closed_key(entry) if connections is not None else None))
            kinds.append((p, load_points[-1].connections_key or "offered_rate"))
    _one_load_model(kinds, problems)

    environment = scalar_map_at(data, "environment", ENVIRONMENT_LABELS, (), problems)
    load_generator = scalar_map_at(data, "load_generator", LOAD_GENERATOR_LABELS, (), problems)
    if "model" in load_generator and load_generator["model"] not in ("open", "closed"):
        problems.add(("load_generator", "model"), f"must be open or closed, not "
                     f"{show(load_generator['model'])}")
    for key in ("timeout_s", "warmup_s", "connections"):
        if key in load_generator:
            number_at(load_generator, key, ("load_generator",), problems, positive=False)
    if "drain" in load_generator and not isinstance(load_generator["drain"], bool):
        problems.add(("load_generator", "drain"), "must be true or false")
    method = _method(data, problems)

    attribution = []
    for i, entry in enumerate(list_at(data, "jfr_attribution", (), problems)):
        p = ("jfr_attribution", i)
        if not isinstance(entry, dict):
            problems.add(p, "must be a mapping {pattern, label}")
            continue
        unknown_keys(entry, JFR_ATTRIBUTION_KEYS, p, problems)
        pattern = string_at(entry, "pattern", p, problems, required=True)
        label = string_at(entry, "label", p, problems, required=True)
        if pattern is not None:
            try:
                re.compile(pattern)
            except re.error as exc:
                problems.add(p + ("pattern",), f"not a valid regular expression: {exc}")
                pattern = None
        if pattern is not None and label is not None:
            attribution.append({"pattern": pattern, "label": label})

    cpu_accounting = _cpu_accounting(data, attribution, problems)
    scenarios = _scenarios(data, declared_loads, service_time_ms, problems)
    defaults = (_window_at(data, (), problems), _co_interval_at(data, (), problems))
    cells = _cells(data, run_dir, systems, load_points, problems,
                   declared_systems, declared_loads, scenarios, defaults)
    for i, cell in enumerate(cells):
        if not cell.results and any(lp.id == cell.load and lp.duration_s is None
                                    for lp in load_points):
            problems.add(("load_points",), f"load point {show(cell.load)} needs duration_s: "
                         f"its cell {show(cell.hlog)} is an .hlog, which does not state one")
    if value_unit is None and "value_unit" not in data and not all(c.results for c in cells):
        problems.add(("value_unit",), "required: ns, us or ms (the unit the .hlog values are in)")

    if problems.items:
        raise ManifestError(problems.messages(), path=path)
    return Manifest(run_id=run_id, run_dir=run_dir, path=path, title=title, date=date,
                    description=description, value_unit=value_unit, systems=systems,
                    load_points=load_points, cells=cells, tags=tags,
                    service_time_ms=service_time_ms, environment=environment,
                    load_generator=load_generator, jfr_attribution=attribution,
                    cpu_accounting=cpu_accounting,
                    schema_version=schema_version if schema_version in SCHEMA_VERSIONS else 1,
                    method=method,
                    series=series, version=version, scenarios=scenarios)

def _cpu_accounting(data, attribution, problems) -> dict[str, tuple[str, ...]]:
    """`cpu_accounting: {handler: [label, ...], coordination: [...]}`: each a list of the run's
    jfr_attribution labels, no label in both; without the key, DEFAULT_CPU_ACCOUNTING's labels
    that the run has."""
    labels = [a["label"] for a in attribution]
    block = data.get("cpu_accounting")
    if block is None:
        return {kind: tuple(x for x in wanted if x in labels)
                for kind, wanted in DEFAULT_CPU_ACCOUNTING.items()}
    p = ("cpu_accounting",)
    if not isinstance(block, dict):
        problems.add(p, "must be a mapping {handler: [labels], coordination: [labels]}")
        return {}
    unknown_keys(block, set(DEFAULT_CPU_ACCOUNTING), p, problems)
    out, seen = {}, {}
    for kind in DEFAULT_CPU_ACCOUNTING:
        chosen = []
        for i, label in enumerate(list_at(block, kind, p, problems)):
            where = p + (kind, i)
            if label not in labels:
                problems.add(where, f"{show(label)} is not a jfr_attribution label (they are: "
                             f"{', '.join(labels) or 'none: add jfr_attribution patterns'})")
            elif label in seen:
                problems.add(where, f"{show(label)} is already under {seen[label]}")
            else:
                seen[label] = kind
                chosen.append(label)
        out[kind] = tuple(chosen)
    return out


def _mappings(data, key, allowed, what, problems, *, required=False):
    """(path, entry) for each mapping in the list `key`, its unknown keys reported; an entry
    that is not a mapping is a problem."""
    for i, entry in enumerate(list_at(data, key, (), problems, required=required)):
        p = (key, i)
        if not isinstance(entry, dict):
            problems.add(p, f"must be a mapping with {what}")
            continue
        unknown_keys(entry, allowed, p, problems)
        yield p, entry


def _method(data, problems) -> Method | None:
    block = data.get("method")
    if block is None:
        return None
    if not isinstance(block, dict):
        problems.add(("method",), "must be a mapping (repetitions, order, order_seed, drain, "
                     "host_check)")
        return None
    p = ("method",)
    unknown_keys(block, METHOD_KEYS, p, problems)
    host_check = scalar_map_at(block, "host_check", {k: k for k in HOST_CHECK_KEYS}, p, problems)
    for key in ("threshold", "busy_wait_s"):
        if key in host_check:
            number_at(host_check, key, p + ("host_check",), problems, positive=False)
    return Method(repetitions=number_at(block, "repetitions", p, problems, integer=True),
                  order=string_at(block, "order", p, problems),
                  order_seed=number_at(block, "order_seed", p, problems, integer=True,
                                       positive=False),
                  drain=string_at(block, "drain", p, problems), host_check=host_check,
                  pool_threads=number_at(block, "pool_threads", p, problems, integer=True),
                  jfr_repetitions=number_at(block, "jfr_repetitions", p, problems,
                                            integer=True, positive=False),
                  knee_search=_knee_search(block, p, problems),
                  settle=_settle(block, p, problems),
                  warmup=_warmup(block, p, problems))


def _per_system(block, key, keys, system_keys, p, problems) -> dict[str, Any] | None:
    """method.knee_search / method.settle: a mapping with a rule and one entry per system."""
    search = block.get(key)
    if search is None:
        return None
    if not isinstance(search, dict):
        problems.add(p + (key,), "must be a mapping (" + ", ".join(sorted(keys)) + ")")
        return None
    unknown_keys(search, keys, p + (key,), problems)
    string_at(search, "rule", p + (key,), problems, required=True)
    for i, entry in enumerate(list_at(search, "systems", p + (key,), problems, required=True)):
        q = p + (key, "systems", i)
        if not isinstance(entry, dict):
            problems.add(q, "must be a mapping with system")
            continue
        unknown_keys(entry, system_keys, q, problems)
        string_at(entry, "system", q, problems, required=True)
    return search


def _knee_search(block, p, problems) -> dict[str, Any] | None:
    search = _per_system(block, "knee_search", KNEE_SEARCH_KEYS, KNEE_SYSTEM_KEYS, p, problems)
    for i, entry in enumerate((search or {}).get("systems") or []):
        q = p + ("knee_search", "systems", i)
        for key in ("knee", "first_saturated"):
            number_at(entry, key, q, problems)
        string_at(entry, "stopped", q, problems)
        for j, probe in enumerate(list_at(entry, "probes", q, problems, required=True)):
            _knee_probe(probe, q + ("probes", j), problems)
    return search


def _knee_probe(probe, q, problems) -> None:
    if not isinstance(probe, dict):
        problems.add(q, "must be a mapping with rate, verdict, why")
        return
    unknown_keys(probe, KNEE_PROBE_KEYS, q, problems)
    number_at(probe, "rate", q, problems, required=True)
    if probe.get("verdict") not in ("good", "saturated"):
        problems.add(q + ("verdict",), f"must be good or saturated, not {show(probe.get('verdict'))}")
    string_at(probe, "why", q, problems, required=True)
    host = scalar_map_at(probe, "host_check", {k: k for k in PROBE_HOST_CHECK_KEYS}, q, problems)
    if host and host.get("verdict") not in ("quiet", "busy"):
        problems.add(q + ("host_check", "verdict"),
                     f"must be quiet or busy, not {show(host.get('verdict'))}")
    for key in ("busy_share_before", "settle_waited_s"):   # the methodology prints these
        if key in host:
            number_at(host, key, q + ("host_check",), problems, positive=False)


def _settle(block, p, problems) -> dict[str, Any] | None:
    settle = _per_system(block, "settle", SETTLE_KEYS, SETTLE_SYSTEM_KEYS, p, problems)
    if settle is not None:
        number_at(settle, "max_wait_s", p + ("settle",), problems, required=True, positive=False)
        for i, entry in enumerate(settle.get("systems") or []):
            if isinstance(entry, dict):
                for key in ("quiet_answer_ms", "bound_ms"):
                    number_at(entry, key, p + ("settle", "systems", i), problems, required=True)
    return settle


def _warmup(block, p, problems) -> dict[str, Any] | None:
    """method.warmup: the mode and bounds, then one entry per cell repetition; a cell's own mode,
    min_s and max_s (a rerun with other settings) override the run's."""
    warmup = block.get("warmup")
    if warmup is None:
        return None
    q = p + ("warmup",)
    if not isinstance(warmup, dict):
        problems.add(q, "must be a mapping (" + ", ".join(sorted(WARMUP_KEYS)) + ")")
        return None
    unknown_keys(warmup, WARMUP_KEYS, q, problems)
    _warmup_setting(warmup, q, problems, required=True)
    string_at(warmup, "rule", q, problems)
    for i, cell in enumerate(list_at(warmup, "cells", q, problems, required=True)):
        c = q + ("cells", i)
        if not isinstance(cell, dict):
            problems.add(c, "must be a mapping with cell, used_s, reached")
            continue
        unknown_keys(cell, WARMUP_CELL_KEYS, c, problems)
        name = string_at(cell, "cell", c, problems, required=True)
        if name is not None and not WARMUP_CELL_RE.match(name):
            problems.add(c + ("cell",), f"{show(name)} must be [scenario/]system/load.repetition")
        _warmup_setting(cell, c, problems, required=False)
        number_at(cell, "used_s", c, problems, required=True, positive=False)
        if not isinstance(cell.get("reached"), bool):
            problems.add(c + ("reached",), f"must be true or false, not {show(cell.get('reached'))}")
    return warmup


def _warmup_setting(entry: dict, q, problems, *, required: bool) -> None:
    if (required or "mode" in entry) and entry.get("mode") not in WARMUP_MODES:
        problems.add(q + ("mode",), f"must be auto or fixed, not {show(entry.get('mode'))}")
    for key in ("min_s", "max_s"):
        number_at(entry, key, q, problems, required=required, positive=False)


def _scenarios(data, declared_loads, run_service_ms, problems) -> list[ScenarioSpec]:
    """`scenarios:` (issue 11): each with an id, a label and its load points (ids into the
    run's load_points); the service time defaults to the run's."""
    scenarios: list[ScenarioSpec] = []
    seen: list[str] = []
    for p, entry in _mappings(data, "scenarios", SCENARIO_KEYS, "id, label and load_points",
                              problems):
        sid = ident_at(entry, "id", p, problems)
        label = string_at(entry, "label", p, problems, required=True)
        endpoint = string_at(entry, "endpoint", p, problems)
        service = number_at(entry, "service_time_ms", p, problems, positive=False)
        desc = string_at(entry, "description", p, problems)
        loads = []
        for j, load in enumerate(list_at(entry, "load_points", p, problems, required=True)):
            if not isinstance(load, str) or load not in declared_loads:
                problems.add(p + ("load_points", j),
                             f"{show(load)} is not a load point id of this run")
            elif load in loads:
                problems.add(p + ("load_points", j), f"{show(load)} is listed twice")
            else:
                loads.append(load)
        headline = string_at(entry, "headline", p, problems)
        if headline is not None and headline not in loads:
            problems.add(p + ("headline",), f"{show(headline)} is not one of this scenario's "
                         f"load_points")
            headline = None
        if sid and sid in seen:
            problems.add(p + ("id",), f"duplicate scenario id {show(sid)}")
            continue
        if sid:
            seen.append(sid)
        if sid and label and loads:
            scenarios.append(ScenarioSpec(sid, label, tuple(loads), endpoint,
                                      run_service_ms if service is None else service,
                                      desc, headline))
    return scenarios


def _version_at(data, problems) -> str | None:
    """`version:` as text. A whole number is taken as its digits; other numbers are refused,
    because YAML reads 1.10 as the number 1.1."""
    value = data.get("version")
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    if value is not None and not isinstance(value, str):
        problems.add(("version",), f'must be a string (quote it: "1.10"), not {show(value)}')
        return None
    return string_at(data, "version", (), problems)


def _cells(data, run_dir, systems, load_points, problems, declared_systems,
           declared_loads, scenarios=(), defaults=(None, None)) -> list[CellSpec]:
    """Every ([scenario,] system, load point) gets the default cell unless the manifest lists
    its own. With scenarios, a cell names its scenario (it may leave it out when there is only
    one) and its load must be one of that scenario's load points."""
    system_ids = [s.id for s in systems]
    load_ids = [lp.id for lp in load_points]
    by_id = {sc.id: sc for sc in scenarios}
    given: dict[tuple[str | None, str, str], list[CellSpec]] = {}
    for i, entry in enumerate(list_at(data, "cells", (), problems)):
        p = ("cells", i)
        if not isinstance(entry, dict):
            problems.add(p, "must be a mapping with system and load")
            continue
        unknown_keys(entry, CELL_KEYS, p, problems)
        system = string_at(entry, "system", p, problems, required=True)
        load = string_at(entry, "load", p, problems, required=True)
        scenario, known = _cell_scenario(entry, p, problems, by_id)
        if system is not None and system not in declared_systems:
            problems.add(p + ("system",), f"{show(system)} is not a system id of this run")
            system = None
        if load is not None and load not in declared_loads:
            problems.add(p + ("load",), f"{show(load)} is not a load point id of this run")
            load = None
        elif load is not None and scenario is not None and load not in by_id[scenario].load_points:
            problems.add(p + ("load",), f"{show(load)} is not a load point of scenario "
                         f"{show(scenario)} ({', '.join(by_id[scenario].load_points)})")
            load = None
        repetition = number_at(entry, "repetition", p, problems, integer=True)
        hlogs = relpaths_at(entry, "hlog", p, problems, run_dir)
        hlog = hlogs[0] if hlogs else None
        jfr = relpath_at(entry, "jfr", p, problems, run_dir)
        tag = entry.get("tag")
        if tag is not None and (not isinstance(tag, str) or not tag):
            problems.add(p + ("tag",), "must be a non-empty string or null")
            tag = None
        counts = {k: number_at(entry, k, p, problems, positive=False, integer=True)
                  for k in ("sent", "errors", "timeouts")}
        counts_files = relpaths_at(entry, "counts", p, problems, run_dir)
        counts["counts"] = counts_files[0] if counts_files else None
        parts = _generator_parts(hlogs, counts_files, p, problems)
        imported = _results_at(entry, p, problems, run_dir, defaults)
        if imported and hlog:
            problems.add(p + ("results",), "a cell reads either `hlog:` or `results:`, not both")
        if system not in system_ids or load not in load_ids or not known:
            continue
        cells = given.setdefault((scenario, system, load), [])
        rep = repetition if repetition is not None else len(cells) + 1
        if any(c.repetition == rep for c in cells):
            where = "/".join(x for x in (scenario, system, load) if x)
            problems.add(p + ("repetition",), f"repetition {rep} of {where} given twice")
            continue
        if imported:
            cells.append(CellSpec(system, load, rep, imported.pop("hlog"), tag, jfr, **counts,
                              scenario=scenario, **imported))
            continue
        cells.append(CellSpec(system, load, rep,
                          hlog or _default_hlog(system, load, run_dir, problems, p, scenario),
                          tag, jfr, **counts, scenario=scenario, **parts))
    out = []
    grid = [(sc.id, sc.load_points) for sc in scenarios] or [(None, tuple(load_ids))]
    for scenario, loads in grid:
        for load in loads:
            for system in system_ids:
                if (scenario, system, load) in given:
                    out.extend(sorted(given[(scenario, system, load)], key=lambda c: c.repetition))
                else:
                    hlog = _default_hlog(system, load, run_dir, problems, (), scenario)
                    out.append(CellSpec(system, load, 1, hlog, scenario=scenario))
    return out


def _generator_parts(hlogs, counts_files, p, problems) -> dict:
    """CellSpec's `parts`/`counts_parts` of a harness cell with several generators (issue 33):
    one `.hlog` and one counts file per generator, in the same order."""
    several = len(hlogs or ()) > 1 or len(counts_files or ()) > 1
    if not several:
        return {}
    if hlogs and counts_files and len(hlogs) != len(counts_files):
        problems.add(p + ("counts",), f"{_files(len(counts_files), 'counts')} for "
                     f"{_files(len(hlogs), '`hlog:`')}: one per generator, in the same order")
        return {}
    if not hlogs or len(hlogs) == 1:
        problems.add(p + ("counts",), f"{_files(len(counts_files), 'counts')} need as many "
                     "`hlog:` files (a list, one per generator, in the same order)")
        return {}
    return {"parts": hlogs, "counts_parts": counts_files or ()}


def _files(n: int, kind: str) -> str:
    return f"{n} {kind} file{'s' if n != 1 else ''}"


def _cell_scenario(entry, p, problems, by_id) -> tuple[str | None, bool]:
    """A cell's scenario id (None in a run without scenarios; the only one when the cell does
    not say) and whether the cell can be placed."""
    scenario = string_at(entry, "scenario", p, problems)
    if not by_id:
        if scenario is not None:
            problems.add(p + ("scenario",), "the run declares no scenarios (add `scenarios:` "
                         "or remove this key)")
        return None, scenario is None
    if scenario is None:
        if entry.get("scenario") is not None:
            return None, False              # not a string: string_at said so
        if len(by_id) == 1:
            return next(iter(by_id)), True
        problems.add(p + ("scenario",), f"required: the run has {len(by_id)} scenarios "
                     f"({', '.join(by_id)})")
        return None, False
    if scenario not in by_id:
        problems.add(p + ("scenario",), f"{show(scenario)} is not a scenario id of this run")
        return None, False
    return scenario, True


def _default_hlog(system, load, run_dir, problems, path, scenario=None) -> str:
    rel = f"{cell_folder(scenario, system)}/{load}.hlog"
    why = check_relpath(run_dir, rel)
    if why:
        problems.add(path, f"default data file {why}")
    return rel


def _connections_at(entry, p, problems) -> int | None:
    """A closed-loop load point's size: `connections:` or `users:` (one of them)."""
    if "connections" in entry and "users" in entry:
        problems.add(p + ("users",), "give connections or users, not both")
    key = "users" if "users" in entry else "connections"
    n = number_at(entry, key, p, problems, integer=True)
    if n is not None and "offered_rate" in entry and entry["offered_rate"] is not None:
        # a closed loop's rate is what it achieved, not what was asked: say one or the other
        problems.add(p + ("offered_rate",), f"a load point of {key} (closed loop) has no "
                     f"offered rate: remove one of the two")
    if n is not None and entry.get("clients") is not None:
        # clients split an offered rate; a closed loop's clients are its connections
        problems.add(p + ("clients",), f"clients divide an offered rate; a load point of {key} "
                     f"(closed loop) has none: remove clients")
    return n


def _closed_key(entry) -> str:
    return "users" if "users" in entry else "connections"


def _one_load_model(kinds: list[tuple[tuple, str]], problems) -> None:
    """A run's load points are all offered rates or all connections (or users): its load
    curve has one x axis, offered load or achieved throughput, and its points one order."""
    first = kinds[0][1] if kinds else None
    p, other = next(((p, k) for p, k in kinds if k != first), (None, None))
    if other is not None:
        problems.add(p + (other,),
                     f"the load points mix {first} and {other}: give every load point an "
                     f"offered_rate (open loop), or every one connections or users (closed "
                     f"loop), and measure the other kind in a run of its own")


def _window_at(block, p, problems) -> tuple[float, float | None] | None:
    """`window: {skip_s, duration_s}`: the part of an imported file measured (issue 23)."""
    w = block.get("window")
    if w is None:
        return None
    if not isinstance(w, dict):
        problems.add(p + ("window",), "must be a mapping {skip_s, duration_s}")
        return None
    unknown_keys(w, WINDOW_KEYS, p + ("window",), problems)
    skip = number_at(w, "skip_s", p + ("window",), problems, positive=False)
    duration = number_at(w, "duration_s", p + ("window",), problems)
    return (skip or 0.0, duration)


def _co_interval_at(block, p, problems) -> float | None:
    c = block.get("co_correction")
    if c is None:
        return None
    if not isinstance(c, dict):
        problems.add(p + ("co_correction",), "must be a mapping {expected_interval_ms}")
        return None
    unknown_keys(c, CO_CORRECTION_KEYS, p + ("co_correction",), problems)
    return number_at(c, "expected_interval_ms", p + ("co_correction",), problems, required=True)


def _results_at(entry, p, problems, run_dir, defaults) -> dict | None:
    """A cell's `results:` (a load tool's file) with its format, options, window and
    correction, as CellSpec fields; None for an .hlog cell."""
    from analysis.read.loadtools import FORMATS     # (only runs that import need the readers)
    files = relpaths_at(entry, "results", p, problems, run_dir)
    rel = files[0] if files else None
    for key in ("format", "options", "window", "co_correction", "summary"):
        if key in entry and "results" not in entry:
            problems.add(p + (key,), "goes with `results:` (a load tool's file)")
    if rel is None:
        return None
    fmt = string_at(entry, "format", p, problems)
    if fmt is not None and fmt not in FORMATS:
        problems.add(p + ("format",), f"unknown format {show(fmt)}; one of "
                     + ", ".join(FORMATS))
        fmt = None
    raw = entry.get("options")
    executors = None
    if isinstance(raw, dict) and "executors" in raw:
        # k6's scenarios -> executors (what makes each open or closed): the one mapping option
        executors = raw["executors"]
        entry = {**entry, "options": {k: v for k, v in raw.items() if k != "executors"}}
        if not isinstance(executors, dict) or not all(
                isinstance(k, str) and isinstance(v, str) for k, v in executors.items()):
            problems.add(p + ("options", "executors"), "must map k6 scenario names to "
                         "executor names (constant-vus, constant-arrival-rate, ...)")
            executors = None
    options = scalar_map_at(entry, "options", {k: k for k in RESULT_OPTION_KEYS}, p, problems)
    if executors:
        options["executors"] = tuple(sorted(executors.items()))
    window = _window_at(entry, p, problems) if "window" in entry else defaults[0]
    co = _co_interval_at(entry, p, problems) if "co_correction" in entry else defaults[1]
    summary = relpath_at(entry, "summary", p, problems, run_dir)
    if summary and len(files) > 1:
        problems.add(p + ("summary",), "goes with one per-request file; a cell of several "
                     "generators' files takes no `summary:`")
        summary = None
    return {"hlog": rel, "parts": files if len(files) > 1 else (), "results": True, "format": fmt,
            "options": tuple(sorted(options.items())), "window": window, "co_interval_ms": co,
            "summary": summary}
