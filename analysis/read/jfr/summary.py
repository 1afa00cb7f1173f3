"""The per-recording JVM summary, fed event by event by either reader (binary or JSON export).

Everything here is plain arithmetic on values already decoded; the readers decide what an event
is, this module decides what the report says about them. State kept across chunks is small and
does not grow with the recording except the GC pause timeline (one pair per pause).
"""
from __future__ import annotations

import math
import re
from collections import Counter

NS_PER_MS = 1_000_000
MIB = 1 << 20
HOT_METHODS = 20
UNMATCHED_LABEL = "other"
# The event types whose recording settings (jdk.ActiveSetting) the summary reports: result()
# reads their thresholds, periods and whether they were enabled, and no other's (so the readers
# may leave the others' settings out: a recording has some 400).
SETTINGS_REPORTED = frozenset({"jdk.SafepointBegin", "jdk.ThreadPark", "jdk.JavaMonitorEnter",
                               "jdk.ExecutionSample"})


def percentile_nearest_rank(values: list[float], pct: float) -> float | None:
    """The smallest value with at least pct % of values at or below it (nearest rank)."""
    if not values:
        return None
    ordered = sorted(values)
    rank = max(1, math.ceil(pct / 100.0 * len(ordered)))
    return ordered[rank - 1]


def parse_threshold_ms(text: str | None) -> float | None:
    """'20 ms' / '10 s' / '0 ns' / '100 us' as JFR settings write them -> milliseconds."""
    if not text:
        return None
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(ns|us|µs|ms|s|m|h|d)\s*", text)
    if not m:
        return None
    scale = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3, "m": 6e4, "h": 3.6e6,
             "d": 8.64e7}[m.group(2)]
    return float(m.group(1)) * scale


def jdk_label(name: str | None, version: str | None) -> str | None:
    """The JVM's name and version from jdk.JVMInformation, built from the fields that exist:

        'OpenJDK 64-Bit Server VM' + 'OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1) for
        linux-amd64 JRE (17.0.15+6-Debian-1), built on ...' -> 'OpenJDK 64-Bit Server VM
        17.0.15+6-Debian-1' (Oracle's 'Java HotSpot(TM) 64-Bit Server VM (21.0.1+12-LTS-29)
        ...' alike: the version is the parentheses after the name, not the first ones);
        async-profiler's bare '17.0.9+9' -> 'OpenJDK 64-Bit Server VM 17.0.9+9', or
        'JVM 17.0.9+9' without a name; a name alone is the label."""
    name = " ".join((name or "").split()) or None
    version = " ".join((version or "").split()) or None
    if version is None:
        return name
    if name and version.startswith(name):
        vm, rest = name, version[len(name):].strip()
    elif " (" in version:       # no name field: the VM name is what comes before " ("
        vm, rest = version.split(" (", 1)
        vm, rest = (name or vm), "(" + rest
    else:                       # a bare version (async-profiler)
        vm, rest = name, version
    if rest.startswith("("):
        close = rest.find(")")
        rest = rest[1:close] if close > 0 else rest[1:]
    rest = rest.strip()
    if not rest:
        return vm
    return f"{vm or 'JVM'} {rest}"


# What a reader passes on from a decoded value: the type the summary expects, else None
# (a damaged recording or export can give a field another type).
def as_int(v):
    return v if type(v) is int else None


def as_number(v):
    return float(v) if type(v) in (int, float) and math.isfinite(v) else None


def as_str(v):
    return v if isinstance(v, str) else None


def method_label(cls: str | None, name: str | None) -> str:
    """'java/util/HashMap' + 'get' -> 'java.util.HashMap.get' (placeholders for what is absent)."""
    return f"{(cls or '<unknown class>').replace('/', '.')}.{name or '<unknown>'}"


def _r(x, digits=6):
    return None if x is None else round(float(x), digits)


# Chunks closer than this count as one stretch of recording (the JVM starts a chunk where the
# last one ended, give or take the rotation's microseconds).
GAP_NS = 1_000_000_000

# The figures of the warm-up (everything before a window) kept beside the window's.
WARMUP_KEYS = ("gc", "safepoint", "cpu", "allocation_rate_mb_s", "threads", "samples")


class Summary:
    def __init__(self, attribution: list[tuple[str, str]] | None = None,
                 window: tuple[int, int] | None = None):
        self.attribution = [(re.compile(p), label) for p, label in (attribution or [])]
        # (start, end) epoch ns: count only events that start in [start, end); the ones before
        # go to `warmup`, the ones after (the drain) nowhere.
        self.window = window
        self.warmup = Summary() if window is not None else None
        self.gc_count = 0
        self.gc_pause_total_ns = 0
        self.gc_pause_max_ns = 0
        self.gc_events: list[tuple[int, int]] = []      # (start ns, sumOfPauses ns)
        self.phase_pauses: list[tuple[int, int]] = []   # (start ns, duration ns)
        self.heap_after_max = None
        self.heap_after_sum = 0
        self.heap_after_count = 0
        self._heap_pending: list[tuple[object, int]] = []
        self.safepoint_count = 0
        self.safepoint_total_ns = 0
        self.cpu_n = 0
        self.cpu_sums = [0.0, 0.0, 0.0]
        self.allocation_weight = 0
        self.allocation_events = 0
        self.park_ns = 0
        self.park_count = 0
        self.monitor_ns = 0
        self.monitor_count = 0
        self.thresholds: dict[str, list[float]] = {}
        self.periods: dict[str, list[float]] = {}
        self.enabled: dict[str, set] = {}
        self.sample_count = 0
        self.samples_unresolved = 0
        self.samples_truncated = 0
        self.self_counts: Counter = Counter()
        self.total_counts: Counter = Counter()
        self.label_counts: Counter = Counter()
        self._label_cache: dict[str, str | None] = {}
        self.jvm_name = None
        self.jvm_version = None
        self.start_ns = None
        self.covered_until_ns = None
        self.truncated = False
        self.chunks = 0
        # Per chunk [start ns, covered until ns, (file, offset)]; joined by close_chunks.
        self.spans: list[list] = []
        self.merged_spans: list[tuple[int, int]] | None = None
        # For a `jfr print --json` export: the event types it holds (None for a recording,
        # where absent events mean "not recorded", not "not exported").
        self.export_types: set[str] | None = None
        self.warnings: list[str] = []
        self.warning_count = 0
        self.damage_note = None

    # -- chunk bookkeeping ------------------------------------------------------------------
    def note_chunk(self, header, complete: bool, where: tuple[str, int] | None = None):
        """A chunk starts (`where`: its file and byte offset, for the gap warning)."""
        self.chunks += 1
        if self.start_ns is None or header.start_nanos < self.start_ns:
            self.start_ns = header.start_nanos
        if not complete:
            self.truncated = True
        self.spans.append([header.start_nanos, header.start_nanos, where])

    def cover_until(self, ns: int):
        if self.covered_until_ns is None or ns > self.covered_until_ns:
            self.covered_until_ns = ns
        if self.spans and ns > self.spans[-1][1]:
            self.spans[-1][1] = ns

    def close_chunks(self):
        """Join the chunks' covered spans (a chunk starting within GAP_NS of where the recording
        has data joins it) and warn for each gap: chunks of different recordings or days
        concatenated (`cat a.jfr b.jfr`) cover only their own spans, and the duration, the
        window's coverage and every rate count only those."""
        merged: list[list] = []
        for start, end, where in sorted(self.spans, key=lambda sp: (sp[0], sp[1])):
            if merged and start <= merged[-1][1] + GAP_NS:
                merged[-1][1] = max(merged[-1][1], end)
                continue
            if merged:
                path, offset = where or ("?", 0)
                self.warn(path, offset, f"chunk starts {(start - merged[-1][1]) / 1e9:.3f} s "
                          f"after the data before it ends (recordings joined?); the gap is "
                          f"left out of the duration")
            merged.append([start, end])
        self.merged_spans = [(a, b) for a, b in merged]

    def damage(self, path, offset, what):
        self.truncated = True
        self.damage_note = f"{path}: byte {offset}: {what}"

    def warn(self, path, offset, what):
        self.warning_count += 1
        if len(self.warnings) < 20:  # enough to see the problem; the count says the rest
            self.warnings.append(f"{path}: byte {offset}: {what}")

    def route(self, start_ns):
        """The summary an event starting at start_ns (epoch ns) counts in: this one without a
        window; with one, this one inside it, `warmup` before it, None after it or untimed."""
        if self.window is None:
            return self
        if start_ns is None:
            return None
        if start_ns < self.window[0]:
            return self.warmup
        return self if start_ns < self.window[1] else None

    # -- events ---------------------------------------------------------------------------------
    def garbage_collection(self, start_ns, sum_of_pauses_ns, longest_pause_ns):
        self.gc_count += 1
        if sum_of_pauses_ns is not None:
            self.gc_pause_total_ns += sum_of_pauses_ns
            if start_ns is not None:
                self.gc_events.append((start_ns, sum_of_pauses_ns))
        if longest_pause_ns is not None and longest_pause_ns > self.gc_pause_max_ns:
            self.gc_pause_max_ns = longest_pause_ns

    def gc_pause(self, start_ns, duration_ns):
        if start_ns is not None and duration_ns is not None:
            self.phase_pauses.append((start_ns, duration_ns))

    def heap_summary(self, when, heap_used):
        if heap_used is not None:
            self._heap_pending.append((when, heap_used))

    def resolve_heap_when(self, lookup):
        for when, used in self._heap_pending:
            if isinstance(when, tuple):
                when = lookup(when[2])
            if when == "After GC":
                self.heap_after_count += 1
                self.heap_after_sum += used
                if self.heap_after_max is None or used > self.heap_after_max:
                    self.heap_after_max = used
        self._heap_pending = []

    def safepoint(self, start_ns, duration_ns):
        self.safepoint_count += 1
        self.safepoint_total_ns += duration_ns or 0

    def cpu(self, jvm_user, jvm_system, machine):
        if None in (jvm_user, jvm_system, machine):
            return
        self.cpu_n += 1
        self.cpu_sums[0] += jvm_user
        self.cpu_sums[1] += jvm_system
        self.cpu_sums[2] += machine

    def allocation(self, weight):
        if weight is not None:
            self.allocation_events += 1
            self.allocation_weight += weight

    def park(self, duration_ns):
        self.park_count += 1
        self.park_ns += duration_ns or 0

    def parks(self, total_ns: int, count: int):
        """`count` parks of `total_ns` together (stacks.FoldingReader's sums a chunk)."""
        self.park_count += count
        self.park_ns += total_ns

    def monitor_enter(self, duration_ns):
        self.monitor_count += 1
        self.monitor_ns += duration_ns or 0

    def setting(self, event_name, setting_name, value):
        if setting_name == "threshold":
            ms = parse_threshold_ms(value)
            if ms is not None:
                self.thresholds.setdefault(event_name, []).append(ms)
        elif setting_name == "period":
            ms = parse_threshold_ms(value)     # "everyChunk" and the like: not a sampling period
            if ms is not None:
                self.periods.setdefault(event_name, []).append(ms)
        elif setting_name == "enabled":
            self.enabled.setdefault(event_name, set()).add(value)

    def jvm(self, name, version):
        self.jvm_name = name or self.jvm_name
        self.jvm_version = version or self.jvm_version

    def samples(self, frames: tuple[str, ...] | None, count: int, truncated: bool = False):
        """`count` execution samples with this stack (leaf first); None: stack not resolvable."""
        self.sample_count += count
        if frames is None:
            self.samples_unresolved += count
            return
        if truncated:
            self.samples_truncated += count
        if frames:
            self.self_counts[frames[0]] += count
        for m in set(frames):
            self.total_counts[m] += count
        if self.attribution:
            self.label_counts[self._label(frames)] += count

    def _label(self, frames):
        for frame in frames:  # leaf to root: the first frame that matches a pattern decides
            label = self._label_cache.get(frame, "")
            if label == "":
                label = None
                for pattern, name in self.attribution:
                    if pattern.fullmatch(frame):
                        label = name
                        break
                self._label_cache[frame] = label
            if label is not None:
                return label
        return UNMATCHED_LABEL

    # -- the result -----------------------------------------------------------------------
    def covered_spans(self) -> list[tuple[int, int]]:
        """(start, end) epoch ns of the stretches the recording has data for."""
        if self.merged_spans:
            return self.merged_spans
        if self.start_ns is None or self.covered_until_ns is None:
            return []
        return [(self.start_ns, self.covered_until_ns)]

    def _threshold(self, event_name, settings=None):
        values = (self.thresholds if settings is None else settings).get(event_name)
        # With several recordings running, the JVM records an event when any of them wants it:
        # the lowest threshold (or period) is the one in effect.
        return min(values) if values else None

    def result(self, allocation_span_s: float | None = None) -> dict:
        """The summary (see analysis/read/jfr/__init__.py). The allocation rate is over
        `allocation_span_s` when given, else over the window's covered part, else the recording."""
        if self.phase_pauses:
            pauses = sorted(self.phase_pauses)
            pause_source = "jdk.GCPhasePause"
        else:
            pauses = sorted(self.gc_events)
            pause_source = "jdk.GarbageCollection"
        pause_ms = [d / NS_PER_MS for _, d in pauses]
        duration_s = None
        spans = self.covered_spans()
        if spans:
            duration_s = sum(b - a for a, b in spans) / 1e9
        window = warmup = None
        if self.window is not None and duration_s is not None:
            w0, w1 = self.window
            covered_s = sum(max(0, min(w1, b) - max(w0, a)) for a, b in spans) / 1e9
            window = {"start_epoch_s": _r(w0 / 1e9), "end_epoch_s": _r(w1 / 1e9),
                      "covered_s": _r(covered_s)}
            before_s = sum(max(0, min(w0, b) - a) for a, b in spans) / 1e9
            # The recording's settings (thresholds, enabled events) hold for the warm-up too.
            self.warmup.thresholds, self.warmup.enabled = self.thresholds, self.enabled
            self.warmup.periods = self.periods
            full = self.warmup.result(allocation_span_s=before_s)
            warmup = {"duration_s": _r(before_s), **{k: full[k] for k in WARMUP_KEYS}}
            allocation_span_s = covered_s
        span_s = duration_s if allocation_span_s is None else allocation_span_s
        alloc_rate = None
        # With a window, no sample inside it while the recording has some means a rate near 0
        # (the event is throttled), not "not recorded".
        recorded = self.allocation_events or (self.warmup is not None
                                              and self.warmup.allocation_events)
        if recorded and span_s and span_s > 0:
            alloc_rate = self.allocation_weight / MIB / span_s
        # Percentages are of the samples whose stacks resolved (a chunk cut before its constant
        # pool leaves some without); `samples.unresolved` says how many were left out.
        n = self.sample_count - self.samples_unresolved
        hot = sorted(self.self_counts.keys() | self.total_counts.keys(),
                     key=lambda m: (-self.self_counts[m], -self.total_counts[m], m))
        by_total = sorted(self.total_counts.keys(),
                          key=lambda m: (-self.total_counts[m], -self.self_counts[m], m))

        def row(m):
            return {"method": m,
                    "self_samples": self.self_counts[m],
                    "self_pct": _r(100.0 * self.self_counts[m] / n, 3),
                    "total_samples": self.total_counts[m],
                    "total_pct": _r(100.0 * self.total_counts[m] / n, 3)}
        hot_methods = [row(m) for m in hot[:HOT_METHODS]] if n else []
        hot_methods_by_total = [row(m) for m in by_total[:HOT_METHODS]] if n else []
        attribution = None
        if self.attribution:
            order = [label for _, label in self.attribution]
            labels = list(dict.fromkeys(order + [UNMATCHED_LABEL]))
            attribution = [{"label": label, "samples": self.label_counts[label],
                            "pct": _r(100.0 * self.label_counts[label] / n, 3) if n else None}
                           for label in labels]
        cpu = {"jvm_user": None, "jvm_system": None, "machine": None, "samples": self.cpu_n}
        if self.cpu_n:
            cpu.update(jvm_user=_r(self.cpu_sums[0] / self.cpu_n),
                       jvm_system=_r(self.cpu_sums[1] / self.cpu_n),
                       machine=_r(self.cpu_sums[2] / self.cpu_n))
        result = {
            "schema_version": 1,
            "source": "recording" if self.export_types is None else "jfr print --json export",
            "jdk": jdk_label(self.jvm_name, self.jvm_version),
            "start_epoch_s": _r(self.start_ns / 1e9) if self.start_ns is not None else None,
            "duration_s": _r(duration_s),
            "covered_until": _r(self.covered_until_ns / 1e9)
            if self.covered_until_ns is not None else None,
            "truncated": self.truncated,
            "damage": self.damage_note,
            "chunks": self.chunks,
            "gaps": [[_r(a / 1e9), _r(b / 1e9)] for (_, a), (b, _) in zip(spans, spans[1:])],
            "gc": {
                "count": self.gc_count,
                "pause_total_ms": _r(self.gc_pause_total_ns / NS_PER_MS),
                "pause_max_ms": _r(self.gc_pause_max_ns / NS_PER_MS),
                "pause_p99_ms": _r(percentile_nearest_rank(pause_ms, 99)),
                "pause_count": len(pauses),
                "pause_source": pause_source,
                "pauses": [[_r(t / 1e9), _r(d / NS_PER_MS)] for t, d in pauses],
                "heap_used_after_gc_max_mb": _r(self.heap_after_max / MIB)
                if self.heap_after_max is not None else None,
                "heap_used_after_gc_mean_mb": _r(self.heap_after_sum / self.heap_after_count
                                                 / MIB) if self.heap_after_count else None,
            },
            "safepoint": {
                "count": self.safepoint_count,
                "total_ms": _r(self.safepoint_total_ns / NS_PER_MS),
                "threshold_ms": self._threshold("jdk.SafepointBegin"),
                "recorded": "true" in self.enabled.get("jdk.SafepointBegin", ())
                or self.safepoint_count > 0,
            },
            "cpu": cpu,
            "allocation_rate_mb_s": _r(alloc_rate, 3),
            "allocation_samples": self.allocation_events,
            "allocation_bytes": self.allocation_weight if self.allocation_events else None,
            "threads": {
                "parked_ms": _r(self.park_ns / NS_PER_MS),
                "park_events": self.park_count,
                "park_threshold_ms": self._threshold("jdk.ThreadPark"),
                "monitor_blocked_ms": _r(self.monitor_ns / NS_PER_MS),
                "monitor_events": self.monitor_count,
                "monitor_threshold_ms": self._threshold("jdk.JavaMonitorEnter"),
            },
            "samples": {"count": self.sample_count, "unresolved": self.samples_unresolved,
                        "truncated_stacks": self.samples_truncated,
                        "period_ms": self._threshold("jdk.ExecutionSample", self.periods)},
            "hot_methods": hot_methods,
            "hot_methods_by_total": hot_methods_by_total,
            "attribution": attribution,
            "warnings": self.warnings,
            "warning_count": self.warning_count,
        }
        if self.window is not None:
            result["window"] = window
            result["warmup"] = warmup
        if self.export_types is not None:
            _blank_unexported(result, self.export_types)
        return result


def _blank_unexported(result: dict, exported: set[str]) -> None:
    """In an export, a missing event type says nothing about the JVM: those figures are None."""
    if "jdk.SafepointBegin" not in exported:
        result["safepoint"].update(count=None, total_ms=None, recorded=False)
    if "jdk.ObjectAllocationSample" not in exported:
        result["allocation_samples"] = None
    if "jdk.ThreadPark" not in exported:
        result["threads"].update(parked_ms=None, park_events=None)
    if "jdk.JavaMonitorEnter" not in exported:
        result["threads"].update(monitor_blocked_ms=None, monitor_events=None)
    if "jdk.ExecutionSample" not in exported:
        result["samples"]["count"] = None
    if "jdk.GarbageCollection" not in exported:
        result["gc"].update(count=None, pause_total_ms=None, pause_max_ms=None)
