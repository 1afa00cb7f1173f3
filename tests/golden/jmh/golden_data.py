"""Re-record the JMH fixture run's golden data (run through ./regen, after record.py): our build
of tests/fixtures/runs/jmh-short, written to jmh-short.yml and jmh-short.csv only when every
number in it equals expected.json (record.py's independent reading of JMH's JSON)."""
from __future__ import annotations

import csv
import io
import json
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
RUN = REPO / "tests" / "fixtures" / "runs" / "jmh-short"


def close(ours, want) -> bool:
    if ours is None or want is None:
        return ours is None and want is None
    return abs(float(ours) - float(want)) <= 1e-9 * max(1.0, abs(float(want)))


def check_against_expected(doc: dict, csv_text: str, expected: list[dict]) -> list[str]:
    """Our data file and CSV against expected.json: JMH's numbers (CSV, full precision), and
    each result's speed-up (6 significant digits in the data file) and relation to its baseline."""
    problems = []
    rows = {(r["table"], r["benchmark"], r["mode"], r["params"]): r
            for r in csv.DictReader(io.StringIO(csv_text))}
    cells = {}
    for table, block in doc["jmh_variants"].items():
        for row in block["rows"]:
            for cell in row["cells"]:
                if not cell["missing"]:
                    cells[(table, cell["variant"], row["mode"])] = cell
    if len(rows) != len(expected):
        problems.append(f"{len(rows)} CSV rows, {len(expected)} results expected")
    for want in expected:
        key = (want["table"], want["benchmark"], want["mode"], want["params"])
        got = rows.get(key)
        if got is None:
            problems.append(f"{key}: no CSV row")
            continue
        pairs = [("score", want["score"]), ("error", want["error"])]
        pairs += [(f"gc_{k.replace('gc.', '').replace('.', '_')}", v)
                  for k, v in want["gc"].items()]
        names = {"50.0": "p50", "90.0": "p90", "99.0": "p99", "99.9": "p999",
                 "99.99": "p9999", "100.0": "max"}
        pairs += [(names[k], v) for k, v in want["percentiles"].items()]
        for column, value in pairs:
            ours = float(got[column]) if got[column] != "" else None
            if not close(ours, value):
                problems.append(f"{key} {column}: ours {ours!r}, JMH {value!r}")
        if got["unit"] != want["unit"]:
            problems.append(f"{key} unit: ours {got['unit']!r}, JMH {want['unit']!r}")
        variant = " ".join(x for x in (want["method"], want["params"]) if x)
        cell = cells.get((want["table"], variant, want["mode"]))
        if cell is None:
            problems.append(f"{key}: no table cell")
            continue
        if cell["relation"] != want["relation"]:
            problems.append(f"{key} relation: ours {cell['relation']}, expected "
                            f"{want['relation']}")
        if cell["ratio"] is None or abs(cell["ratio"] - want["ratio"]) > 1e-5 * want["ratio"]:
            problems.append(f"{key} ratio: ours {cell['ratio']!r}, expected {want['ratio']!r}")
    return problems


def main() -> int:
    import yaml
    from tests.golden.site.record import build_fixture
    expected = json.loads((HERE / "expected.json").read_text())
    with tempfile.TemporaryDirectory() as tmp:
        site = Path(tmp) / "site"
        data = build_fixture(site, RUN)
        table = site / "assets" / "data" / RUN.name / "jmh.csv"
        problems = check_against_expected(yaml.safe_load(data.read_text()), table.read_text(),
                                          expected)
        if problems:
            print("not recorded: our numbers differ from JMH's:", *problems, sep="\n  ",
                  file=sys.stderr)
            return 1
        shutil.copyfile(data, HERE / "jmh-short.yml")
        shutil.copyfile(table, HERE / "jmh-short.csv")
    print("recorded tests/golden/jmh: jmh-short.yml, jmh-short.csv")
    return 0


if __name__ == "__main__":
    sys.exit(main())
