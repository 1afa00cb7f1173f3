"""The run model: what one analysed run is, typed, built once by `aggregate` and read by every
writer (datafiles, charts, pages, new-post, CSV).

    Run -> Scenario -> (System x LoadPoint) -> Cell -> Repetition

A run without `scenarios:` in its run.yml is one implicit scenario (`id` None). A cell is one
(scenario, system, load point); its repetitions are the measurements of it, and each of the
cell's own statistics is the median of the repetitions'. Values are in
milliseconds (requests/s for rates) at full precision: rounding and formatting belong to the
writers (vocabulary.py says how).

Slots a run does not fill are None, and writers leave them out. Issue 12 filled series and
version for history (`Run.series`, `Run.version`, from run.yml). Issue 13 gave JMH results
their own path instead of this model (read/jmh/ -> derive/jmh_report.py -> write/jmh_views.py),
and issue 35 their own kind of run (analysis/kinds.py): every cell here is `kind` "load". Issue 11 filled the scenarios: `Run.scenarios`, one `Scenario` per run.yml `scenarios:` entry
with its own load points, service time and systems (each scenario's `System` objects carry that
scenario's predicted ceiling, measured peak and latency baseline). Issue 10 filled the overload slots (censored percentiles, accounting, saturation reasons,
in flight as measured, host health, per-window JVM figures, repetitions' spread); the rules
that fill them are analysis/derive/overload.py's.
docs/data-format.md ("The run model") says where each slot is serialised.

Two rates, one meaning each (docs/data-format.md, "Rates"):
- `throughput_rps`: replies the server sent during the measured window, per second of window
  (schema 2: every reply, to earlier requests too; schema 1, which records no goodput: the
  values the log recorded in the window, by completion time). What the server delivered; the
  load-curve table's `throughput` column and the measured ceiling.
- `goodput_rps` (schema 2 only): the window's own requests answered within the timeout, counted
  through the drain, per second of window: the offered rate x the share answered in time. Past
  the ceiling it exceeds `throughput_rps` (the drain answers window requests after the window
  closes), so it is never shown as a throughput.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

SATURATION_REASONS = ("goodput", "queue", "latency", "utilisation")


@dataclass(frozen=True)
class Percentile:
    """A latency in ms: a measured value, or - when the rank fell among requests that got no
    answer - only a lower bound, the timeout (censored). At most one is set; both None: no
    samples. (Also the type of max and mean, which are bounds once a request timed out.)
    `upper_bound`: value_ms is only what a tool's summary states the percentile is at most: the
    first row of its percentile spectrum at or above the level, where no row sits at it (issue
    33); printed "≤ 9.34"."""

    value_ms: float | None = None
    at_least_ms: float | None = None
    upper_bound: bool = False

    @property
    def censored(self) -> bool:
        return self.at_least_ms is not None

    @property
    def known(self) -> bool:
        return self.value_ms is not None or self.at_least_ms is not None

    def bound(self) -> float | None:
        """The value, or the lower bound when censored."""
        return self.at_least_ms if self.censored else self.value_ms

    def sort_key(self) -> tuple:
        """Values ascending, then every censored value above them (by bound), then no data."""
        if self.value_ms is not None:
            return (0, self.value_ms)
        if self.at_least_ms is not None:
            return (1, self.at_least_ms)
        return (2, 0.0)


@dataclass
class LatencyStats:
    """The statistics of one measured population: a repetition's window requests (completed +
    timed out; errors apart, they have no latency), or a cell's (each statistic the median of
    its repetitions'). Schema-1 runs: `count` values recorded, `completed` None."""

    count: int                              # the population: completed + timed_out
    percentiles: dict[str, Percentile]      # vocabulary name ("p50") -> percentile
    max: Percentile
    mean: Percentile
    stddev_ms: float | None = None          # of the completed requests
    completed: int | None = None
    timed_out: int = 0
    errors: int = 0

    @property
    def population(self) -> int:
        return self.count

    @property
    def max_ms(self) -> float | None:
        return self.max.value_ms

    @property
    def mean_ms(self) -> float | None:
        return self.mean.value_ms

    def get(self, name: str) -> Percentile:
        """A statistic by name: p50 .. p999, max or mean."""
        if name in self.percentiles:
            return self.percentiles[name]
        return getattr(self, name)

    def value(self, key: str) -> float | None:
        """A statistic by its data key: `p99_ms` (the value; None when censored), `max_ms`..."""
        if key == "stddev_ms":
            return self.stddev_ms
        return self.get(key[:-3] if key.endswith("_ms") else key).value_ms

    def as_data(self) -> dict:
        """Issue 10's keys, full precision: `<name>_ms` (None when censored or no data) and
        `<name>_at_least_ms` (None unless censored) for every percentile, max and mean; then
        population, completed, timed_out, errors."""
        out = {}
        for name in (*self.percentiles, "max", "mean"):
            v = self.get(name)
            out[f"{name}_ms"] = v.value_ms
            out[f"{name}_at_least_ms"] = v.at_least_ms
        out.update(population=self.count, completed=self.completed, timed_out=self.timed_out,
                   errors=self.errors)
        return out


@dataclass
class Accounting:
    """What happened to the window requests of one repetition (sums over a cell's
    repetitions). Issue 10's identity: sent = completed + timed_out + errors; not_sent counts
    requests the generator fell behind on. None: not recorded (schema 1: run.yml may give
    sent, errors and timeouts per cell)."""

    sent: int | None = None
    completed: int | None = None
    timed_out: int | None = None
    errors: int | None = None
    not_sent: int | None = None


@dataclass(frozen=True)
class Saturation:
    """Whether a cell's latencies describe a queue rather than the service, and why: reasons
    in the order of SATURATION_REASONS, one sentence each for the page (overload.saturation)."""

    saturated: bool
    reasons: tuple[str, ...] = ()
    sentences: tuple[str, ...] = ()


@dataclass(frozen=True)
class InFlight:
    """Requests in flight during the window as the generator measured them (all requests, any
    phase), with a Little's-law cross-check (goodput x mean latency) that only holds for a
    steady system, so is only computed for cells that are not saturated."""

    measured_mean: float | None = None
    measured_max: float | None = None
    at_window_start: float | None = None
    at_window_end: float | None = None
    littles_law: float | None = None
    verdict: str = "not checked: no measurement"   # consistent | inconsistent | not checked: ...


@dataclass(frozen=True)
class HostHealth:
    """Whether the host was free for the measurement (CPU shares of the whole machine, 0-1)."""

    machine_cpu: float | None = None
    server_cpu: float | None = None
    generator_cpu: float | None = None
    unexplained: float | None = None        # machine - (server + generator)
    host_busy: bool = False
    reason: str | None = None               # the sentence for the page when busy
    send_lag_p99_ms: float | None = None


@dataclass
class JvmWindow:
    """JVM figures inside the measured window only (the summary covers the whole recording)."""

    gc_pause_max_ms: float | None = None
    gc_pause_total_ms: float | None = None
    gc_count: int | None = None
    safepoint_total_ms: float | None = None
    jvm_cpu: float | None = None
    machine_cpu: float | None = None
    allocation_rate_mb_s: float | None = None


@dataclass
class Jvm:
    """A cell's JFR recording: `summary` is the whole recording's (analyse.jvm_for_data: gc,
    safepoint, cpu, allocation, threads, samples, hot_methods, attribution), rounded."""

    source: str
    summary: dict[str, Any]
    window: JvmWindow | None = None
    # issue 25: {event: read.jfr.stacks' folded result} inside the measured window; None
    # without a window (a schema-1 cell: no counts file says where the window is)
    stacks: dict[str, dict] | None = None


@dataclass(frozen=True)
class CpuWindow:
    """The server process's CPU during one repetition's window (issue 25's accounting)."""

    cpu_s: float                            # CPU seconds, all the process's threads
    source: str                             # "counts": counts.json's server.cpu_share_window;
                                            # "jfr": the recording's jdk.CPULoad (jvmUser+System)
    replies: int                            # the server's replies during the window


@dataclass(frozen=True)
class Spread:
    """One statistic across a cell's repetitions: min, median and max (a censored repetition
    sorts above every value)."""

    min: Percentile
    median: Percentile
    max: Percentile


@dataclass(frozen=True)
class ToolSummary:
    """The tool's own summary of the same invocation as a per-request file (run.yml `summary:`,
    issue 32), kept because the file leaves requests out: hey's CSV lists only the answered
    ones, its text summary counts the rest. Whole-run counts (a summary holds no times, so
    the window cannot cut it)."""

    source: str                             # the summary file, repo-relative
    requests: int                           # every request the tool finished, answered or not
    answered: int                           # of them, answered (any status): the file's rows
    failed: int                             # of them, no answer (timed out, refused, reset)
    timed_out: int                          # of the failed, the tool's timeout
    error_answers: int                      # answered with a status >= 400


@dataclass
class Imported:
    """Where a cell's numbers came from when it was read from a load tool's file (issue 23):
    the tool and what it timed, the load model and its evidence, what the file holds."""

    format: str                             # analysis.read.loadtools.FORMATS name
    tool: str
    version: str | None
    measure: str                            # the span a latency covers, in a phrase
    load_model: str                         # open | closed | unknown (file, else run.yml)
    load_model_evidence: str | None         # what shows it ("run.yml load_generator.model")
    per_request: bool                       # False: the tool's summary, shown as it is
    source: str                             # the tool's file, repo-relative
    converted: str | None = None            # the .hlog recorded from it (per-request files)
    window_text: str | None = None          # the cut applied (`window:`), in a sentence
    window_cut: tuple[int, int] | None = None   # requests it left out: before, after the window
    corrected: LatencyStats | None = None   # coordinated-omission corrected estimate
    co_interval_ms: float | None = None     # the expected interval of that correction
    skipped: int = 0                        # unreadable lines skipped
    spectrum: list[tuple[float, float, bool]] = field(default_factory=list)  # a summary's own
    summary: ToolSummary | None = None      # the tool's summary of the same run (`summary:`)
    duration_s: float | None = None         # the span the file states (a summary) or its sends
                                            # cover (per request); None where it says none
    hlog_text: str | None = field(default=None, repr=False)   # the converted .hlog, to write
    percentiles_note: str | None = None     # why the cell has no percentiles (issue 33:
                                            #   several generators' summaries)
    caveat: str | None = None               # what the format leaves out (loadtools.CAVEATS)
    leaves_out_failed: bool = False         # its rows hold no failed request (issue 32)


@dataclass
class GeneratorFigures:
    """One load generator's part of a cell measured by several (issue 33): its own file's
    figures, and whether it fell behind the others (derive/merge.py's thresholds)."""

    source: str                             # its file, repo-relative
    sent: int                               # requests it sent (in the window)
    rate_rps: float                         # sent / the window's length
    errors: int
    timed_out: int
    p99_ms: float | None                    # of its answered requests (None: a summary's)
    first_send_ms: float | None             # its first send (the log's start), epoch ms
    share_rps: float | None = None          # its part of the offered rate (or the mean rate)
    behind_rate: bool = False               # sent below RATE_SHORT_SHARE of its share
    behind_p99: bool = False                # p99 far above the other generators'
    first_send_spread_s: float | None = None   # the cell's generators' first sends, latest
                                            #   less earliest (None: a file has no send time)
    clocks_disagree: bool = False           # that spread is more than one interval


STEADY_CLASSES = ("flat", "warmup", "slowdown", "no-steady-state")


@dataclass(frozen=True)
class SteadyState:
    """Issue 32: whether a repetition's window measured the system's steady state or a
    transient (analysis/derive/steady.py says how). `cls` is one of STEADY_CLASSES, or None
    when the data cannot show it (a load tool's summary: "not known"). Times are seconds from
    the window's start, the series' own axis (t_s of Repetition.series)."""

    cls: str | None                         # flat | warmup | slowdown | no-steady-state | None
    steady_from_s: float | None             # where the steady part starts; None: flat, none
    window_s: float | None                  # the window's length the series covers
    changes_s: tuple[float, ...] = ()       # where a change that matters starts
    from_steady_part: bool = False          # the repetition's stats are its steady part's
    not_steady: bool = False                # kept out of knee, ceiling, comparison, regression
    saturated_queue: bool = False           # no steady state because the queue grows (or most
                                            #   requests time out): saturated
    sentence: str = ""                      # what a page prints about it


@dataclass
class Repetition:
    index: int                              # 1-based, as run.yml's `repetition`
    source: str                             # the .hlog, repo-relative
    stats: LatencyStats
    throughput_rps: float                   # see "Two rates" above
    accounting: Accounting
    series: list[dict[str, Any]]            # per interval: aggregate.interval_series
    jvm: Jvm | None = None
    gc_pauses: list[dict[str, float]] | None = None   # on the series' time axis, in its span
    host: HostHealth | None = None
    in_flight: InFlight | None = None
    goodput_rps: float | None = None        # schema 2; see "Two rates" above
    queue: Any = None                       # overload.QueueTest on the window's intervals
    timeout_ms: float | None = None         # the generator's timeout (censored values' bound)
    imported: Imported | None = None        # issue 23: read from a load tool's file
    cpu_window: CpuWindow | None = None     # issue 25: the server's CPU in the window
    steady: SteadyState | None = None       # issue 32: transient or steady state
    window_stats: LatencyStats | None = None   # the whole window's, when `stats` are the
                                            #   steady part's (steady.from_steady_part)
    generators: list[GeneratorFigures] | None = None   # issue 33: one per generator's file
    merged_text: str | None = field(default=None, repr=False)   # their logs added: the .hlog
                                            #   `source` names, to write (issue 33)


@dataclass
class Cell:
    """One (scenario, system, load point). With repetitions every statistic is the median of
    the repetitions' (`spread` gives min / median / max); counts are their sums."""

    scenario: str | None
    system: str
    load: str
    repetitions: list[Repetition]
    stats: LatencyStats
    throughput_rps: float                   # median of the repetitions'
    saturation: Saturation
    low_sample: list[str]                   # percentile names resting on < 10 samples
    accounting: Accounting
    drops: int | None = None                # timed_out + errors (schema 1: sent - count)
    drop_pct: float | None = None           # of sent
    spread: dict[str, Spread] = field(default_factory=dict)   # "p99" -> min / median / max
    throughput_spread: tuple[float, float, float] | None = None   # min / median / max
    goodput_spread: tuple[float, float, float] | None = None
    repetitions_disagree: bool = False
    in_flight: InFlight | None = None
    spectrum: list[tuple[float, float, bool]] = field(default_factory=list)  # (p, ms, censored)
    jvm: Jvm | None = None                  # the first repetition's (not additive)
    gc_pauses: list[dict[str, float]] | None = None
    host: HostHealth | None = None
    goodput_rps: float | None = None        # schema 2: median of the repetitions'
    time_split: Any = None                  # overload.TimeAccount: where the time went
    timeout_ms: float | None = None
    in_flight_cap: float | None = None      # load_generator.connections, when given
    kind: str = "load"
    imported: Imported | None = None        # issue 23: the first repetition's
    cpu_account: Any = None                 # cpu_accounting.CpuAccount: CPU per request
    steady_counts: dict[str, int] = field(default_factory=dict)   # issue 32: class -> reps
    not_steady: bool = False                # more than half its repetitions not steady: kept
                                            #   out of knee, ceiling, comparison, regression
    window_stats: LatencyStats | None = None   # the whole windows' figures, when `stats` are
                                            #   (some repetitions') steady parts'
    error_rate: Any = None                  # overload.ErrorRate of its accounting, or None
    ceiling_left_out: str | None = None     # why its throughput is not the system's measured
                                            #   ceiling although above it (overload's reason)
    flame: dict[str, Any] = field(default_factory=dict)   # issue 25: flame graph kind ->
                                            #   derive.flame_profiles.Profile

    @property
    def sources(self) -> list[str]:
        return [r.source for r in self.repetitions]


@dataclass
class System:
    id: str
    label: str
    index: int                              # position in run.yml (its colour in charts)
    concurrency_limit: int | None = None
    description: str | None = None
    predicted_ceiling_rps: float | None = None
    measured_peak_rps: float | None = None  # the measured ceiling (overload.CEILING_RULE)
    peak_vs_predicted_pct: float | None = None
    baseline_p50_ms: float | None = None    # p50 at the lowest load (the latency rule's base)
    family: str | None = None               # the server, e.g. "Jetty 12" (issue 11)
    model: str | None = None                # pool | virtual | event-loop (issue 11)


@dataclass
class LoadPoint:
    id: str
    offered_rate: float | None              # None: a closed-loop point (connections)
    clients: int | None
    duration_s: float
    connections: int | None = None          # issue 23: a closed loop's connections or users
    connections_key: str | None = None      # which of the two run.yml said
    duration_from_files: bool = False       # issue 33: run.yml gave none; the files agreed
    rate_per_client: float | None = None    # offered rate / clients (None: no clients, closed)

    @property
    def closed(self) -> bool:
        """A closed-loop point: its load is how many wait for replies, not a rate."""
        return self.offered_rate is None


@dataclass
class Missing:
    """A cell run.yml declares whose log is not there."""

    load: str
    system: str
    file: str
    scenario: str | None = None


@dataclass
class Scenario:
    """One workload of a run. Its systems are its own objects (the run's systems, in run.yml
    order, with this scenario's ceiling, peak and baseline); its load points are those run.yml
    lists for it, in that order (a run without scenarios: all of them)."""
    id: str | None                          # None: the implicit scenario of a run without any
    label: str | None
    description: str | None
    service_time_ms: float | None
    systems: list[System]
    load_points: list[LoadPoint]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)   # (load, system) -> cell
    missing: list[Missing] = field(default_factory=list)
    endpoint: str | None = None             # what the generator requested (issue 11)
    headline: str | None = None             # run.yml's load point for the summary table
    gc_tail: Any = None                     # derive.gc_tail.GcTail: longest GC pause against
                                            #   the tails; None without a JFR window

    def cell(self, load: str, system: str) -> Cell | None:
        return self.cells.get((load, system))

    def grid(self) -> Iterator[tuple[LoadPoint, list[tuple[System, Cell | None]]]]:
        """Load points in run.yml order, each with every system and its cell (None: none)."""
        for lp in self.load_points:
            yield lp, [(s, self.cells.get((lp.id, s.id))) for s in self.systems]

    def measured(self) -> list[Cell]:
        """The cells there are, load point by load point, systems in run.yml order."""
        return [c for _, row in self.grid() for _, c in row if c is not None]


@dataclass
class Run:
    id: str
    title: str
    date: str
    description: str | None
    tags: list[str]
    value_unit: str
    manifest_path: str                      # run.yml, repo-relative
    environment: dict[str, Any]
    load_generator: dict[str, Any]
    jfr_attribution: list[dict[str, str]]
    scenarios: list[Scenario]
    # issue 25: "handler" / "coordination" -> jfr_attribution labels (manifest.cpu_accounting)
    cpu_accounting: dict[str, tuple[str, ...]] = field(default_factory=dict)
    warnings: list[str] = field(default_factory=list)
    series: str | None = None
    version: str | None = None
    repetitions: int = 1                    # the most repetitions of any cell in run.yml
    method: Any = None                      # manifest.Method (schema 2): how it was measured
    knee_search: Any = None                 # read.knee.KneeSearch: the run's knee.json (issue 32)
    flame_pairs: list[Any] = field(default_factory=list)   # derive.flame_profiles.FlamePair:
                                            #   the differential flame graphs (issue 25)
    summary_load: Any = None                # derive.summary_load.summary_points: each
                                            #   scenario's summary load point, one load or not
    summary_marks: Any = None               # derive.summary_marks.SummaryMarks: the summary
                                            #   table's best values and p99 order

    @property
    def scenario(self) -> Scenario:
        """The run's one scenario, for callers that handle one (a run without `scenarios:`
        has exactly one, the implicit one); raises for a run with several."""
        if len(self.scenarios) != 1:
            raise ValueError(f"run {self.id} has {len(self.scenarios)} scenarios")
        return self.scenarios[0]

    @property
    def has_scenarios(self) -> bool:
        """Whether run.yml declares scenarios (the pages are then per scenario)."""
        return any(s.id is not None for s in self.scenarios)

    def cells(self) -> list[Cell]:
        return [c for s in self.scenarios for c in s.measured()]
