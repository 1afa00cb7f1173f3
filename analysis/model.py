"""The run model: what one analysed run is, typed, built once by `aggregate` and read by every
writer (datafiles, charts, pages, new-post, CSV).

    Run -> Scenario -> (System x LoadPoint) -> Cell -> Repetition

A run without `scenarios:` in its run.yml is one implicit scenario (`id` None). A cell is one
(scenario, system, load point); its repetitions are the measurements of it, and the cell's own
statistics are those of all repetitions together (their histograms added). Values are in
milliseconds (requests/s for rates) at full precision: rounding and formatting belong to the
writers (vocabulary.py says how).

Slots that no reader fills yet are None, and writers leave them out; they are here so that the
open issues extend the model instead of re-joining it:
- censored percentiles and request accounting (issue 10): `Percentile.at_least_ms`,
  `Accounting.completed/not_sent`, `Saturation.reason`, `InFlight.measured_*`, `HostHealth`,
  `JvmWindow`;
- scenarios (issue 11): `Run.scenarios` with ids;
- series and version for history (issue 12): `Run.series`, `Run.version`;
- JMH results (issue 13): `Cell.kind == "jmh"` with `Cell.jmh`.
docs/data-format.md ("The run model") says where each slot is serialised.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterator

CELL_KINDS = ("load", "jmh")
SATURATION_REASONS = ("throughput", "queue", "latency")


@dataclass(frozen=True)
class Percentile:
    """A latency percentile: a measured value, or - when more requests than the percentile
    leaves timed out - only a lower bound, the timeout (censored). At most one is set; both
    None: no samples."""

    value_ms: float | None = None
    at_least_ms: float | None = None

    @property
    def censored(self) -> bool:
        return self.at_least_ms is not None


@dataclass
class LatencyStats:
    """The statistics of one histogram (a repetition's, or a cell's repetitions added)."""

    count: int
    percentiles: dict[str, Percentile]      # vocabulary name ("p50") -> percentile
    max_ms: float | None
    mean_ms: float | None
    stddev_ms: float | None

    def value(self, key: str) -> float | None:
        """A statistic by its data key: `p99_ms` (the value; None when censored), `max_ms`..."""
        name = key[:-3] if key.endswith("_ms") else key
        if name in self.percentiles:
            return self.percentiles[name].value_ms
        return getattr(self, key)


@dataclass
class Accounting:
    """What happened to the requests of one repetition (sums over a cell's repetitions).
    Issue 10's identity: sent = completed + timed_out + errors; not_sent counts requests the
    generator fell behind on. None: not recorded (today run.yml gives sent, errors and
    timeouts per cell; timed_out is serialised as `timeouts`)."""

    sent: int | None = None
    completed: int | None = None
    timed_out: int | None = None
    errors: int | None = None
    not_sent: int | None = None


@dataclass
class Saturation:
    """Whether a cell's latencies describe a queue rather than the service, and why:
    `throughput` (achieved < 90 % of offered: the only rule today), `queue` or `latency`."""

    saturated: bool
    reason: str | None = None


@dataclass
class InFlight:
    """Requests in the server at once: Little's law (achieved rate x mean latency; only true of
    a steady system), against the generator's cap, and as measured by the generator."""

    littles_law: float
    cap: float | None = None
    consistent: bool | None = None          # littles_law within the cap (+5 %)
    measured_mean: float | None = None
    measured_max: float | None = None


@dataclass
class HostHealth:
    """Whether the host was free for the measurement (shares of one machine, 0-1)."""

    machine_cpu: float | None = None
    jvm_cpu: float | None = None
    generator_cpu: float | None = None
    send_lag_ms: float | None = None
    host_busy: bool | None = None


@dataclass
class JvmWindow:
    """JVM figures inside the measured window only (the summary covers the whole recording)."""

    gc_pause_max_ms: float | None = None
    gc_pause_total_ms: float | None = None
    gc_count: int | None = None
    safepoint_total_ms: float | None = None
    jvm_cpu: float | None = None
    allocation_rate_mb_s: float | None = None


@dataclass
class Jvm:
    """A cell's JFR recording: `summary` is the whole recording's (analyse.jvm_for_data: gc,
    safepoint, cpu, allocation, threads, samples, hot_methods, attribution), rounded."""

    source: str
    summary: dict[str, Any]
    window: JvmWindow | None = None


@dataclass
class Spread:
    """One statistic across a cell's repetitions."""

    min: float | None
    median: float | None
    max: float | None


@dataclass
class JmhMetric:
    """One JMH metric (the primary one, or a secondary one such as `gc.alloc.rate.norm`), as
    JMH reports it. None where JMH wrote NaN or nothing (one iteration has no error)."""

    score: float | None
    error: float | None = None              # half-width of JMH's 99.9 % confidence interval
    confidence: tuple[float, float] | None = None
    unit: str | None = None
    percentiles: dict[str, float] = field(default_factory=dict)   # JMH's keys: "50.0", "99.9"
    raw_data: list[list[float]] = field(default_factory=list)     # fork -> iteration -> score
    # sample mode: fork -> iteration -> [(value, count)], the values in `unit`
    raw_histogram: list[list[list[tuple[float, int]]]] = field(default_factory=list)
    samples: int | None = None              # CSV/text "Cnt" when no raw data says it
    approximate: bool = False               # text format printed only "≈ 10⁻⁴"


@dataclass
class JmhSettings:
    """How JMH ran a benchmark: one entry's run settings (None where the file does not say:
    JMH 1.19 lacks the JVM fields; CSV carries only `threads`, a bare results table nothing,
    JMH's console output all but the batch sizes)."""

    threads: int | None = None
    forks: int | None = None
    warmup_iterations: int | None = None
    warmup_time: str | None = None          # as JMH writes it: "1 s", "300 ms"
    warmup_batch_size: int | None = None
    measurement_iterations: int | None = None
    measurement_time: str | None = None
    measurement_batch_size: int | None = None
    jmh_version: str | None = None
    jvm: str | None = None
    jvm_args: list[str] = field(default_factory=list)
    jdk_version: str | None = None
    vm_name: str | None = None
    vm_version: str | None = None
    blackhole_mode: str | None = None       # only JMH's console output says ("compiler")


@dataclass
class JmhResult:
    """A JMH benchmark result (a cell of kind `jmh`; issue 13): one benchmark x mode x params.

    `score`, `error`, `unit` repeat the primary metric's; `forks` are the per-fork means (of
    the iterations' scores, or of the sampled values in sample mode); `secondary` maps each
    secondary metric's name - without the "·" JMH before 1.33 put in front - to its score,
    and `secondary_metrics` to the whole metric. Read by analysis/read/jmh.py."""

    benchmark: str
    mode: str
    params: dict[str, str] = field(default_factory=dict)
    score: float | None = None
    error: float | None = None
    unit: str | None = None
    forks: list[float] = field(default_factory=list)
    secondary: dict[str, float | None] = field(default_factory=dict)
    primary: JmhMetric | None = None
    secondary_metrics: dict[str, JmhMetric] = field(default_factory=dict)
    settings: JmhSettings = field(default_factory=JmhSettings)
    source: str | None = None               # file:line (JSON, CSV, text) of the entry


@dataclass
class Repetition:
    index: int                              # 1-based, as run.yml's `repetition`
    source: str                             # the .hlog, repo-relative
    stats: LatencyStats
    achieved_rate: float
    accounting: Accounting
    series: list[dict[str, Any]]            # per interval: aggregate.interval_series
    jvm: Jvm | None = None
    gc_pauses: list[dict[str, float]] | None = None   # on the series' time axis
    host: HostHealth | None = None
    in_flight: InFlight | None = None


@dataclass
class Cell:
    scenario: str | None
    system: str
    load: str
    repetitions: list[Repetition]
    stats: LatencyStats
    achieved_rate: float
    saturation: Saturation
    low_sample: list[str]                   # percentile names resting on < 10 samples
    accounting: Accounting
    drops: int | None = None                # sent - count, when sent is known
    drop_pct: float | None = None
    spread: dict[str, Spread] = field(default_factory=dict)   # "p99_ms", "achieved_rate"
    in_flight: InFlight | None = None
    spectrum: list[tuple[float, float]] = field(default_factory=list)
    jvm: Jvm | None = None                  # the first repetition's (not additive)
    gc_pauses: list[dict[str, float]] | None = None
    host: HostHealth | None = None
    kind: str = "load"
    jmh: JmhResult | None = None

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
    measured_peak_rps: float | None = None
    peak_vs_predicted_pct: float | None = None


@dataclass
class LoadPoint:
    id: str
    offered_rate: float
    clients: int | None
    duration_s: float


@dataclass
class Missing:
    """A cell run.yml declares whose log is not there."""

    load: str
    system: str
    file: str


@dataclass
class Scenario:
    id: str | None                          # None: the implicit scenario of a run without any
    label: str | None
    description: str | None
    service_time_ms: float | None
    systems: list[System]
    load_points: list[LoadPoint]
    cells: dict[tuple[str, str], Cell] = field(default_factory=dict)   # (load, system) -> cell
    missing: list[Missing] = field(default_factory=list)

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
    warnings: list[str] = field(default_factory=list)
    series: str | None = None
    version: str | None = None
    repetitions: int = 1                    # the most repetitions of any cell in run.yml

    @property
    def scenario(self) -> Scenario:
        """The run's one scenario (every run has exactly one until issue 11)."""
        if len(self.scenarios) != 1:
            raise ValueError(f"run {self.id} has {len(self.scenarios)} scenarios")
        return self.scenarios[0]

    def cells(self) -> list[Cell]:
        return [c for s in self.scenarios for c in s.measured()]
