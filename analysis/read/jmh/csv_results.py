"""`-rf csv`: benchmark, mode, threads, sample count, score, error, unit, params."""
from __future__ import annotations

import csv
import io
import math

from analysis.read.jmh.results import JmhError, JmhMetric, JmhResult, MetricRows

def _csv_number(text: str, path: str, line: int, column: str) -> float | None:
    text = text.strip()
    if text in ("", "NaN", "Infinity", "-Infinity", "N/A"):
        return None
    try:
        value = float(text)
    except ValueError:
        raise JmhError(f"{column}: expected a number, got {text!r}", path=path,
                       line=line) from None
    return value if math.isfinite(value) else None


def read_csv(path: str, text: str) -> list[JmhResult]:
    reader = csv.reader(io.StringIO(text))
    header = next(reader)
    required = ("Benchmark", "Mode", "Threads", "Samples", "Score", "Score Error (99.9%)", "Unit")
    missing = [c for c in required if c not in header]
    if missing:
        raise JmhError(f"CSV header lacks {', '.join(missing)}", path=path, line=1)
    col = {name: header.index(name) for name in required}
    param_cols = [(i, h[len("Param: "):]) for i, h in enumerate(header) if h.startswith("Param: ")]
    rows = MetricRows(path)
    for row in reader:
        line = reader.line_num
        if not row or all(not c.strip() for c in row):
            continue
        if len(row) < len(header):
            raise JmhError(f"{len(row)} columns, the header has {len(header)}",
                           path=path, line=line, hint="truncated?")
        threads = _csv_number(row[col["Threads"]], path, line, "Threads")
        samples = _csv_number(row[col["Samples"]], path, line, "Samples")
        metric = JmhMetric(score=_csv_number(row[col["Score"]], path, line, "Score"),
                           error=_csv_number(row[col["Score Error (99.9%)"]], path, line,
                                             "Score Error (99.9%)"),
                           unit=row[col["Unit"]] or None,
                           samples=int(samples) if samples is not None else None)
        params = {name: row[i] for i, name in param_cols if row[i] not in ("", "N/A")}
        rows.add(line, row[col["Benchmark"]], row[col["Mode"]], params, metric,
                 int(threads) if threads is not None else None)
    return rows.results
