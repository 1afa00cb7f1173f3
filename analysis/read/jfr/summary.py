"""What one JFR recording held, event by event, as either reader (binary or JSON export) feeds it:
counts, sums, the GC pause timeline, the settings in effect, the samples' methods.

The readers decide what an event is; this module only records it (Summary), and
derive/jvm_summary.py says what the report makes of it (percentiles, means, rates, shares, the
hot methods). State kept across chunks is small and does not grow with the recording except the
GC pause timeline (one pair per pause).
"""
from __future__ import annotations

import functools
import math
import re
from collections import Counter

UNMATCHED_LABEL = "other"
# The event types whose recording settings (jdk.ActiveSetting) the summary reports:
# derive/jvm_summary.py reads their thresholds, periods and whether they were enabled, and no other's (so the readers
# may leave the others' settings out: a recording has some 400).
SETTINGS_REPORTED = frozenset({"jdk.SafepointBegin", "jdk.ThreadPark", "jdk.JavaMonitorEnter",
                               "jdk.ExecutionSample"})


# (~17 settings a recording, the same few texts in every recording: one regex match each)
@functools.lru_cache(maxsize=256)
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


# (a pure function of two strings that every recording of one JVM shares, asked 7 times a
# recording by the summary and each event's folded stacks: computed once per distinct pair)
@functools.lru_cache(maxsize=64)
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


# Chunks closer than this count as one stretch of recording (the JVM starts a chunk where the
# last one ended, give or take the rotation's microseconds).
GAP_NS = 1_000_000_000
# Warnings kept word for word: enough to see the problem; the count says the rest.
WARNINGS_KEPT = 20
# Frame -> attribution label, per attribution: shared by the summaries made with the same
# patterns (a run's 36 recordings, and the runs a worker builds, name the same ~1,500 methods:
# each matched once against the patterns, not once a recording). Emptied past this many.
_LABELS: dict[tuple, dict[str, str | None]] = {}
LABELS_KEPT = 200_000


def _labels_for(attribution) -> dict[str, str | None]:
    key = tuple((pattern, label) for pattern, label in attribution or ())
    labels = _LABELS.get(key)
    if labels is None or len(labels) > LABELS_KEPT:
        if sum(map(len, _LABELS.values())) > LABELS_KEPT:
            _LABELS.clear()
        labels = _LABELS[key] = {}
    return labels


class Summary:
    def __init__(self, attribution: list[tuple[str, str]] | None = None,
                 window: tuple[int, int] | None = None, names_methods: bool = True):
        self.attribution = [(re.compile(p), label) for p, label in (attribution or [])]
        # (start, end) epoch ns: count only events that start in [start, end); the ones before
        # go to `warmup`, the ones after (the drain) nowhere.
        self.window = window
        # No figure of the warm-up names a method (derive/jvm_summary.py's WARMUP_KEYS): its
        # samples are counted, and their stacks not named (the start-up's stacks are half a
        # run's distinct ones).
        self.names_methods = names_methods
        self.warmup = Summary(names_methods=False) if window is not None else None
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
        self._label_cache = _labels_for(attribution)
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
        # Whether damage_note was note_unfinished's (an earlier chunk's note would win: merge).
        self.damage_note_unless_earlier = False
        # The jdk.CPULoad values (jvm user, jvm system, machine) as cpu() took them, kept only
        # where this summary is to be merged (merge adds them again, in order: float sums
        # depend on the order of the additions).
        self.cpu_log: list[tuple[float, float, float]] | None = None

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

    def merge(self, later: "Summary"):
        """Take in `later`: a summary (made with the same attribution and window, with a
        cpu_log) of the chunks that follow this one's, before close_chunks. The result is what
        reading all the chunks into this summary, one after another, gives."""
        if later.cpu_log is None:
            raise ValueError("merge needs the later summary's cpu_log")
        self.gc_count += later.gc_count
        self.gc_pause_total_ns += later.gc_pause_total_ns
        self.gc_pause_max_ns = max(self.gc_pause_max_ns, later.gc_pause_max_ns)
        self.gc_events += later.gc_events
        self.phase_pauses += later.phase_pauses
        if later.heap_after_max is not None and (self.heap_after_max is None
                                                 or later.heap_after_max > self.heap_after_max):
            self.heap_after_max = later.heap_after_max
        self.heap_after_sum += later.heap_after_sum
        self.heap_after_count += later.heap_after_count
        self._heap_pending += later._heap_pending
        self.safepoint_count += later.safepoint_count
        self.safepoint_total_ns += later.safepoint_total_ns
        for values in later.cpu_log:
            self.cpu(*values)
        self.allocation_weight += later.allocation_weight
        self.allocation_events += later.allocation_events
        self.park_ns += later.park_ns
        self.park_count += later.park_count
        self.monitor_ns += later.monitor_ns
        self.monitor_count += later.monitor_count
        for mine, theirs in ((self.thresholds, later.thresholds),
                             (self.periods, later.periods)):
            for event_name, values in theirs.items():
                mine.setdefault(event_name, []).extend(values)
        for event_name, values in later.enabled.items():
            self.enabled.setdefault(event_name, set()).update(values)
        self.sample_count += later.sample_count
        self.samples_unresolved += later.samples_unresolved
        self.samples_truncated += later.samples_truncated
        # (Counter.update adds counts; keys new here follow in `later`'s order, as one by one)
        self.self_counts.update(later.self_counts)
        self.total_counts.update(later.total_counts)
        self.label_counts.update(later.label_counts)
        self._label_cache.update(later._label_cache)
        self.jvm(later.jvm_name, later.jvm_version)
        if later.start_ns is not None and (self.start_ns is None or later.start_ns < self.start_ns):
            self.start_ns = later.start_ns
        if later.covered_until_ns is not None and (self.covered_until_ns is None or
                                                   later.covered_until_ns > self.covered_until_ns):
            self.covered_until_ns = later.covered_until_ns
        self.truncated = self.truncated or later.truncated
        self.chunks += later.chunks
        self.spans += later.spans
        self.warnings = (self.warnings + later.warnings)[:WARNINGS_KEPT]
        self.warning_count += later.warning_count
        if later.damage_note is not None and not (later.damage_note_unless_earlier
                                                  and self.damage_note is not None):
            self.damage_note = later.damage_note
            self.damage_note_unless_earlier = later.damage_note_unless_earlier
        if self.warmup is not None:
            self.warmup.merge(later.warmup)

    def damage(self, path, offset, what):
        self.note_damage(f"{path}: byte {offset}: {what}")

    def note_damage(self, note: str):
        """The recording is damaged: `note` says where (the last one given stands)."""
        self.truncated = True
        self.damage_note = note
        self.damage_note_unless_earlier = False

    def note_unfinished(self, note: str):
        """A chunk ends early: `note` stands unless damage was noted before."""
        if self.damage_note is None:
            self.damage_note = note
            self.damage_note_unless_earlier = True

    def warn(self, path, offset, what):
        self.warning_count += 1
        if len(self.warnings) < WARNINGS_KEPT:
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

    def gc_pauses(self, pauses):
        """Pauses [(start_ns, duration_ns)] (reader.ChunkReader's a chunk at once)."""
        self.phase_pauses.extend(pauses)

    def heap_summary(self, when, heap_used):
        if heap_used is not None:
            self._heap_pending.append((when, heap_used))

    def heap_summaries(self, pending):
        """[(when, heap_used)] of heap_summary's calls, heap_used an int each."""
        self._heap_pending.extend(pending)

    def resolve_heap_when(self, lookup):
        names = {}      # (a chunk's heap summaries share a few GCWhen keys)
        for when, used in self._heap_pending:
            if isinstance(when, tuple):
                key = when[2]
                if key in names:
                    when = names[key]
                else:
                    when = names[key] = lookup(key)
            if when == "After GC":
                self.heap_after_count += 1
                self.heap_after_sum += used
                if self.heap_after_max is None or used > self.heap_after_max:
                    self.heap_after_max = used
        self._heap_pending = []

    def safepoint(self, start_ns, duration_ns):
        self.safepoint_count += 1
        self.safepoint_total_ns += duration_ns or 0

    def safepoints(self, count: int, total_ns: int):
        self.safepoint_count += count
        self.safepoint_total_ns += total_ns

    def cpu(self, jvm_user, jvm_system, machine):
        if None in (jvm_user, jvm_system, machine):
            return
        if self.cpu_log is not None:
            self.cpu_log.append((jvm_user, jvm_system, machine))
        self.cpu_n += 1
        self.cpu_sums[0] += jvm_user
        self.cpu_sums[1] += jvm_system
        self.cpu_sums[2] += machine

    def allocation(self, weight):
        if weight is not None:
            self.allocation_events += 1
            self.allocation_weight += weight

    def allocations(self, count: int, total_weight: int):
        self.allocation_events += count
        self.allocation_weight += total_weight

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
        if not self.names_methods:
            return
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

    def threshold_in_effect(self, event_name, settings=None):
        """The recording's threshold of an event (or, with settings=self.periods, its period)."""
        values = (self.thresholds if settings is None else settings).get(event_name)
        # With several recordings running, the JVM records an event when any of them wants it:
        # the lowest threshold (or period) is the one in effect.
        return min(values) if values else None
