"""Helpers shared by several test modules (fixtures live in conftest.py), so that no test
module imports another."""
from __future__ import annotations

import base64
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import struct
import subprocess
import sys
import zlib
from contextlib import contextmanager
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
import yaml

from analysis.model import (Accounting, Cell, InFlight, Jvm, LatencyStats, LoadPoint, Missing,
                            Percentile, Repetition, Run, Saturation, Scenario, System)
from analysis.read.hdr.histogram import Histogram
from analysis.read.hdr.payload import (V0_COMPRESSED, V0_COOKIE, V1_COMPRESSED, V1_COOKIE,
                                       V2_COMPRESSED, V2_COOKIE)
from analysis.write.charts import plots
from tests.conftest import REPO
from tests.fuzz.targets import TARGETS

# -- Jekyll 3 (test_jekyll3, test_mirror) ---------------------------------------------------------

# The environment of a command run in the Jekyll 3 root (conftest.jekyll3_root): nothing of
# the host's.
CHROOT_ENV = ["/usr/bin/env", "-i", "PATH=/usr/bin:/bin", "LANG=C.UTF-8", "HOME=/root",
              "JEKYLL_NO_BUNDLER_REQUIRE=true"]


# -- .hlog payloads and logs, encoded as HdrHistogram's Java code writes them ---------------------

def zigzag_leb128(value: int) -> bytes:
    """ZigZagEncoding.putLong: 8 groups of 7 bits, then a 9th byte with all 8 bits."""
    u = ((value << 1) ^ (value >> 63)) & ((1 << 64) - 1)
    out = bytearray()
    for _ in range(8):
        if u >> 7 == 0:
            out.append(u)
            return bytes(out)
        out.append((u & 0x7F) | 0x80)
        u >>= 7
    out.append(u & 0xFF)
    return bytes(out)


def v2_counts(dense: list[int]) -> bytes:
    """fillBufferFromCountsArray: runs of zeros as -n (a single zero as 0)."""
    out, i = bytearray(), 0
    while i < len(dense):
        if dense[i] == 0:
            j = i
            while j < len(dense) and dense[j] == 0:
                j += 1
            out += zigzag_leb128(-(j - i) if j - i > 1 else 0)
            i = j
        else:
            out += zigzag_leb128(dense[i])
            i += 1
    return bytes(out)


def dense_counts(h: Histogram) -> list[int]:
    dense = [0] * (int(h.indices[-1]) + 1 if h.indices.size else 0)
    for i, c in zip(h.indices.tolist(), h.counts.tolist()):
        dense[i] = c
    return dense


def encode(h: Histogram, version: int = 2, word_size: int = 8, compressed: bool = True,
           ratio: float = 1.0) -> bytes:
    lay = h.layout
    dense = dense_counts(h)
    if version == 2:
        body = v2_counts(dense)
        raw = struct.pack(">iiiiqqd", V2_COOKIE | 0x10, len(body), 0, lay.significant_digits,
                          lay.lowest_discernible_value, lay.highest_trackable_value, ratio) + body
        outer = V2_COMPRESSED | 0x10
    elif version == 1:
        body = np.array(dense, dtype=f">i{word_size}").tobytes()
        raw = struct.pack(">iiiiqqd", V1_COOKIE | (word_size << 4), len(body), 0,
                          lay.significant_digits, lay.lowest_discernible_value,
                          lay.highest_trackable_value, ratio) + body
        outer = V1_COMPRESSED | (word_size << 4)
    else:
        words = dense + [0] * (lay.counts_array_length - len(dense))
        body = np.array(words, dtype=">i8").tobytes()
        raw = struct.pack(">iiqqq", V0_COOKIE | 0x80, lay.significant_digits,
                          lay.lowest_discernible_value, lay.highest_trackable_value,
                          h.total_count) + body
        outer = V0_COMPRESSED | 0x80
    if not compressed:
        return raw
    packed = zlib.compress(raw)
    return struct.pack(">ii", outer, len(packed)) + packed


def log_line(raw: bytes, start: float, tag: str | None = None) -> str:
    prefix = f"Tag={tag}," if tag is not None else ""
    return f"{prefix}{start:.3f},1.000,0.000,{base64.b64encode(raw).decode()}"


def write_log(path, lines: list[str]) -> None:
    header = ["#[Histogram log format version 1.3]",
              "#[StartTime: 1700000000.000 (seconds since epoch), Tue Nov 14 22:13:20 UTC 2023]",
              '"StartTimestamp","Interval_Length","Interval_Max","Interval_Compressed_Histogram"']
    path.write_text("\n".join(header + lines) + "\n")

# -- whole builds in a copy of the site (test_build and the build's other tests) ------------------

FIXTURE = REPO / "tests" / "fixtures" / "runs" / "oracle-demo"

GOLDEN = REPO / "tests" / "golden" / "site"

GENERATED = ("_data", "_rundata", "assets", "_reports", "_comparisons", "_series")


# the builds run with the site as working directory; the package comes from the repo
ENV = {**os.environ, "PYTHONPATH": os.pathsep.join(
    [str(REPO)] + ([os.environ["PYTHONPATH"]] if os.environ.get("PYTHONPATH") else []))}


def make_site(tmp_path: Path, *run_ids: str, mini: bool = False) -> Path:
    """A site root with copies of the fixture run under runs/<id>; `mini` keeps only its first
    load point (fewer charts: these builds test the machinery, not the numbers)."""
    site = tmp_path / "site"
    for run_id in run_ids or ("oracle-demo",):
        run_dir = site / "runs" / run_id
        shutil.copytree(FIXTURE, run_dir)
        if mini:
            manifest = yaml.safe_load((run_dir / "run.yml").read_text())
            manifest["load_points"] = manifest["load_points"][:1]
            keep = manifest["load_points"][0]["id"]
            manifest["cells"] = [c for c in manifest["cells"] if c["load"] == keep]
            (run_dir / "run.yml").write_text(yaml.safe_dump(manifest, sort_keys=False,
                                                            allow_unicode=True))
    return site


def build(site: Path, *args: str, timeout: float = 120) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "analysis", "build", "--runs", "runs", *args],
                          cwd=site, capture_output=True, text=True, timeout=timeout,
                          env=ENV)


def snapshot(site: Path) -> dict[str, str]:
    out = {}
    for top in GENERATED:
        for path in sorted((site / top).rglob("*")):
            if path.is_file():
                out[path.relative_to(site).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


# -- chart jobs (test_charts, test_charts_many, test_svgdraw) -------------------------------------

def spectrum_curves():
    return [{"label": "Pool", "color": plots.color(0), "count": 20_000,
             "points": [(0.0, 0.1), (50.0, 0.2), (90.0, 0.4), (99.0, 1.5), (99.9, 30.0),
                        (99.99, 150.0), (100.0, 200.0)]},
            {"label": "Virtual", "color": plots.color(1), "count": 500,
             "points": [(0.0, 0.1), (50.0, 0.25), (99.0, 0.9), (100.0, 2.0)]}]


def varied_jobs() -> list[dict]:
    """Chart jobs of every kind, with log and linear axes, gaps, GC pauses, saturation, many
    legend rows: what one reused figure goes through in a build."""
    curve = {"label": "Pool", "color": plots.color(0), "offered": [10, 100, 1000],
             "p50_ms": [0.2, 0.3, 900.0], "p99_ms": [0.5, 2.0, 2000.0],
             "saturated": [False, False, True], "ceiling_rps": 100.0}
    linear = {"label": "Virtual threads with a long label", "color": plots.color(1),
              "offered": [100, 200, 300], "p50_ms": [1.0, 1.2, 1.5], "p99_ms": [2.0, 2.5, 3.0],
              "saturated": [False, False, False], "ceiling_rps": None}
    lat = [{"label": f"System {i}", "color": plots.color(i), "t_s": [0.0, 1.0, 2.0, 3.0],
            "p99_ms": [1.0 + i, None, 3.0, 3.0], "max_ms": [2.0, None, 250.0, 250.0]}
           for i in range(4)]
    tput = [{"label": "Pool", "color": plots.color(0), "t_s": [0.0, 1.0, 2.0],
             "throughput_rps": [480.0, 300.0, 300.0]}]
    gc = [{"label": f"System {i}", "color": plots.color(i), "pause_ms": 3.0 * i,
           "p999_ms": 2.0 + i, "p999_censored": False, "max_ms": 50.0, "max_censored": False}
          for i in range(4)]
    data = [("spectrum", {"title": "Spectrum", "curves": spectrum_curves()}),
            ("load_curve", {"title": "Load", "systems": [curve, linear]}),
            ("load_curve", {"title": "Linear", "systems": [linear]}),
            ("latency_over_time", {"title": "Latency", "systems": lat,
                                   "gc_pauses": [{"t_s": 1.5, "duration_ms": 20.0}]}),
            ("latency_over_time", {"title": "Latency 1", "systems": lat[:1], "gc_pauses": None}),
            ("throughput_over_time", {"title": "Throughput", "systems": tput,
                                      "offered_rate": 500.0}),
            ("jmh_sweep", {"title": "Sweep", "xlabel": "n", "ylabel": "throughput (ops/s)",
                           "log_x": False, "lines": [{"label": "a", "color": plots.color(0),
                                                      "x": [1, 4, 16], "y": [5.0, None, 9.0],
                                                      "error": [1.0, None, 20.0]}]}),
            ("jmh_spectrum", {"title": "JMH spectrum", "ylabel": "time per operation (ns/op)",
                              "curves": spectrum_curves()}),
            ("gc_tail", {"title": "GC", "points": gc}),
            ("throughput_over_time", {"title": "Throughput below", "systems": tput,
                                      "offered_rate": 500.0, "legend": "below"})]
    return [{"kind": kind, "data": d, "svg": f"c{i}.svg", "png": f"c{i}.png"}
            for i, (kind, d) in enumerate(data)]

# -- JFR chunks built byte by byte (test_jfr_fuzz, test_jfr_native) -------------------------------

JFR_FIXTURES = REPO / "tests" / "fixtures" / "jfr"


def varint(n: int, width: int | None = None) -> bytes:
    """JFR's LEB128; `width` pads with continuation bytes, as the JVM does for event sizes."""
    n &= (1 << 64) - 1
    out = bytearray()
    for i in range(8):
        if n < 0x80 and (width is None or len(out) + 1 >= width):
            out.append(n)
            return bytes(out)
        out.append((n & 0x7F) | 0x80)
        n >>= 7
    out.append(n & 0xFF)
    return bytes(out)


def jstring(s: str | None, encoding: int = 3) -> bytes:
    if s is None:
        return b"\x00"
    if s == "":
        return b"\x01"
    if encoding == 3:
        raw = s.encode("utf-8")
        return b"\x03" + varint(len(raw)) + raw
    if encoding == 5:
        raw = s.encode("latin-1")
        return b"\x05" + varint(len(raw)) + raw
    units = s.encode("utf-16-be")
    chars = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    return b"\x04" + varint(len(chars)) + b"".join(varint(c) for c in chars)


def event(type_id: int, payload: bytes, padded: bool = True) -> bytes:
    body = varint(type_id) + payload
    if padded:  # the JVM reserves 4 bytes for the size and patches it
        return varint(4 + len(body), width=4) + body
    for width in range(1, 10):
        if len(varint(width + len(body))) == width:
            return varint(width + len(body)) + body
    raise AssertionError

PRIMS = {"long": 20, "int": 21, "float": 22, "java.lang.String": 23}

GC, CPU = 100, 101

GC_FIELDS = [("startTime", "long"), ("duration", "long"), ("gcId", "int"),
             ("name", "java.lang.String"), ("sumOfPauses", "long"), ("longestPause", "long")]

CPU_FIELDS = [("startTime", "long"), ("jvmUser", "float"), ("jvmSystem", "float"),
              ("machineTotal", "float")]


def metadata_event() -> bytes:
    strings: list[str] = []

    def idx(s):
        if s not in strings:
            strings.append(s)
        return strings.index(s)

    def element(name, attrs, children=()):
        out = varint(idx(name)) + varint(len(attrs))
        for k, v in attrs.items():
            out += varint(idx(k)) + varint(idx(v))
        return out + varint(len(children)) + b"".join(children)

    classes = [element("class", {"name": n, "id": str(i)}) for n, i in PRIMS.items()]
    for name, tid, fields in (("jdk.GarbageCollection", GC, GC_FIELDS),
                              ("jdk.CPULoad", CPU, CPU_FIELDS)):
        classes.append(element("class", {"name": name, "id": str(tid),
                                         "superType": "jdk.jfr.Event"},
                               [element("field", {"name": f, "class": str(PRIMS[t])})
                                for f, t in fields]))
    root = element("root", {}, [element("metadata", {}, classes)])
    table = varint(len(strings)) + b"".join(jstring(s) for s in strings)
    return event(0, varint(0) + varint(0) + varint(1) + table + root)

START_NS = 1_795_000_000_000_000_000

START_TICKS = 5_000

TPS = 1_000_000_000


def chunk(events: bytes, finished: bool = True, metadata_last: bool = False) -> bytes:
    """One chunk; `metadata_last` puts the metadata event after the events, as JDK 11-13
    write it (at chunk close), where JDK 14+ write it first."""
    md = metadata_event()
    body = events + md if metadata_last else md + events
    size = 68 + len(body)
    md_offset = 68 + len(events) if metadata_last else 68
    duration = 10 * TPS
    header = struct.pack(">4sHHqqqqqqqBBBB", b"FLR\0", 2, 0 if metadata_last else 1, size, 0,
                         md_offset, START_NS, duration, START_TICKS, TPS,
                         0 if finished else 2, 0, 0, 1)
    return header + body


def gc_event(start_ticks, sum_ticks, longest_ticks, name="G1New"):
    payload = (varint(start_ticks) + varint(sum_ticks) + varint(7) + jstring(name)
               + varint(sum_ticks) + varint(longest_ticks))
    return event(GC, payload)

REAL = (JFR_FIXTURES / "jdk25-default.jfr").read_bytes()

META_AT = int.from_bytes(REAL[24:32], "big")

# -- the fuzzers' saved inputs (test_hardening_corpus, test_hdr_native) ---------------------------

FUZZ_CORPUS = Path(__file__).resolve().parent / "fuzz" / "corpus"

CASES = sorted((target, path) for target in TARGETS for path in (FUZZ_CORPUS / target).glob("*")
               if path.is_file())


# -- hardening: time limits and a site's authored files -------------------------------------------

class _Expired(Exception):
    """time_limit's alarm, raised wherever the body was."""


# time_limit's wall limit, as a multiple of its CPU limit: only a body that waits without
# working (a deadlock, a blocking read) meets it, and a shared machine at load 16 gives one
# process an eighth of a core.
WALL_PER_CPU_SECOND = 10


@contextmanager
def time_limit(seconds: float):
    """Fail (not hang) when the body spends more than `seconds` of this process's CPU time (or
    WALL_PER_CPU_SECOND times that on the clock): a hang is a finding too. CPU time, not wall:
    on a loaded machine a body of 3 CPU seconds took over 10 s of wall and failed a test that
    measured the code's work. The failure is a TimeoutError raised here, without the
    interrupted frames: an alarm that lands thousands of frames deep in a parser gave pytest a
    frame without a line number, and its report of that traceback crashed the whole xdist run
    (INTERNALERROR), not one test."""
    def expired(*_):
        raise _Expired
    old = {sig: signal.signal(sig, expired) for sig in (signal.SIGPROF, signal.SIGALRM)}
    signal.setitimer(signal.ITIMER_PROF, seconds)
    signal.setitimer(signal.ITIMER_REAL, seconds * WALL_PER_CPU_SECOND)
    try:
        yield
    except _Expired:
        raise TimeoutError(f"still running after {seconds} CPU s (or {seconds * WALL_PER_CPU_SECOND}"
                           " s on the clock)") from None
    finally:
        signal.setitimer(signal.ITIMER_PROF, 0)
        signal.setitimer(signal.ITIMER_REAL, 0)
        for sig, handler in old.items():
            signal.signal(sig, handler)


def authored(site: Path) -> dict[str, str]:
    """sha256 of every file a person wrote: everything but the generated folders and caches."""
    out = {}
    skip = tuple(site / d for d in (*GENERATED, ".cache"))
    for path in sorted(site.rglob("*")):
        if path.is_file() and not path.is_symlink() and not any(
                path == s or s in path.parents for s in skip):
            out[path.relative_to(site).as_posix()] = hashlib.sha256(path.read_bytes()).hexdigest()
    return out


def edit_manifest(run_dir: Path, change) -> None:
    doc = yaml.safe_load((run_dir / "run.yml").read_text())
    change(doc)
    (run_dir / "run.yml").write_text(yaml.safe_dump(doc, allow_unicode=True, sort_keys=False))


# -- the mirrored trees, and a small site to build (test_mirror, test_site_stamp) -----------------

TREES = ("runs", "assets/charts", "assets/data")


# Fixed so the two builds' feeds (site.time in <updated>) can be compared byte for byte.
PINNED_TIME = 'time: "2026-01-01 00:00:00 +0000"\n'


def odd_files(src: Path) -> None:
    """Names Jekyll skips (leading . _ # ~, trailing ~, excluded patterns), the one it includes
    anyway (.htaccess), an empty folder, a folder holding only skipped files, a name with a space
    and an accent; a name ending in `.` that Jekyll skips anyway (`_x.`)."""
    for tree in ("runs/odd", "assets/data/odd"):
        base = src / tree
        for rel in (".hidden", "_under/x.txt", "#hash", "backup~", "~tilde", "_x.",
                    ".htaccess", "sp ace é.txt", "only-skipped/_x", "deep/er/z.csv", "a.tmp",
                    "private/secret.txt", "kept.txt"):
            (base / rel).parent.mkdir(parents=True, exist_ok=True)
            (base / rel).write_text(f"{tree}/{rel}\n", encoding="utf-8")
        (base / "empty").mkdir()
    with open(src / "_config.yml", "a", encoding="utf-8") as config:
        config.write(PINNED_TIME)
    # two exclude patterns that reach into the trees: a wildcard and a folder
    text = (src / "_config.yml").read_text(encoding="utf-8")
    (src / "_config.yml").write_text(
        text.replace("exclude:\n", "exclude:\n  - \"*.tmp\"\n  - runs/odd/private/\n", 1),
        encoding="utf-8")


def github_pages_build(src: Path, dest: Path) -> None:
    """Jekyll with _config.yml alone: it copies every static file itself."""
    result = subprocess.run(["bash", str(src / "scripts" / "jekyll.sh"), "build",
                             "--destination", str(dest)], capture_output=True, text=True,
                            timeout=600)
    assert result.returncode == 0, result.stdout + result.stderr


def files(site: Path) -> dict[str, bytes | None]:
    """Every path under site: a file's bytes, None for a folder (no links expected)."""
    out: dict[str, bytes | None] = {}
    for path in sorted(site.rglob("*")):
        assert not path.is_symlink(), path
        out[path.relative_to(site).as_posix()] = None if path.is_dir() else path.read_bytes()
    return out


def assert_same_site(local: Path, pages: Path) -> None:
    a, b = files(local), files(pages)
    assert sorted(set(a) - set(b)) == [] and sorted(set(b) - set(a)) == []
    assert [p for p in a if a[p] != b[p]] == []


def small_site(src: Path, bundle_checked: bool = True) -> Path:
    """_config.yml, the scripts and one page, for the builds that change runs between them.
    `bundle_checked`: the repository's Gemfile.lock and its record that `bundle check` passed
    for them are copied too, when it has them (scripts/jekyll.sh keys that record on contents):
    the first build skips the check (~0.6 CPU s a site)."""
    src.mkdir(parents=True)
    for name in ("_config.yml", "Gemfile"):
        shutil.copy2(REPO / name, src / name)
    if bundle_checked and (REPO / ".cache" / "bundle-checked").is_file() \
            and (REPO / "Gemfile.lock").is_file():
        shutil.copy2(REPO / "Gemfile.lock", src / "Gemfile.lock")
        (src / ".cache").mkdir()
        shutil.copy2(REPO / ".cache" / "bundle-checked", src / ".cache" / "bundle-checked")
    shutil.copytree(REPO / "scripts", src / "scripts",
                    ignore=shutil.ignore_patterns("__pycache__"))
    (src / "index.html").write_text("<p>small site</p>\n")
    for tree in TREES:
        for run in ("r1", "r2"):
            (src / tree / run / "sub").mkdir(parents=True)
            (src / tree / run / "a.csv").write_text(f"{tree} {run} a\n")
            (src / tree / run / "sub" / "b.hlog").write_text(f"{tree} {run} b\n")
    odd_files(src)
    return src


# -- a built page, parsed (test_site, test_hardening_site) ----------------------------------------

class Page(HTMLParser):
    """Collects links, ids, canonical links, scripts and event-handler attributes of a page."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.links: list[str] = []
        self.ids: set[str] = set()
        self.canonical: list[str] = []
        self.scripts: list[str | None] = []
        self.handlers: list[str] = []
        self.imgs: list[dict] = []
        self.tables = 0
        self.captions = 0
        self.text: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if "id" in a:
            self.ids.add(a["id"])
        self.handlers += [k for k in a if k.lower().startswith("on")]
        for key in ("href", "src"):
            if a.get(key):
                self.links.append(a[key])
        if tag == "meta" and a.get("property") in ("og:image", "twitter:image", "og:url"):
            self.links.append(a.get("content", ""))
        if a.get("srcset"):
            self.links += [part.strip().split()[0] for part in a["srcset"].split(",")]
        if tag == "link" and a.get("rel") == "canonical":
            self.canonical.append(a.get("href"))
        if tag == "script":
            self.scripts.append(a.get("type"))
        if tag == "img":
            self.imgs.append(a)
        self.tables += tag == "table"
        self.captions += tag == "caption"

    def handle_data(self, data):
        self.text.append(data)


def parse(html: str) -> Page:
    page = Page()
    page.feed(html)
    return page


# Then runs the cases given as JSON in argv[1]: [[stdout file, hgrm arguments], ...].
# -- hgrm's golden cases (test_hgrm, test_hdr_codec, test_hdr_native) -----------------------------

RUN_CASES = """
import json, sys
from analysis.cli import main
for out, args in json.loads(sys.argv[1]):
    with open(out, "w") as sys.stdout:
        assert main(["hgrm", *args]) == 0
"""


def assert_goldens_in_fresh_interpreter(tmp_path, preamble: str, env=None) -> None:
    """Every hgrm golden case, run by `preamble` + RUN_CASES in a new interpreter (with `env`
    added to the environment), gives the golden files byte for byte."""
    runs, expected = [], []
    for param in hgrm_cases():
        name, fixture, flags = param.values
        if name == "ycsb-default":       # (as in test_hgrm)
            flags = ["-start", "0", *flags]
        args = ["-i", str(HLOG_FIXTURES / fixture), *flags]
        if name.endswith("-stdout"):
            runs.append((str(tmp_path / f"{name}.stdout"), args))
            expected.append((f"{name}.stdout", f"{name}.stdout"))
        else:
            runs.append((str(tmp_path / f"{name}.ignored"), args + ["-o", str(tmp_path / name)]))
            expected += [(name, f"{name}.log"), (f"{name}.hgrm", f"{name}.hgrm")]
    proc = subprocess.run([sys.executable, "-c", preamble + RUN_CASES, json.dumps(runs)],
                          cwd=REPO, capture_output=True, text=True,
                          env={**os.environ, **(env or {})})
    assert proc.returncode == 0, proc.stderr
    for ours, golden in expected:
        assert normalise_start_time((tmp_path / ours).read_text()) == \
            normalise_start_time((HGRM_GOLDEN / "expected" / golden).read_text()), golden

HGRM_GOLDEN = REPO / "tests" / "golden" / "hgrm"

HLOG_FIXTURES = REPO / "tests" / "fixtures" / "hlog"

START_TIME_DATE = re.compile(r"^(#\[StartTime: [-0-9.]+ \(seconds since epoch\)), .*\]$", re.M)


def hgrm_cases():
    for line in (HGRM_GOLDEN / "cases.tsv").read_text().splitlines():
        if line and not line.startswith("#"):
            name, fixture, flags = (line.split("\t") + [""])[:3]
            yield pytest.param(name, fixture, shlex.split(flags), id=name)


def normalise_start_time(text: str) -> str:
    return START_TIME_DATE.sub(r"\1, <date>]", text)


def summary_by_histograms(histograms):
    """Each interval's (count, p50, p90, max) and the running total's (count, TOTAL_PERCENTILES,
    max), from Histogram's own (scalar) statistics."""
    from analysis.read.hdr.running import TOTAL_PERCENTILES
    from analysis.read.hdr.histogram import sum_histograms
    rows = []
    for k, h in enumerate(histograms):
        total = sum_histograms(histograms[:k + 1])
        rows.append((h.total_count, h.value_at_percentile(50.0), h.value_at_percentile(90.0),
                     h.max, total.total_count,
                     tuple(int(v) for v in total.values_at_percentiles(TOTAL_PERCENTILES)),
                     total.max))
    return rows


def summary_by_batches(path, batch_size):
    from analysis.read.hdr.running import IntegerRunning
    from analysis.read.hdr.log import iter_batches
    acc, rows = None, []
    for batch in iter_batches(path, [], batch_size=batch_size):
        acc = acc or IntegerRunning(batch.payloads[0].layout)
        stats = acc.add_rows(batch, np.arange(len(batch.intervals)))
        rows += [stats.row(k) for k in range(len(batch.intervals))]
    return rows

# -- closed-loop runs (test_closed_loop, test_vocabulary) -----------------------------------------

WRK = REPO / "tests" / "fixtures" / "loadtools" / "wrk"

SCENARIO_RUN = REPO / "tests" / "fixtures" / "runs" / "scenarios-demo"
# A server given by URL (issue 24): bench/run.sh --find-knee against a Python http.server of
# 4 workers x 50 ms on 127.0.0.1, no --server-pid (1 repetition, 2 s windows, a busy host)
URL_RUN = REPO / "tests" / "fixtures" / "runs" / "url-knee"


# system -> connections -> the wrk output measured there (the README's commands: -c4, -c8)
WRK_CELLS = {"a": {4: "wrk-seconds.txt", 8: "wrk-latency.txt"},
             "b": {4: "wrk-seconds.txt", 8: "wrk-non2xx.txt"}}

UNIT_MS = {"us": 1e-3, "ms": 1.0, "s": 1e3}


def wrk_printed(name: str) -> dict[str, float]:
    """What a wrk output prints: Requests/sec, the mean latency (ms) and the connections."""
    text = (WRK / name).read_text()
    mean, unit = re.search(r"^    Latency\s+([\d.]+)([a-z]+)", text, re.M).groups()
    return {"rate": float(re.search(r"^Requests/sec:\s+(\S+)$", text, re.M).group(1)),
            "mean_ms": float(mean) * UNIT_MS[unit],
            "connections": int(re.search(r"(\d+) connections", text).group(1))}


def wrk_run(site: Path, run_id: str, version: str) -> None:
    run_dir = site / "runs" / run_id
    run_dir.mkdir(parents=True)
    cells = []
    for system, by_n in WRK_CELLS.items():
        for n, name in by_n.items():
            assert wrk_printed(name)["connections"] == n
            shutil.copy2(WRK / name, run_dir / f"{system}-c{n}.txt")
            cells.append({"system": system, "load": f"c{n}", "results": f"{system}-c{n}.txt",
                          "format": "wrk"})
    manifest = {
        "title": f"wrk at 4 and 8 connections, v{version}", "date": "2026-11-21",
        "description": "wrk's closed loop against one small server.",
        "series": "closed-series", "version": version, "service_time_ms": 2,
        "systems": [{"id": "a", "label": "Server A", "concurrency_limit": 8},
                    {"id": "b", "label": "Server B"}],
        # listed out of order: the chart joins them in order of connections
        "load_points": [{"id": "c8", "connections": 8, "duration_s": 3},
                        {"id": "c4", "connections": 4, "duration_s": 5}],
        "cells": cells}
    (run_dir / "run.yml").write_text(yaml.safe_dump(manifest, sort_keys=False))


def closed_copy(src: Path, dest: Path, connections: dict[str, int]) -> None:
    """A fixture run with each offered rate replaced by a number of connections."""
    shutil.copytree(src, dest)
    manifest = yaml.safe_load((dest / "run.yml").read_text())
    for lp in manifest["load_points"]:
        lp.pop("offered_rate")
        lp.pop("clients", None)
        lp["connections"] = connections[lp["id"]]
    manifest.setdefault("load_generator", {})["model"] = "closed"
    (dest / "run.yml").write_text(yaml.safe_dump(manifest, sort_keys=False, allow_unicode=True))


# -- a run model as aggregate.build_run makes it (test_datafiles, test_vocabulary) ----------------

def stats(count, **values):
    """LatencyStats with the demo's latencies (ms), overridable by data key."""
    ms = {"p50_ms": 201.3271, "p90_ms": 202.0, "p95_ms": 203.0, "p99_ms": 205.0,
          "p999_ms": 209.5, "max_ms": 210.0, "mean_ms": 201.5, "stddev_ms": 1.25, **values}
    return LatencyStats(count, {k[:-3]: Percentile(ms[k]) for k in
                                ("p50_ms", "p90_ms", "p95_ms", "p99_ms", "p999_ms")},
                        Percentile(ms["max_ms"]), Percentile(ms["mean_ms"]), ms["stddev_ms"])


def cell(load, system, count, rate, saturated, *, sent=None, drops=None, drop_pct=None,
         in_flight=None, jvm=None, **values):
    st = stats(count, **values)
    rep = Repetition(1, f"runs/demo/{system}/{load}.hlog", st, rate, Accounting(sent=sent), [])
    return Cell(None, system, load, [rep], st, rate,
                Saturation(saturated, ("goodput",) if saturated else ()), ["p999"],
                Accounting(sent=sent), drops, drop_pct, in_flight=in_flight,
                jvm=Jvm(f"runs/demo/{system}/{load}.jfr", jvm) if jvm else None)


def result(tmp_path, attribution=()):
    """A run model like aggregate.build_run makes: pool measured at both loads, virt missing."""
    systems = [System("pool", "Pool", 0, 20, None, 100.0, 40.0, -60.0),
               System("virt", "Virtual", 1)]
    load_points = [LoadPoint("r25", 25, 5, 30, rate_per_client=5.0),
                   LoadPoint("r50", 50, None, 30)]
    scenario = Scenario(None, None, None, 200, systems, load_points, missing=[
        Missing("r25", "virt", "runs/demo/virt/r25.hlog")])
    scenario.cells[("r25", "pool")] = cell("r25", "pool", 750, 25.0, False, sent=760, drops=10,
                                           drop_pct=1.3157,
                                           in_flight=InFlight(littles_law=5.0376,
                                                              verdict="not checked: no measurement"))
    scenario.cells[("r50", "pool")] = cell(
        "r50", "pool", 1200, 40.0, True,
        jvm={"gc": {"count": 3, "pause_max_ms": 12.5}, "cpu": {"machine": 0.5},
             "note": "text is not a column"})
    return Run("demo", "T", "2026-11-22", "D", ["jvm"], "us", "runs/demo/run.yml",
               {"cores": 2}, {"model": "open", "timeout_s": 15}, list(attribution), [scenario])


def oracle_program(oracle: Path, classes: Path, name: str) -> list[str]:
    """The java command line that runs tests/oracle/<name>.java, compiled into `classes`
    against the oracle's HdrHistogram jar (skips without javac)."""
    if shutil.which("javac") is None:
        pytest.skip("needs javac")
    classpath = subprocess.run(["bash", "-c", 'source "$1" && echo "$ORACLE_CP"', "_",
                                str(oracle / "_setup.sh")], check=True, capture_output=True,
                               text=True).stdout.strip()
    jar = classpath.split(":")[0]
    source = Path(__file__).resolve().parent / "oracle" / f"{name}.java"
    subprocess.run(["javac", "-cp", jar, "-d", str(classes), str(source)], check=True)
    return ["java", "-Duser.timezone=UTC", "-cp", f"{jar}:{classes}", name]
