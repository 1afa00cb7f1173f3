"""Read one run's inputs (.hlog, counts, optional JFR) and aggregate them: the I/O side of
aggregate.py.

`analyse_run(manifest, site_root)` returns the run model (analysis/model.py), which the writers
turn into the run's data document (`_data/runs/<id>.yml` or `_rundata/<id>.yml`), CSV, charts
and the report page. A cell whose `.hlog` is missing is listed under `missing` and left out; a `.hlog` or counts file that cannot be read
fails the run with an error naming it.

Per repetition of a schema-2 run (a `counts` file beside the log): the population is the
window's requests; the untagged intervals hold those answered in time, the counts file how many
timed out or errored, so the statistics are censored at the timeout where the rank falls among
unanswered requests (overload.censored_stats). The JFR figures are those of the window
(summarize_jfr(window=...)), with the warm-up's apart. Schema 1: every recorded value is a
latency, nothing is censored, the queue rule runs on the per-interval p50.
"""
from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from analysis.derive import aggregate, histogram_sums, overload, steady
from analysis.derive.jvm_summary import summarize_and_fold, summarize_jfr
from analysis.errors import HlogError
from analysis.model import (Accounting, CpuWindow, InFlight, Jvm, JvmWindow, Missing, Repetition,
                            Run)
from analysis.read.counts import Counts, read_counts
from analysis.read.hdr.double import sum_double_histograms
from analysis.read.hdr.histogram import Histogram, sum_histograms
from analysis.read.hdr.log import read_hlog
from analysis.read.manifest import UNITS_PER_MS, Manifest, default_jfr
from analysis.paths import merged_hlog_path, repo_relative


# What of a JFR summary goes into _data (kept small: no pause lists, no warnings).
JVM_KEYS = ("jdk", "duration_s", "truncated", "gc", "safepoint", "cpu", "allocation_rate_mb_s",
            "threads", "samples", "hot_methods", "attribution", "window", "warmup")
HOT_METHODS_IN_DATA = 5


# Values _rounded leaves as they are, by exact type: a JFR summary's ~130 leaves a repetition
# are mostly these and floats, which the comprehensions below handle without a call each.
_KEPT = frozenset((int, str, bool, type(None)))


def _rounded(value: Any) -> Any:
    kind = type(value)
    if kind is dict:
        return {k: round(v, 3) if type(v) is float else v if type(v) in _KEPT else _rounded(v)
                for k, v in value.items()}
    if kind is list:
        return [round(v, 3) if type(v) is float else v if type(v) in _KEPT else _rounded(v)
                for v in value]
    # anything else, subclasses too (numpy's float64 is a float), as isinstance says
    if isinstance(value, float):
        return round(value, 3)
    if isinstance(value, dict):
        return {k: _rounded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_rounded(v) for v in value]
    return value


def jvm_for_data(summary: dict[str, Any]) -> dict[str, Any]:
    """The part of summarize_jfr's result that the pages print, rounded for display."""
    out = {}
    for key in JVM_KEYS:
        if key not in summary:
            continue
        value = summary[key]
        if key == "gc" and isinstance(value, dict):
            value = {k: v for k, v in value.items() if k != "pauses"}
        if key == "warmup" and isinstance(value, dict) and isinstance(value.get("gc"), dict):
            value = {**value, "gc": {k: v for k, v in value["gc"].items() if k != "pauses"}}
        if key == "hot_methods" and isinstance(value, list):
            value = value[:HOT_METHODS_IN_DATA]
        out[key] = _rounded(value)
    return out


def server_cpu_window(counts: Counts, summary: dict[str, Any] | None,
                      window_s: float) -> CpuWindow | None:
    """The server process's CPU seconds in the window: counts.json's share of the machine over
    exactly the window (a difference of the process's CPU times) when it has one, else the
    recording's jdk.CPULoad mean (one sample a second); both × the machine's cores."""
    cores, replies = counts.machine_cores, counts.server_completions_window
    if not cores or not replies or window_s <= 0:
        return None
    share, source = counts.server_cpu_share_window, "counts"
    jfr_cpu = (summary or {}).get("cpu") or {}
    if share is None and None not in (jfr_cpu.get("jvm_user"), jfr_cpu.get("jvm_system")):
        share, source = jfr_cpu["jvm_user"] + jfr_cpu["jvm_system"], "jfr"
    if share is None:
        return None
    return CpuWindow(share * cores * window_s, source, replies)


def pauses_on_series_axis(summary: dict[str, Any], t0_epoch_s: float,
                          span_s: float) -> list[dict[str, float]]:
    """GC pauses as [{t_s, duration_ms}] on the latency-over-time axis (s since the first
    interval of the log), keeping those inside the measured span."""
    gc = summary.get("gc") or {}
    out = []
    for start_epoch_s, duration_ms in gc.get("pauses") or []:
        t = start_epoch_s - t0_epoch_s
        if 0.0 <= t <= span_s:
            out.append({"t_s": t, "duration_ms": duration_ms})
    return out


def combine(histograms: list):
    """The sum of several histograms (repetitions of one cell), added the way Java adds them."""
    if len(histograms) == 1:
        return histograms[0]
    if all(isinstance(h, Histogram) for h in histograms):
        return histogram_sums.sum_of(histograms, sum_histograms)
    if any(isinstance(h, Histogram) for h in histograms):
        raise HlogError("repetitions mix Histogram and DoubleHistogram logs; they cannot be "
                        "combined into one cell")
    return sum_double_histograms(histograms)


def merged(log, intervals: list, tag):
    """log.merged(tag) of the tag's `intervals` (log.select(tag)): their sum, from their entries
    end to end where they are integer histograms of one index scheme (derive/histogram_sums)."""
    entries = histogram_sums.entries_of([h for _, h in log.iter_histograms(intervals)])
    return log.merged(tag=tag) if entries is None else histogram_sums.added(entries)


def front_matter_like(path: Path) -> bool:
    """Whether Jekyll would take the file for a page: its first line is `---`. runs/ is
    published as raw files; `render_with_liquid: false` in _config.yml stops Liquid there on
    Jekyll 4, but 3.10 ignores that key."""
    with open(path, "rb") as f:
        return f.readline().rstrip() == b"---"


def jvm_window(summary: dict[str, Any]) -> JvmWindow:
    """The JVM figures of a summary taken with summarize_jfr(window=...): inside the window."""
    gc, sp, cpu = summary.get("gc") or {}, summary.get("safepoint") or {}, summary.get("cpu") or {}
    jvm_cpu = None
    if cpu.get("jvm_user") is not None and cpu.get("jvm_system") is not None:
        jvm_cpu = cpu["jvm_user"] + cpu["jvm_system"]
    return JvmWindow(gc_pause_max_ms=gc.get("pause_max_ms"),
                     gc_pause_total_ms=gc.get("pause_total_ms"), gc_count=gc.get("count"),
                     safepoint_total_ms=sp.get("total_ms") if sp.get("recorded", True) else None,
                     jvm_cpu=jvm_cpu, machine_cpu=cpu.get("machine"),
                     allocation_rate_mb_s=summary.get("allocation_rate_mb_s"))


def timeout_ms(manifest: Manifest, counts: Counts | None) -> float | None:
    if counts is not None and counts.timeout_s is not None:
        return counts.timeout_s * 1000.0
    t = manifest.load_generator.get("timeout_s")
    return None if t is None else float(t) * 1000.0


def analyse_run(manifest: Manifest, site_root: Path, map_fn=map) -> Run:
    """Read every cell's inputs and build the run model (aggregate.build_run). `map_fn` reads
    the repetitions (a pool's map spreads one run over the cores: the build gives it when a
    single run changed, so that adding a run waits for half as long)."""
    warnings: list[str] = []
    if front_matter_like(manifest.path):
        warnings.append(f"{repo_relative(manifest.path, site_root)}:1: starts with a '---' line: "
                        f"Jekyll 3.10 (GitHub Pages) would publish it as a page and run Liquid in "
                        f"it; delete that line (YAML does not need it)")
    if manifest.value_unit is None:
        from analysis.derive.imported import value_unit_for
        manifest.value_unit = value_unit_for(manifest)
    missing: list[Missing] = []
    present = []
    for cell in manifest.cells:
        path = manifest.resolve(cell.hlog)
        rel = repo_relative(path, site_root)
        if not path.is_file():
            missing.append(Missing(cell.load, cell.system, rel, cell.scenario))
            where = "/".join(x for x in (cell.scenario, cell.system, cell.load) if x)
            warnings.append(f"{rel}: missing; cell {where} left out")
            continue
        present.append((cell, path, rel))
    measured: dict[tuple[str, ...], list[tuple[Repetition, Any]]] = {}
    n = len(present)
    # in the manifest's order, whichever process read them: the same warnings, the same model
    for (cell, _, _), (pair, cell_warnings) in zip(present, map_fn(
            _read_repetition_task, [manifest] * n, [c for c, _, _ in present],
            [p for _, p, _ in present], [r for _, _, r in present], [site_root] * n)):
        warnings.extend(cell_warnings)
        measured.setdefault(aggregate.measured_key(cell.scenario, cell.load, cell.system),
                            []).append(pair)
    run = aggregate.build_run(manifest, measured, combine, missing=missing, warnings=warnings,
                              manifest_path=repo_relative(manifest.path, site_root))
    run.knee_search = read_knee_search(manifest, site_root)
    return run


def read_knee_search(manifest: Manifest, site_root: Path):
    """The run's knee.json (bench/run.sh --find-knee, issue 32), or None without one."""
    path = manifest.run_dir / "knee.json"
    if not path.is_file():
        return None
    from analysis.read.knee import KneeError, read_knee
    shown = repo_relative(path, site_root)
    search = read_knee(path, shown)
    systems = {s.id for s in manifest.systems}
    for entry in search.systems:
        if entry.system not in systems:
            raise KneeError(f"system {entry.system!r} is not a system of run.yml "
                            f"({', '.join(sorted(systems))})", path=shown)
    return search


def _read_repetition_task(manifest: Manifest, cell, path: Path, rel: str, site_root: Path):
    """read_repetition for a pool: its warnings returned, not appended to a shared list."""
    warnings: list[str] = []
    return read_repetition(manifest, cell, path, rel, site_root, warnings), warnings


def read_repetition(manifest: Manifest, cell, path: Path, rel: str, site_root: Path,
                    warnings: list[str]) -> tuple[Repetition, Any]:
    """One cell repetition: its log, counts (schema 2) and JFR -> (Repetition, histogram of
    the completed requests)."""
    if cell.results:
        from analysis.derive.imported import read_imported
        return read_imported(manifest, cell, path, rel, warnings)
    unit = manifest.value_unit
    lp = manifest.load_point(cell.load)
    counts, log, generators = _read_generators(manifest, cell, path, rel)
    source, merged_text = rel, None
    if generators:
        # the cell's figures come from the generators' logs added: that sum is the data the
        # tables link to, published as a log HistogramLogProcessor reads (each generator's own
        # log is linked from its row of the per-generator table)
        from analysis.read.hdr.log_writer import hlog_text
        source = merged_hlog_path(manifest.run_id, cell)
        merged_text = hlog_text(log.intervals, UNITS_PER_MS[unit], comment=(
            "the interval histograms of " + ", ".join(g.source for g in generators)
            + " added by absolute second, by loadcurve"))
    for w in log.warnings:
        warnings.append(f"{rel}: {w}")
    intervals = log.select(cell.tag)
    if not intervals:
        tags = ", ".join("untagged" if t is None else repr(t) for t in log.tags()) or "none"
        raise HlogError(f"no intervals with tag {cell.tag!r} (tags in the file: {tags})",
                        path=rel, hint=f"set `tag:` for cell {cell.system}/{cell.load} in run.yml")
    histogram = merged(log, intervals, cell.tag)
    window_ns = counts.window_epoch_ns() if counts is not None else None
    if window_ns is not None:
        # plot (and count pauses in) the window and the drain: warm-up intervals hold no window
        # request
        start_ms = window_ns[0] / 1e6 - 1.0
        intervals = [iv for iv in intervals if iv.start_ms >= start_ms] or intervals
    series = aggregate.interval_series(intervals, unit)
    if counts is not None:
        # the generator's figures of the same 1 s intervals (t_s: s since the log's StartTime)
        by_t = {round(c.t_s, 1): c for c in counts.intervals}
        for row, iv in zip(series, intervals):
            c = by_t.get(round(iv.start_s, 1))
            row["timed_out"] = c.timed_out if c else None
            row["in_flight_mean"] = c.in_flight_mean if c else None
            # throughput: every reply in the interval, as the cell's; the log's count is only
            # the window's requests answered in time
            row["throughput_rps"] = c.completed / c.length_s if c and c.length_s > 0 else None
    span_s = sum(iv.length_s for iv in intervals)
    jvm = gc_pauses = None
    summary = None
    jfr_rel = default_jfr(manifest, cell)
    if jfr_rel is not None:
        attribution = [(a["pattern"], a["label"]) for a in manifest.jfr_attribution]
        stacks = None
        if window_ns is not None:
            # the flame graphs' stacks (issue 25), folded in the summary's own pass
            summary, stacks = summarize_and_fold(manifest.resolve(jfr_rel), attribution,
                                                 window=window_ns)
        else:
            summary = summarize_jfr(manifest.resolve(jfr_rel), attribution)
        jvm = Jvm(repo_relative(manifest.resolve(jfr_rel), site_root), jvm_for_data(summary),
                  jvm_window(summary) if window_ns is not None else None, stacks)
        for w in summary.get("warnings") or []:
            warnings.append(f"{jvm.source}: {w}")
        gc_pauses = pauses_on_series_axis(summary, intervals[0].start_ms / 1000.0, span_s)
    tmo = timeout_ms(manifest, counts)
    if counts is None:
        state = steady.classify(steady.window_series(series, lp.duration_s),
                                window_s=lp.duration_s, offered_rate=lp.offered_rate,
                                timeout_ms=tmo)
        whole = stats = aggregate.histogram_stats(histogram, unit)
        length_s = lp.duration_s
        cut = intervals[0].start_s + (state.steady_from_s or 0.0) - 1e-6
        part = [iv.histogram for iv in intervals if iv.start_s >= cut]
        if state.from_steady_part and not part:
            state = replace(state, from_steady_part=False)
        if state.from_steady_part:
            # the log is the window (schema 1): the steady part is its intervals from there on
            histogram = combine(part)
            stats = aggregate.histogram_stats(histogram, unit)
            length_s = lp.duration_s - state.steady_from_s
        return Repetition(
            index=cell.repetition, source=source, merged_text=merged_text, stats=stats,
            throughput_rps=aggregate.recorded_rate(stats.count, length_s),
            accounting=Accounting(sent=cell.sent, errors=cell.errors, timed_out=cell.timeouts),
            series=series, jvm=jvm, gc_pauses=gc_pauses, timeout_ms=tmo,
            # the queue rule over what the figures describe: the steady part, or the window
            queue=None if lp.offered_rate is None else aggregate.p50_queue(
                series, lp.offered_rate, state.steady_from_s if state.from_steady_part else 0.0),
            steady=state, window_stats=whole if state.from_steady_part else None), histogram
    w = counts.window
    if tmo is None:
        raise HlogError("the counts file gives no timeout_s and run.yml no load_generator."
                        "timeout_s: timed-out requests cannot be placed", path=rel)
    stats = overload.censored_stats(histogram, w.timed_out, tmo, 1.0 / UNITS_PER_MS[unit],
                                    w.errors)
    window_s = w.duration_s or lp.duration_s
    rates = overload.window_rates(w.completed, window_s, counts.server_completions_window)
    win = counts.window_intervals()
    state = steady.classify(steady.window_series(series, window_s), window_s=window_s,
                            offered_rate=lp.offered_rate, timeout_ms=tmo)
    part = None
    if state.from_steady_part:
        part = steady_part(log, cell.tag, counts, w.start_s + state.steady_from_s, tmo, unit)
        if part is None:
            state = replace(state, from_steady_part=False)
    accounting = Accounting(sent=w.sent, completed=w.completed, timed_out=w.timed_out,
                            errors=w.errors, not_sent=w.not_sent)
    fl = counts.in_flight
    in_flight = InFlight(fl.window_mean, fl.window_max, fl.at_window_start, fl.at_window_end)
    whole = None
    if part is not None:
        whole = stats
        stats, accounting, in_flight, rates, histogram = part
        win = [iv for iv in win if iv.t_s >= w.start_s + state.steady_from_s - 1e-6]
    # the queue rule scales by the offered rate: a closed loop (issue 23) offers none
    queue = None if lp.offered_rate is None else overload.queue_growth(
        [iv.t_s for iv in win], [iv.in_flight_mean for iv in win], lp.offered_rate)
    machine, server, generator = overload.host_figures(
        (summary or {}).get("cpu"), counts.machine_cpu_share_window,
        counts.server_cpu_share_window, counts.generator_cpu_share_window)
    host = overload.host_health(machine, server, generator)
    cpu = server_cpu_window(counts, summary, window_s)
    lag = counts.send_lag_us_window.p99
    host = replace(host, send_lag_p99_ms=None if lag is None else lag / 1000.0)
    return Repetition(
        index=cell.repetition, source=source, merged_text=merged_text, stats=stats, throughput_rps=rates.throughput_rps,
        accounting=accounting, series=series, jvm=jvm, gc_pauses=gc_pauses, host=host,
        in_flight=in_flight, goodput_rps=rates.goodput_rps, queue=queue,
        timeout_ms=tmo, cpu_window=cpu, steady=state, window_stats=whole,
        generators=generators), histogram


def _read_generators(manifest: Manifest, cell, path: Path, rel: str):
    """The cell's counts and log: one generator's, or several generators' merged (issue 33,
    derive/merge.py) with each one's figures (GeneratorFigures) beside them."""
    if not cell.parts:
        counts = read_counts(manifest.resolve(cell.counts)) if cell.counts else None
        return counts, read_hlog(path), None
    from analysis.derive import merge
    from analysis.model import GeneratorFigures
    base = rel[:len(rel) - len(cell.hlog)]
    logs, counts_files = [], []
    for part in cell.parts:
        if not manifest.resolve(part).is_file():
            raise HlogError("missing: a cell of several generators needs every log",
                            path=base + part)
        logs.append(read_hlog(manifest.resolve(part)))
    counts_files = [read_counts(manifest.resolve(c)) for c in cell.counts_parts]
    rows = []
    for i, (part, log) in enumerate(zip(cell.parts, logs)):
        c = counts_files[i] if counts_files else None
        answered = log.select(cell.tag)
        if c is not None and c.window.start_s is not None:
            answered = log.select(cell.tag, c.window.start_s, c.window.end_s - 1e-6)
        p99 = (aggregate.histogram_stats(combine([iv.histogram for iv in answered]),
                                         manifest.value_unit).get("p99").value_ms
               if answered else None)
        length = c.window.duration_s if c is not None else manifest.load_point(cell.load).duration_s
        sent = c.window.sent if c is not None else sum(iv.total_count for iv in answered)
        rows.append(GeneratorFigures(
            source=base + part, sent=sent, rate_rps=sent / length if length else 0.0,
            errors=c.window.errors or 0 if c is not None else 0,
            timed_out=c.window.timed_out or 0 if c is not None else 0, p99_ms=p99,
            first_send_ms=(log.intervals[0].log_start_s * 1000.0 if log.intervals else None)))
    merge.flag_generators(rows, manifest.load_point(cell.load).offered_rate)
    counts = merge.merge_counts(counts_files) if counts_files else None
    return counts, merge.merge_logs(logs), rows


def steady_part(log, tag, counts: Counts, cut_s: float, tmo: float, unit: str):
    """A warm-up repetition's figures from its steady part on (issue 32), `cut_s` on the log's
    axis: (stats, accounting, in flight, rates, histogram), or None when nothing was answered
    in it. The log and the counts hold 1 s intervals by the time a request was answered or
    timed out, not by its send time, so the part's population is the window's requests
    answered, timed out or failed from `cut_s` on: a request sent just before the cut and
    answered after it is in (at most the few in flight at the cut, as the steady part is
    steady), one sent before it and timing out after it too (which can only make the part look
    worse). The window's end and its drain are the window's."""
    cut = cut_s - 1e-6
    answered = [iv.histogram for iv in log.select(tag) if iv.start_s >= cut]
    if not answered:
        return None
    histogram = combine(answered)
    timed_out = sum(iv.total_count for iv in log.select("timeout") if iv.start_s >= cut)
    later = [iv for iv in counts.intervals if iv.t_s >= cut and iv.phase != "warmup"]
    errors = sum(iv.errors for iv in later)
    completed = int(histogram.total_count)
    stats = overload.censored_stats(histogram, timed_out, tmo, 1.0 / UNITS_PER_MS[unit], errors)
    w = counts.window
    length_s = w.end_s - cut_s
    inside = [iv for iv in later if iv.phase == "window"]
    replies = sum(iv.completed for iv in inside)
    rates = overload.window_rates(completed, length_s, replies)
    fl = counts.in_flight
    means = [iv.in_flight_mean for iv in inside]
    # the mean and max are the part's (Little's law checks them against its latency); at the
    # window's start and end stay the window's: the backlog the transient began with
    in_flight = InFlight(sum(means) / len(means) if means else None,
                         # (a merge of generators' counts has no max: derive/merge.py)
                         max((iv.in_flight_max for iv in inside), default=None)
                         if fl.window_max is not None else None,
                         fl.at_window_start, fl.at_window_end)
    accounting = Accounting(sent=completed + timed_out + errors, completed=completed,
                            timed_out=timed_out, errors=errors,
                            not_sent=0 if w.not_sent == 0 else None)
    return stats, accounting, in_flight, rates, histogram
