"""Reading a `jfr print --json` export into the same Summary as the binary reader.

Only small exports are accepted (the JDK writes about 40 bytes of JSON per byte of recording,
so a whole recording exported is better read as the .jfr itself). The export has no chunk
headers and no event-type ids, so it gives no recording thresholds (jdk.ActiveSetting names its
event type by id only) and no truncation state.
"""
from __future__ import annotations

import json
import re
from datetime import datetime, timezone
from pathlib import Path

from analysis.errors import JfrError
from analysis.read.jfr.summary import Summary, as_int, as_number, as_str, method_label

MAX_EXPORT_BYTES = 64 << 20

_DURATION = re.compile(r"(-)?PT(?:(-?\d+)H)?(?:(-?\d+)M)?(?:(-?\d+)(?:\.(\d+))?S)?")
# An ISO-8601 instant with its offset, as OffsetDateTime.toString writes it in any time zone:
# 2024-03-01T10:15:30.123456789Z, ...+01:00, ...-05:00, and no seconds when they are zero
# (2024-03-01T10:15+01:00). A time without an offset is no instant and is refused.
_INSTANT = re.compile(r"(\d{4}-\d\d-\d\dT\d\d:\d\d)(?::(\d\d)(?:[.,](\d+))?)?"
                      r"(?:([Zz])|([+-])(\d\d)(?::?(\d\d))?(?::(\d\d))?)")


def is_json_export(path: Path) -> bool:
    with open(path, "rb") as f:
        head = f.read(64).lstrip()
    return head.startswith(b"{")


def duration_ns(text) -> int | None:
    """ISO-8601 durations as Java's Duration.toString writes them: PT0.008744926S, PT1M2S."""
    if not isinstance(text, str):
        return None
    m = _DURATION.fullmatch(text)
    if not m:
        return None
    neg, h, mnt, sec, frac = m.groups()
    ns = (int(h or 0) * 3600 + int(mnt or 0) * 60 + int(sec or 0)) * 1_000_000_000
    if frac:
        frac_ns = int((frac + "000000000")[:9])
        ns += -frac_ns if (sec or "").startswith("-") else frac_ns
    return -ns if neg else ns


def instant_ns(text) -> int | None:
    """Epoch nanoseconds of an ISO-8601 instant with any offset (see _INSTANT), else None."""
    if not isinstance(text, str):
        return None
    m = _INSTANT.fullmatch(text)
    if not m:
        return None
    minute, sec, frac, zulu, sign, oh, om, os_ = m.groups()
    try:
        whole = datetime.strptime(minute, "%Y-%m-%dT%H:%M").replace(tzinfo=timezone.utc)
    except ValueError:
        return None
    offset_s = 0 if zulu else (int(oh) * 3600 + int(om or 0) * 60 + int(os_ or 0))
    if sign == "-":
        offset_s = -offset_s
    seconds = int(whole.timestamp()) + int(sec or 0) - offset_s
    return seconds * 1_000_000_000 + int(((frac or "") + "000000000")[:9])


def method_name(frame: dict) -> str:
    method = frame.get("method")
    method = method if isinstance(method, dict) else {}
    cls = method.get("type")
    cls = as_str(cls.get("name")) if isinstance(cls, dict) else None
    name = as_str(method.get("name"))
    return method_label(cls, name)


def summarize_export(path: Path, summary: Summary) -> None:
    size = path.stat().st_size
    if size > MAX_EXPORT_BYTES:
        raise JfrError(f"JSON export of {size >> 20} MiB is too large to load",
                       path=path, hint="give the .jfr recording itself, or export fewer "
                       "event types with `jfr print --json --events ...`")
    try:
        doc = json.loads(path.read_bytes())
        events = doc["recording"]["events"]
        if not isinstance(events, list):
            raise TypeError("events is not a list")
    except (ValueError, KeyError, TypeError, RecursionError) as exc:
        raise JfrError(f"not a `jfr print --json` export: {exc}", path=path) from None
    first = last = None
    summary.export_types = {e.get("type") for e in events if isinstance(e, dict)
                            and isinstance(e.get("type"), str)}
    main = summary
    for i, event in enumerate(events):
        if not isinstance(event, dict) or not isinstance(event.get("values"), dict):
            summary.warn(path, 0, f"event {i} is not an object with values")
            continue
        name, v = event.get("type"), event["values"]
        start = instant_ns(v.get("startTime"))
        dur = duration_ns(v.get("duration"))
        if start is not None:
            first = start if first is None else min(first, start)
            end = start + (dur or 0)
            last = end if last is None else max(last, end)
        if name == "jdk.JVMInformation":
            main.jvm(as_str(v.get("jvmName")), as_str(v.get("jvmVersion")))
            continue
        summary = main.route(start)   # with a window: the window's, the warm-up's or none
        if summary is None:
            continue
        if name == "jdk.GarbageCollection":
            summary.garbage_collection(start, duration_ns(v.get("sumOfPauses")),
                                       duration_ns(v.get("longestPause")))
        elif name == "jdk.GCPhasePause":
            summary.gc_pause(start, dur)
        elif name == "jdk.GCHeapSummary":
            summary.heap_summary(as_str(v.get("when")), as_int(v.get("heapUsed")))
        elif name == "jdk.SafepointBegin":
            summary.safepoint(start, dur)
        elif name == "jdk.CPULoad":
            summary.cpu(as_number(v.get("jvmUser")), as_number(v.get("jvmSystem")),
                        as_number(v.get("machineTotal")))
        elif name == "jdk.ObjectAllocationSample":
            summary.allocation(as_int(v.get("weight")))
        elif name == "jdk.ThreadPark":
            summary.park(dur)
        elif name == "jdk.JavaMonitorEnter":
            summary.monitor_enter(dur)
        elif name == "jdk.ExecutionSample":
            trace = v.get("stackTrace")
            if not isinstance(trace, dict):
                summary.samples(None, 1)
            else:
                frames = trace.get("frames")
                frames = tuple(method_name(f) for f in frames if isinstance(f, dict)) \
                    if isinstance(frames, list) else ()
                summary.samples(frames, 1, truncated=bool(trace.get("truncated")))
    summary = main
    for target in (main, main.warmup):
        if target is not None:
            target.resolve_heap_when(lambda key: key)
            target.export_types = main.export_types
    if first is None:
        raise JfrError("export holds no timed events", path=path)
    summary.start_ns = first
    summary.covered_until_ns = last
    summary.chunks = 0
