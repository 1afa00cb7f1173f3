"""k6's files: `--out json` and `--out csv` per request, `--summary-export` as a summary
(issue 23).

Formats:

- `k6-json`: `k6 run --out json=FILE`: NDJSON, one `{"type":"Metric",...}` line when a metric is
  first seen, then one line per sample: `{"metric":"http_req_duration","type":"Point","data":
  {"time":"<RFC 3339, ns>","value":<ms>,"tags":{...}}}` (k6 before v0.40 wrote the same keys in
  the order type, data, metric; both are read). Only `http_req_duration` points are requests;
  the other metrics (http_reqs, http_req_waiting, iterations, vus, ...) are passed over.
- `k6-csv`: `k6 run --out csv=FILE`: the header `metric_name,timestamp,metric_value,` then the
  enabled system tags in alphabetical order (by default check, error, error_code,
  expected_response, group, method, name, proto, scenario, service, status, subproto,
  tls_version, url), then extra_tags and metadata. `timestamp` is whole Unix seconds by default
  (`K6_CSV_TIME_FORMAT` can make it unix_milli/micro/nano or RFC 3339); `metric_value` is
  milliseconds with 6 decimals.
- `k6-summary`: `k6 run --summary-export=FILE` (`{"root_group", "metrics": {"http_req_duration":
  {"avg","min","med","max","p(90)","p(95)"}, "http_reqs": {"count","rate"}, "http_req_failed":
  {"passes","fails","value"}, ...}}`), the `data` object `handleSummary()` gets and scripts
  often write with JSON.stringify (`"metrics": {name: {"type","contains","values": {...}}}` and
  `state.testRunDurationMs`), and k6 v2's machine-readable summary (`"version"`,
  `"metadata": {"k6Version"}`, `"config": {"duration"}`, `"results": {"metrics": [{"name",
  "values"}]}`).

What a latency covers: `http_req_duration` = sending + waiting + receiving (k6's Trail.Duration),
from the start of writing the request to the end of reading the response. It leaves out
`http_req_blocked` (waiting for a free connection), DNS, connecting and the TLS handshake. The
value is float milliseconds of a nanosecond duration: latency_ns = round(value * 1e6), exact.

Start time: k6 stamps every sample of a request with the request's END (Trail.EndTime, the
moment the response was read), so `start_ms` = time - http_req_duration: when k6 began writing
the request. `--out csv`'s default whole-second timestamps make its starts exact to 1 s only.

`ok`: the `expected_response` tag (k6's responseCallback; by default 200-399 is expected), which
is what `http_req_failed` counts; where a file has no such tag (`--system-tags` without it), the
status < 400 with 0 (no answer) a failure. `timed_out`: `error_code` 1050, k6's "request
timeout". A request with no answer has status 0 and its `error` tag.

Load model: k6's executors decide it. constant-arrival-rate and ramping-arrival-rate start
iterations at a rate whatever the answers (open); constant-vus, ramping-vus, per-vu-iterations,
shared-iterations and externally-controlled run a fixed set of VUs that each wait for their
answer (closed). None of these files names the executor. What they show is the `scenario` tag:
k6's shortcut options (vus/duration, stages, iterations) all run one scenario named `default`
with a closed executor, so a file whose every request is in scenario "default" is closed, with
that as evidence. Any other scenario name is the user's and says nothing: the load model is
"unknown" unless `options["executors"]` ({scenario: executor}, from run.yml) names them. The
summaries have no scenario tags: unknown there, or from `options["executors"]`. Only the v2
machine-readable summary names k6's version.
"""
from __future__ import annotations

import csv
import io
import json
import re
from typing import Iterator

import numpy as np
import pandas as pd

from analysis.errors import ResultsError
from analysis.read.loadtools.common import SkipLog, check_text, native_unit, read_head, read_text
from analysis.read.loadtools.results import RequestSamples, ResultSummary, ToolInfo

MEASURE = "http_req_duration: sending + waiting + receiving (no DNS, connect, TLS or queueing)"
OPEN_EXECUTORS = ("constant-arrival-rate", "ramping-arrival-rate")
CLOSED_EXECUTORS = ("constant-vus", "ramping-vus", "per-vu-iterations", "shared-iterations",
                    "externally-controlled")
DEFAULT_SCENARIO = "default"
TIMEOUT_ERROR_CODE = "1050"
DURATION = "http_req_duration"
_METADATA = b',"metadata":'
CHUNK_BYTES = 16 << 20

# the two serialisations of a request's duration point (k6 >= v0.40, and older), whole line:
# time, value, then the tags object
_POINT = (
    re.compile(rb'\{"metric":"http_req_duration","type":"Point","data":\{"time":"([^"\n]*)",'
               rb'"value":([-+0-9.eE]+),"tags":(\{[^\n]*\}|null)\}\}\n'),
    re.compile(rb'\{"type":"Point","data":\{"time":"([^"\n]*)","value":([-+0-9.eE]+),'
               rb'"tags":(\{[^\n]*\}|null)\},"metric":"http_req_duration"\}\n'),
)
_SNIFF_JSON = re.compile(rb'\A\s*\{"(?:type":"(?:Metric|Point)"|metric":"[^"]+","type":"Point")'
                         rb'.*"data":\{')
_CSV_HEADER = b"metric_name,timestamp,metric_value"


def sniff(head: bytes) -> str | None:
    first = head.lstrip(b"\xef\xbb\xbf").split(b"\n", 1)[0]
    if _SNIFF_JSON.match(first) and b'"metric":"' in first:
        return "k6-json"
    if first.startswith(_CSV_HEADER):
        return "k6-csv"
    text = head.lstrip()
    if text.startswith(b"{") and b'"metrics"' in text and (
            b'"root_group"' in text or b'"testRunDurationMs"' in text
            or (b'"k6Version"' in text and b'"results"' in text)):
        return "k6-summary"
    return None


def read(path: str, fmt: str, options: dict) -> RequestSamples | ResultSummary:
    if fmt == "k6-json":
        return _samples(path, fmt, _json_points(path), options)
    if fmt == "k6-csv":
        return _samples(path, fmt, _csv_points(path), options)
    if fmt == "k6-summary":
        return _read_summary(path, options)
    raise ResultsError(f"not a k6 format: {fmt}", path=path)


# --- the load model ---------------------------------------------------------------------------

def _load_model(scenarios: set[str], options: dict) -> tuple[str, str | None]:
    executors = dict(options.get("executors") or {})
    named = {s: executors[s] for s in scenarios if s in executors}
    if not scenarios and executors:
        named = executors
    models = set()
    for executor in named.values():
        models.add("open" if executor in OPEN_EXECUTORS
                   else "closed" if executor in CLOSED_EXECUTORS else "unknown")
    if named and len(models) == 1 and (set(named) >= scenarios):
        evidence = ", ".join(f"scenario {s}: executor {e} (run.yml)"
                             for s, e in sorted(named.items()))
        return models.pop(), evidence
    if scenarios == {DEFAULT_SCENARIO}:
        return "closed", ("scenario default only: k6's vus/duration, stages and iterations "
                          "options run closed executors")
    return "unknown", None


def _info(fmt: str, scenarios: set[str], options: dict, version: str | None = None) -> ToolInfo:
    model, evidence = _load_model(scenarios, options)
    return ToolInfo(format=fmt, tool="k6", version=version, measure=MEASURE, load_model=model,
                    load_model_evidence=evidence)


# --- per request ------------------------------------------------------------------------------

class _Tags:
    """What a request's tags say, parsed once per distinct tags text (k6 repeats them)."""

    __slots__ = ("status", "expected", "timed_out", "label", "scenario", "error")

    def __init__(self, tags: dict):
        status = str(tags.get("status", ""))
        self.status = int(status) if status.isdigit() else 0
        expected = tags.get("expected_response")
        self.expected = (expected == "true") if expected in ("true", "false") \
            else 200 <= self.status < 400
        self.timed_out = tags.get("error_code") == TIMEOUT_ERROR_CODE
        self.label = str(tags.get("name") or tags.get("url") or "")
        self.scenario = str(tags.get("scenario") or "")
        self.error = str(tags.get("error") or "")


class _Columns:
    def __init__(self):
        # one int64/int32 array per chunk, joined at the end
        self.end_ns: list[np.ndarray] = []
        self.latency_ns: list[np.ndarray] = []
        self.tag_index: list[np.ndarray] = []
        self.tags: list[_Tags] = []
        self.tag_ids: dict[bytes, int] = {}
        self.first_error: str | None = None

    def tag_id(self, key: bytes, parse) -> int:
        i = self.tag_ids.get(key)
        if i is None:
            tags = _Tags(parse())
            i = self.tag_ids[key] = len(self.tags)
            self.tags.append(tags)
        return i

    def tag_ids_of(self, tags: list[bytes]) -> list[int]:
        """The ids of the fast path's tags objects (bytes as k6 wrote them)."""
        new = set(tags).difference(self.tag_ids)
        if any(_METADATA in t for t in new):   # vu/iter metadata differ on every line: cut off
            tags = [t.split(_METADATA, 1)[0] for t in tags]
            new = set(tags).difference(self.tag_ids)
        for t in new:
            self.tag_id(t, lambda t=t: _tags_object(t))
        ids = self.tag_ids
        return [ids[t] for t in tags]

    def add(self, end_ns, latency_ns, tag_ids) -> None:
        if len(tag_ids):
            self.end_ns.append(np.asarray(end_ns, dtype=np.int64))
            self.latency_ns.append(np.asarray(latency_ns, dtype=np.int64))
            self.tag_index.append(np.asarray(tag_ids, dtype=np.int32))

    def joined(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        return tuple(np.concatenate(parts) for parts in
                     (self.end_ns, self.latency_ns, self.tag_index))


def _samples(path: str, fmt: str, points, options: dict) -> RequestSamples:
    cols, skips = _Columns(), SkipLog(path)
    for batch in points(cols, skips):
        cols.add(*batch)
    if not cols.tag_index:
        first = skips.warnings()[0] if skips.count else f"the file has no {DURATION} points"
        raise ResultsError(f"no {DURATION} points could be read", path=path,
                           hint=f"first problem: {first}; expected `k6 run --out "
                                f"{fmt.split('-')[1]}=FILE` output")
    end_ns, latency, index = cols.joined()
    per_tag = {name: np.array([getattr(t, name) for t in cols.tags])
               for name in ("status", "expected", "timed_out")}
    status = per_tag["status"].astype(np.int32)[index]
    ok = per_tag["expected"].astype(bool)[index]
    labels = np.array([t.label for t in cols.tags], dtype=object)[index]
    failed = np.flatnonzero(~ok)
    first_error = None
    if failed.size:
        t = cols.tags[index[failed[0]]]
        first_error = f"status {t.status}" + (f": {t.error}" if t.error else "")
    used = np.unique(index)
    scenarios = {cols.tags[i].scenario for i in used if cols.tags[i].scenario}
    return RequestSamples(
        path=path, info=_info(fmt, scenarios, options),
        start_ms=(end_ns - latency) / 1e6,
        latency_ns=latency, ok=ok,
        timed_out=per_tag["timed_out"].astype(bool)[index], status=status,
        native_unit=native_unit(latency), epoch=True,
        labels=labels if any(cols.tags[i].label for i in used) else None,
        warnings=skips.warnings(), skipped=skips.count, first_error=first_error)


def _ns_of_ms(values: list[bytes] | list[str], path: str) -> np.ndarray:
    ms = np.array(values).astype(np.float64)
    if not np.all(np.isfinite(ms)) or np.any(ms < 0):
        raise ResultsError(f"a negative or non-finite {DURATION}", path=path)
    return np.rint(ms * 1e6).astype(np.int64)


def _rfc3339_ns(stamps: list, path: str) -> np.ndarray:
    try:
        times = pd.to_datetime(pd.Series(stamps, dtype=object), format="ISO8601", utc=True)
    except (ValueError, TypeError) as e:
        raise ResultsError(f"a sample time is not RFC 3339 ({e})", path=path) from None
    return pd.DatetimeIndex(times).as_unit("ns").asi8


def _chunks(path: str) -> Iterator[memoryview]:
    """Whole lines ending in a newline, about CHUNK_BYTES at a time, read into one reused
    buffer (no copy of a chunk); a last line without its newline gets one (the parser still
    sees whether it was cut). A chunk is only valid until the next one is asked for."""
    check_text(path, read_head(path), "`k6 run --out json=FILE` output")
    buf = bytearray(CHUNK_BYTES)
    view = memoryview(buf)
    kept = 0
    with open(path, "rb") as f:
        while True:
            got = f.readinto(view[kept:])
            size = kept + got
            if not got:
                break
            cut = buf.rfind(b"\n", 0, size) + 1
            if not cut:     # one line longer than the buffer: a bigger one (chunks handed out
                bigger = bytearray(2 * len(buf))      # may still hold views of this one)
                bigger[:size] = buf[:size]
                buf, view, kept = bigger, memoryview(bigger), size
                continue
            yield view[:cut]
            buf[:size - cut] = buf[cut:size]
            kept = size - cut
    if kept:
        yield memoryview(bytes(buf[:kept]) + b"\n")


def _json_points(path: str):
    def points(cols: _Columns, skips: SkipLog):
        line = 1
        old_order = None
        for chunk in _chunks(path):
            if old_order is None:
                old_order = _OLD_POINT in bytes(chunk[:1 << 20])
            batch, lines = _json_chunk(path, chunk, line, cols, skips, old_order)
            line += lines
            yield batch
    return points


def _json_chunk(path, chunk: memoryview, first_line: int, cols: _Columns, skips: SkipLog,
                old_order: bool):
    """One chunk's duration points, and its number of lines. One regex pass over the whole
    chunk takes the points as k6 writes them. When every line then is a whole
    `{"metric":"...}` or `{"type":"Metric",...}` line, and there were as many points as lines
    that may start as a duration point, the chunk is done: k6's other metrics are passed over
    without a Python step per line. Otherwise each line is sorted by its first and last bytes,
    and what is neither a point taken nor another k6 line (another spelling of a point, a cut
    or foreign line) is parsed on its own."""
    patterns = _POINT if old_order else _POINT[:1]
    found = [point for pattern in patterns for point in pattern.findall(chunk)]
    times = [t for t, _, _ in found]
    values = [v for _, v, _ in found]
    tag_ids = cols.tag_ids_of([tags for _, _, tags in found])
    data = np.frombuffer(chunk, dtype=np.uint8)
    ends = np.flatnonzero(data == 10)
    starts = np.concatenate(([0], ends[:-1] + 1))
    plain = (not old_order and _all_plain_k6_lines(data, starts, ends)
             and len(found) == np.count_nonzero(_may_start_a_duration(data, starts)))
    if not plain:
        matched = [m.start() for pattern in patterns for m in pattern.finditer(chunk)]
        _parse_the_rest(chunk, data, starts, ends, matched, first_line, cols, skips,
                        (times, values, tag_ids))
    if not times:
        return ([], [], []), ends.size
    latency = _ns_of_ms(values, path)
    end_ns = _rfc3339_ns([t.decode() if isinstance(t, bytes) else t for t in times], path)
    return (end_ns, latency, tag_ids), ends.size


def _may_start_a_duration(data: np.ndarray, starts: np.ndarray) -> np.ndarray:
    """The lines that may start as a duration point, by a few of the prefix's bytes: every one
    that does, and seldom another (so as many points taken means none was missed)."""
    maybe = np.ones(starts.size, dtype=bool)
    for offset, byte in _DURATION_PROBE:
        maybe &= _byte_at(data, starts, offset) == byte
    return maybe


def _parse_the_rest(chunk, data, starts, ends, matched, first_line, cols, skips, out) -> None:
    times, values, tag_ids = out
    kind = _classify_lines(data, starts, ends)
    taken = np.zeros(starts.size, dtype=bool)
    taken[np.searchsorted(starts, np.array(matched, dtype=np.int64))] = True
    for i in np.flatnonzero((kind == _UNKNOWN) | ((kind == _DURATION) & ~taken)):
        point = _slow_point(bytes(chunk[starts[i]:ends[i]]))
        if isinstance(point, str):
            skips.skip(first_line + int(i), point)
        elif point is not None:
            times.append(point[0])
            values.append(point[1])
            tag_ids.append(cols.tag_id(point[2], lambda p=point: p[3]))


_OTHER, _DURATION, _UNKNOWN, _BLANK = 0, 1, 2, 3
_DURATION_START = b'{"metric":"http_req_duration"'
_V1_POINT = b'{"metric":"'
_METRIC_LINE = b'{"type":"Metric",'
_OLD_POINT = b'{"type":"Point",'
_OLD_DURATION_END = b',"metric":"http_req_duration"}'
# (offset, byte) pairs of _DURATION_START: the brace, the metric's h, d and closing quote
_DURATION_PROBE = tuple((i, _DURATION_START[i]) for i in (0, 11, 20, 28))


def _starting(data: np.ndarray, starts: np.ndarray, prefix: bytes) -> np.ndarray:
    """Which lines begin with `prefix` (a window running past a short line takes in its
    newline, which no prefix holds)."""
    at = np.minimum(starts[:, None] + np.arange(len(prefix)), data.size - 1)
    return np.all(data[at] == np.frombuffer(prefix, np.uint8), axis=1)


def _ending(data: np.ndarray, ends: np.ndarray, suffix: bytes) -> np.ndarray:
    at = np.maximum(ends[:, None] - len(suffix) + np.arange(len(suffix)), 0)
    return np.all(data[at] == np.frombuffer(suffix, np.uint8), axis=1)


def _byte_at(data: np.ndarray, starts: np.ndarray, offset: int) -> np.ndarray:
    return data[np.minimum(starts + offset, data.size - 1)]


def _all_plain_k6_lines(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> bool:
    """Every line a whole `{"metric":"...}` point or `{"type":"Metric",...}` line, as far as a
    few bytes of each tell (one column of bytes at a time: cheap on a million lines)."""
    if not np.all(ends > starts) or not np.all(data[ends - 1] == ord("}")):
        return False
    at = {offset: _byte_at(data, starts, offset) for offset in (0, 1, 2, 9, 10)}
    point = (at[2] == ord("m")) & (at[10] == ord('"'))     # {"metric":"
    metric = (at[2] == ord("t")) & (at[9] == ord("M"))      # {"type":"Metric"
    return bool(np.all((at[0] == ord("{")) & (at[1] == ord('"')) & (point | metric)))


def _classify_lines(data: np.ndarray, starts: np.ndarray, ends: np.ndarray) -> np.ndarray:
    """Each line's kind: a duration point, another k6 line (whole: it starts and ends as k6
    writes them), blank, or unknown (to parse)."""
    duration = _starting(data, starts, _DURATION_START) | (
        _starting(data, starts, _OLD_POINT) & _ending(data, ends, _OLD_DURATION_END))
    k6_line = (_starting(data, starts, _V1_POINT) | _starting(data, starts, _METRIC_LINE)
               | _starting(data, starts, _OLD_POINT))
    kind = np.full(starts.size, _UNKNOWN, dtype=np.int8)
    kind[k6_line & (data[np.maximum(ends - 1, 0)] == ord("}"))] = _OTHER
    kind[duration] = _DURATION
    kind[ends == starts] = _BLANK
    return kind


def _tags_object(tags: bytes) -> dict:
    try:
        parsed = json.loads(tags)
    except ValueError:
        return {}
    return parsed if isinstance(parsed, dict) else {}


def _slow_point(line: bytes):
    """A line the fast path did not take, parsed in full: (time, value, tags key, tags) for a
    duration point, None for any other k6 line, or what is wrong with it."""
    if not line.strip():
        return None
    try:
        obj = json.loads(line)
    except ValueError:
        return "not a JSON line (cut short, or not k6 output)"
    if not isinstance(obj, dict) or "type" not in obj:
        return "not a k6 Metric or Point line"
    if obj.get("type") != "Point" or obj.get("metric") != DURATION:
        return None
    data = obj.get("data")
    if not isinstance(data, dict) or not isinstance(data.get("time"), str) \
            or not isinstance(data.get("value"), (int, float)):
        return "an http_req_duration point without a time or value"
    tags = data.get("tags") or {}
    if not isinstance(tags, dict):
        return "an http_req_duration point whose tags are not an object"
    return data["time"], repr(data["value"]), json.dumps(tags, sort_keys=True).encode(), tags


def _csv_points(path: str):
    def points(cols: _Columns, skips: SkipLog):
        text = read_text(path, "`k6 run --out csv=FILE` output")
        reader = csv.reader(io.StringIO(text))
        header = next(reader, [])
        need = ("metric_name", "timestamp", "metric_value")
        if tuple(header[:3]) != need:
            raise ResultsError("the first line is not k6's CSV header", path=path, line=1,
                               hint="expected metric_name,timestamp,metric_value,... "
                                    "(`k6 run --out csv=FILE`)")
        columns = {name: i for i, name in enumerate(header)}
        times, values, tag_ids = [], [], []
        line = 2
        for row in reader:
            if not row:
                pass
            elif len(row) != len(header):
                skips.skip(line, f"{len(row)} fields, expected {len(header)}")
            elif not _is_metric_name(row[0]):
                skips.skip(line, f"not a k6 metric row ({row[0][:40]!r})")
            elif row[0] == DURATION:
                if not _is_number(row[2]) or not row[1].strip():
                    skips.skip(line, "metric_value or timestamp is not a number")
                else:
                    times.append(row[1])
                    values.append(row[2])
                    key = "\x1f".join(row[3:]).encode()
                    tag_ids.append(cols.tag_id(key, lambda r=row: _csv_tags(r, columns)))
            line = reader.line_num + 1
        if times:
            yield _csv_times_ns(times, path), _ns_of_ms(values, path), tag_ids
    return points


_METRIC_NAME = re.compile(r"\A[A-Za-z_][A-Za-z0-9_]*\Z")


def _is_metric_name(text: str) -> bool:
    return _METRIC_NAME.match(text) is not None


def _is_number(text: str) -> bool:
    try:
        float(text)
        return True
    except ValueError:
        return False


def _csv_tags(row: list[str], columns: dict[str, int]) -> dict:
    return {name: row[i] for name, i in columns.items() if i >= 3 and row[i] != ""}


def _csv_times_ns(times: list[str], path: str) -> np.ndarray:
    """k6's CSV time formats: unix (default), unix_milli/micro/nano, rfc3339(_nano)."""
    if not all(t.isdigit() for t in times):
        return _rfc3339_ns(times, path)
    digits = max(len(t) for t in times)
    scale = 10 ** 9 if digits <= 11 else 10 ** 6 if digits <= 14 else 10 ** 3 if digits <= 17 else 1
    return np.array(times, dtype=np.int64) * scale


# --- summaries --------------------------------------------------------------------------------

_TREND_PERCENTILE = re.compile(r"\Ap\((\d+(?:\.\d+)?)\)\Z")


def _read_summary(path: str, options: dict) -> ResultSummary:
    text = read_text(path, "`k6 run --summary-export=FILE` output")
    try:
        doc = json.loads(text)
        metrics, duration_s, version = _summary_metrics(doc)
        return _summary(path, metrics, duration_s, version, options)
    except (ValueError, KeyError, TypeError, AttributeError) as e:
        raise ResultsError(f"not a k6 summary ({type(e).__name__}: {e})", path=path,
                           hint="expected `k6 run --summary-export=FILE` output or the "
                                "handleSummary() data as JSON") from None


def _summary_metrics(doc: dict) -> tuple[dict[str, dict], float | None, str | None]:
    """{metric: {stat: value}} from any of k6's three summary shapes, with the test's
    duration and k6's version where the shape has them."""
    if "results" in doc and "metadata" in doc:        # v2 machine-readable
        metrics = {m["name"]: m.get("values") or {} for m in doc["results"]["metrics"]}
        return metrics, doc.get("config", {}).get("duration"), doc["metadata"].get("k6Version")
    metrics = {}
    for name, metric in doc["metrics"].items():
        values = metric.get("values") if isinstance(metric.get("values"), dict) else metric
        metrics[name] = values
    run_ms = (doc.get("state") or {}).get("testRunDurationMs")
    return metrics, None if run_ms is None else run_ms / 1000, None


def _summary(path: str, metrics: dict, duration_s, version, options: dict) -> ResultSummary:
    duration = metrics.get(DURATION)
    if duration is None:
        raise KeyError(f"no {DURATION} metric (the test made no HTTP requests)")
    reqs = metrics.get("http_reqs") or {}
    failed = metrics.get("http_req_failed") or {}
    percentiles = {float(m[1]): float(v) for k, v in duration.items()
                   if (m := _TREND_PERCENTILE.match(k))}
    if "med" in duration:
        percentiles.setdefault(50.0, float(duration["med"]))
    requests = reqs.get("count")
    # http_req_failed is a rate of 1s: k6 counts a failed request as a "pass" of it
    errors = failed.get("passes")
    if errors is None and "matches" in failed:
        errors = failed["matches"]
    if duration_s is None and requests and reqs.get("rate"):
        duration_s = requests / reqs["rate"]
    return ResultSummary(
        path=path, info=_info("k6-summary", set(), options, version),
        requests=None if requests is None else int(requests),
        errors=None if errors is None else int(errors), timeouts=None,
        duration_s=duration_s, rate_rps=reqs.get("rate"),
        percentiles_ms=dict(sorted(percentiles.items())),
        mean_ms=duration.get("avg"), min_ms=duration.get("min"), max_ms=duration.get("max"))
