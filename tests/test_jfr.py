"""The JFR reader against the JDK's own reader (golden files from `jfr print --json`).

Fixtures in tests/fixtures/jfr/ were recorded with the workload in its src/ folder (see its
`record` script); tests/golden/jfr/regen turned each into expected values with the JDK's `jfr`
tool and code independent of analysis/jfr. These tests need no JDK, except the ones marked
`jdk`, which ask the live `jfr` tool.
"""
from __future__ import annotations

import argparse
import gzip
import json
import math
import shutil
import subprocess
import sys

import pytest

from analysis.commands import jfr as jfr_cli
from analysis.derive.jvm_summary import jvm_summary, percentile_nearest_rank, summarize_jfr
from analysis.errors import JfrError
from analysis.read.jfr.wire import read_varint
from analysis.read.jfr.summary import Summary, parse_threshold_ms
from tests.conftest import REPO

FIXTURES = REPO / "tests" / "fixtures" / "jfr"
GOLDEN = REPO / "tests" / "golden" / "jfr"

# fixture -> golden, and whether the recording ended normally
CASES = {
    "jdk17-default.jfr": ("jdk17-default", False),
    "jdk25-default.jfr": ("jdk25-default", False),
    "jdk17-profile.jfr": ("jdk17-profile", False),
    "jdk25-profile.jfr.gz": ("jdk25-profile", False),
    "jdk17-killed": ("jdk17-killed", True),
}

_cache: dict = {}


def summary_of(name, attribution=None):
    key = (name, tuple(attribution or ()))
    if key not in _cache:
        _cache[key] = summarize_jfr(FIXTURES / name, attribution=attribution)
    return _cache[key]


def golden(name):
    return json.loads((GOLDEN / f"{name}.json").read_text())


def close(a, b, tol=1e-6):
    if a is None or b is None:
        return a is b
    return math.isclose(a, b, rel_tol=0, abs_tol=tol)


# -- agreement with the referee --------------------------------------------------------------

@pytest.mark.parametrize("fixture", sorted(CASES))
def test_gc_matches_jfr_print(fixture):
    s, g = summary_of(fixture), golden(CASES[fixture][0])
    assert g["gc"]["count"] > 0, "fixture without GCs proves nothing"
    assert s["gc"]["count"] == g["gc"]["count"]
    for key in ("pause_total_ms", "pause_max_ms", "pause_p99_ms", "heap_used_after_gc_max_mb"):
        assert close(s["gc"][key], g["gc"][key]), key
    assert len(s["gc"]["pauses"]) == len(g["gc"]["pauses"])
    for (t, d), (gt, gd) in zip(s["gc"]["pauses"], g["gc"]["pauses"]):
        assert close(t, gt) and close(d, gd)


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_cpu_safepoints_allocation_locks_match_jfr_print(fixture):
    s, g = summary_of(fixture), golden(CASES[fixture][0])
    assert s["cpu"]["samples"] == g["cpu_samples"] > 0
    for key in ("jvm_user", "jvm_system", "machine"):
        # jfr prints floats in Java's shortest form; we average the raw float32 values.
        assert close(s["cpu"][key], g["cpu"][key], 1e-6), key
    assert s["safepoint"]["count"] == g["safepoint"]["count"]
    assert close(s["safepoint"]["total_ms"], g["safepoint"]["total_ms"])
    assert s["allocation_bytes"] == g["allocation_bytes"] > 0
    assert s["allocation_samples"] == g["allocation_samples"]
    assert close(s["allocation_rate_mb_s"] * s["duration_s"] * 2**20, g["allocation_bytes"],
                 g["allocation_bytes"] * 1e-5)
    for key, value in g["threads"].items():
        assert close(s["threads"][key], value), key


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_hot_methods_match_jfr_print(fixture):
    s, g = summary_of(fixture), golden(CASES[fixture][0])
    assert s["samples"]["count"] == g["samples"] > 0
    assert s["samples"]["unresolved"] == 0
    assert s["hot_methods"], "no hot methods"
    for h in s["hot_methods"]:
        assert h["self_samples"] == g["self_samples"].get(h["method"], 0), h["method"]
        assert h["total_samples"] == g["total_samples"].get(h["method"], 0), h["method"]
        assert close(h["self_pct"], 100 * h["self_samples"] / g["samples"], 1e-3)
    for h in s["hot_methods_by_total"]:
        assert h["total_samples"] == g["total_samples"][h["method"]], h["method"]
    top_total = max(g["total_samples"].values())
    assert s["hot_methods_by_total"][0]["total_samples"] == top_total
    # The list is the top by self samples: nothing left out has more.
    listed = {h["method"] for h in s["hot_methods"]}
    smallest = min(h["self_samples"] for h in s["hot_methods"])
    assert all(n <= smallest for m, n in g["self_samples"].items() if m not in listed)


@pytest.mark.parametrize("fixture", sorted(CASES))
def test_times_version_and_truncation(fixture):
    s, g = summary_of(fixture), golden(CASES[fixture][0])
    killed = CASES[fixture][1]
    assert s["truncated"] is killed
    assert s["start_epoch_s"] <= g["first_event_epoch_s"]
    # covered_until: the chunk end (whole chunks) or the last event read (the killed JVM's).
    assert s["covered_until"] >= g["last_event_end_epoch_s"] - 1e-6
    assert s["covered_until"] - g["last_event_end_epoch_s"] < (1.0 if not killed else 0.01)
    assert close(s["duration_s"], s["covered_until"] - s["start_epoch_s"], 1e-5)
    version = s["jdk"].split()[-1]
    assert version in g["jvm_version"]
    assert s["warning_count"] == 0


def test_multi_chunk_recording_is_read_chunk_by_chunk():
    assert summary_of("jdk17-profile.jfr")["chunks"] == 2
    assert summary_of("jdk17-killed")["chunks"] == 3


def test_result_is_json_and_deterministic():
    a = summarize_jfr(FIXTURES / "jdk25-default.jfr", attribution=[(r"java\..*", "jdk")])
    b = summarize_jfr(FIXTURES / "jdk25-default.jfr", attribution=[(r"java\..*", "jdk")])
    assert json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True)
    for key in ("gc", "safepoint", "cpu", "allocation_rate_mb_s", "threads", "hot_methods",
                "attribution", "start_epoch_s", "duration_s", "truncated", "covered_until",
                "jdk"):
        assert key in a


# -- attribution ---------------------------------------------------------------------------

def test_attribution_takes_first_matching_frame_from_leaf_to_root():
    s = Summary([(r"app\.Db\..*", "database"), (r"java\.util\.concurrent\.locks\..*", "locks")])
    # The leaf is a lock, called from the database layer: the leaf decides (locks).
    s.samples(("java.util.concurrent.locks.LockSupport.park", "app.Db.query", "app.Main.run"), 3)
    # No lock frame: the database frame matches.
    s.samples(("java.net.Socket.read", "app.Db.query", "app.Main.run"), 2)
    s.samples(("app.Main.run",), 1)
    # A frame matching both patterns goes to the first pattern.
    s2 = Summary([(r"app\..*", "app"), (r"app\.Db\..*", "database")])
    s2.samples(("app.Db.query",), 1)
    r = jvm_summary(s)
    assert r["attribution"] == [{"label": "database", "samples": 2, "pct": 33.333},
                                {"label": "locks", "samples": 3, "pct": 50.0},
                                {"label": "other", "samples": 1, "pct": 16.667}]
    assert jvm_summary(s2)["attribution"][0] == {"label": "app", "samples": 1, "pct": 100.0}


def test_attribution_on_a_recording_adds_up():
    patterns = [(r"Workload\$Hashing\..*", "hashing"), (r"java\.util\..*", "sorting")]
    s = summary_of("jdk17-default.jfr", patterns)
    g = golden("jdk17-default")
    by = {a["label"]: a["samples"] for a in s["attribution"]}
    assert sum(by.values()) == g["samples"]
    # Every sample with a Hashing frame is attributed to hashing (it is the leaf-most match:
    # the hashing thread never calls java.util).
    assert by["hashing"] == g["total_samples"]["Workload$Hashing.crunch"]
    assert by["sorting"] > 0 and by["other"] > 0


def test_bad_attribution_regex_is_a_clear_error():
    with pytest.raises(JfrError, match="not a valid regex"):
        summarize_jfr(FIXTURES / "jdk17-default.jfr", attribution=[("(", "x")])


# -- damaged and odd inputs ------------------------------------------------------------------

def test_cut_recording_gives_data_up_to_the_cut():
    cut = summarize_jfr(FIXTURES / "jdk17-default-cut.jfr")
    full = golden("jdk17-default")
    assert cut["truncated"] is True
    assert "byte" in cut["damage"] and "jdk17-default-cut.jfr" in cut["damage"]
    assert 0 < cut["gc"]["count"] < full["gc"]["count"]
    assert set(map(tuple, cut["gc"]["pauses"])) <= \
        {(round(t, 6), round(d, 6)) for t, d in full["gc"]["pauses"]}
    assert cut["covered_until"] < full["last_event_end_epoch_s"]
    assert cut["covered_until"] >= cut["gc"]["pauses"][-1][0]


def test_truncation_anywhere_gives_a_prefix_or_one_clear_error(tmp_path):
    data = (FIXTURES / "jdk25-default.jfr").read_bytes()
    full = summary_of("jdk25-default.jfr")
    # The metadata event (the types) sits near the start; without all of it nothing decodes.
    metadata_offset = int.from_bytes(data[24:32], "big")
    metadata_size, _ = read_varint(data, metadata_offset)
    metadata_end = metadata_offset + metadata_size
    # Cuts in the header, before and in the metadata event, and every ~3 % through the events.
    cuts = [1, 4, 40, 67, 68, 69, 200, metadata_offset + 3, metadata_end - 1, metadata_end,
            metadata_end + 1] + list(range(metadata_end + 7, len(data), len(data) // 33)) + \
        [len(data) - 1]
    path = tmp_path / "cut.jfr"
    previous_gcs = 0
    for cut in cuts:
        path.write_bytes(data[:cut])
        try:
            s = summarize_jfr(path)
        except JfrError as exc:
            assert "cut.jfr" in str(exc)
            assert cut < metadata_end, f"cut at {cut} should still give data"
            continue
        assert s["truncated"] is True
        # Events reach the file in thread-buffer order, not time order: a cut keeps a subset.
        assert set(map(tuple, s["gc"]["pauses"])) <= set(map(tuple, full["gc"]["pauses"]))
        assert s["gc"]["count"] >= previous_gcs  # more bytes never give less data
        previous_gcs = s["gc"]["count"]
    assert previous_gcs == full["gc"]["count"]


def test_gzip_reads_like_the_plain_file(tmp_path):
    plain = summary_of("jdk17-default.jfr")
    gz = tmp_path / "r.jfr.gz"
    gz.write_bytes(gzip.compress((FIXTURES / "jdk17-default.jfr").read_bytes()))
    assert summarize_jfr(gz) == plain
    # A cut .jfr.gz: the data inflated so far, marked truncated.
    whole = gz.read_bytes()
    gz.write_bytes(whole[:len(whole) // 2])
    s = summarize_jfr(gz)
    assert s["truncated"] and 0 < s["gc"]["count"] < plain["gc"]["count"]


def test_gzip_members_concatenated_and_zero_padding(tmp_path):
    a = gzip.compress((FIXTURES / "jdk17-default.jfr").read_bytes())
    b = gzip.compress((FIXTURES / "jdk25-default.jfr").read_bytes())
    both = tmp_path / "ab.jfr.gz"
    both.write_bytes(a + b)
    s = summarize_jfr(both)
    assert s["chunks"] == 2 and s["gc"]["count"] == \
        golden("jdk17-default")["gc"]["count"] + golden("jdk25-default")["gc"]["count"]
    padded = tmp_path / "pad.jfr.gz"
    padded.write_bytes(a + bytes(4096))
    assert summarize_jfr(padded) == summary_of("jdk17-default.jfr")


def test_damaged_gzip_is_one_clear_error(tmp_path):
    bad = tmp_path / "bad.jfr.gz"
    bad.write_bytes(b"\x1f\x8b\x08\x00" + b"\xff" * 100)
    with pytest.raises(JfrError, match="bad.jfr.gz"):
        summarize_jfr(bad)


def test_repository_folder_of_a_killed_jvm(tmp_path):
    s = summary_of("jdk17-killed")
    assert s["truncated"] is True and "chunk never finished" in s["damage"]
    # Only the last chunk file is unfinished; dropping it leaves a complete recording.
    for f in sorted((FIXTURES / "jdk17-killed").glob("*.jfr"))[:-1]:
        shutil.copy(f, tmp_path / f.name)
    done = summarize_jfr(tmp_path)
    assert done["truncated"] is False
    assert done["gc"]["count"] <= s["gc"]["count"]


def test_jvm_killed_before_its_first_flush():
    # The last chunk's header was never updated (size 68, no metadata offset); `jfr print`
    # refuses it. We find its metadata by walking its events and read up to the damage.
    folder = FIXTURES / "jdk17-killed-early"
    s = summarize_jfr(folder)
    first = golden("jdk17-killed-early-first-chunk")
    alone = summarize_jfr(sorted(folder.glob("*.jfr"))[0])
    assert alone["samples"]["count"] == first["samples"]
    assert alone["gc"]["count"] == first["gc"]["count"]
    assert s["truncated"] is True and s["chunks"] == 2 and "never finished" in s["damage"]
    assert s["gc"]["count"] > first["gc"]["count"]
    assert s["samples"]["count"] > first["samples"]
    assert s["covered_until"] > alone["covered_until"]
    assert all(s["start_epoch_s"] <= t <= s["covered_until"] for t, _ in s["gc"]["pauses"])


def test_repository_root_with_one_jvm_folder(tmp_path):
    shutil.copytree(FIXTURES / "jdk17-killed", tmp_path / "2026_11_22_00_03_51_9999")
    from_root = summarize_jfr(tmp_path)
    direct = summary_of("jdk17-killed")
    assert from_root["damage"].startswith(str(tmp_path / "2026_11_22_00_03_51_9999"))
    assert {**from_root, "damage": None} == {**direct, "damage": None}
    shutil.copytree(FIXTURES / "jdk17-killed", tmp_path / "2026_11_22_00_04_00_10000")
    with pytest.raises(JfrError, match="2 JVMs' chunk folders"):
        summarize_jfr(tmp_path)


def test_empty_folder_and_missing_file_are_clear_errors(tmp_path):
    with pytest.raises(JfrError, match="no .jfr chunk files"):
        summarize_jfr(tmp_path)
    with pytest.raises(JfrError, match="no such file"):
        summarize_jfr(tmp_path / "nope.jfr")
    (tmp_path / "empty.jfr").write_bytes(b"")
    with pytest.raises(JfrError, match="empty"):
        summarize_jfr(tmp_path / "empty.jfr")


def test_not_jfr_and_old_format_are_refused_with_a_hint(tmp_path):
    p = tmp_path / "x.jfr"
    p.write_bytes(b"hello world, not a recording" * 5)
    with pytest.raises(JfrError, match="byte 0: not a JFR recording"):
        summarize_jfr(p)
    header = bytearray((FIXTURES / "jdk17-default.jfr").read_bytes()[:200])
    header[4:8] = (0).to_bytes(2, "big") + (9).to_bytes(2, "big")    # JDK 7 and 8
    p.write_bytes(bytes(header))
    with pytest.raises(JfrError, match="format 0.9 is not supported"):
        summarize_jfr(p)


def test_huge_claimed_chunk_size_is_refused_not_allocated(tmp_path):
    data = bytearray((FIXTURES / "jdk17-default.jfr").read_bytes())
    data[8:16] = (1 << 60).to_bytes(8, "big")
    p = tmp_path / "huge.jfr"
    p.write_bytes(bytes(data))
    with pytest.raises(JfrError, match="claims 1152921504606846976 bytes"):
        summarize_jfr(p)


def test_second_chunk_damaged_keeps_the_first(tmp_path):
    data = bytearray((FIXTURES / "jdk17-profile.jfr").read_bytes())
    first_size = int.from_bytes(data[8:16], "big")
    data[first_size:first_size + 4] = b"XXXX"
    p = tmp_path / "two.jfr"
    p.write_bytes(bytes(data))
    s = summarize_jfr(p)
    assert s["truncated"] and s["chunks"] == 1 and f"byte {first_size}" in s["damage"]
    assert 0 < s["gc"]["count"] < summary_of("jdk17-profile.jfr")["gc"]["count"]


def test_json_export_gives_the_same_gc_and_cpu():
    s = summarize_jfr(FIXTURES / "jdk17-default-export.json")
    b = summary_of("jdk17-default.jfr")
    for key in ("count", "pause_total_ms", "pause_max_ms", "heap_used_after_gc_max_mb"):
        assert close(s["gc"][key], b["gc"][key]), key
    assert s["cpu"] == b["cpu"]
    assert s["chunks"] == 0 and s["truncated"] is False


def test_json_that_is_not_an_export_is_refused(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"recording": 3}')
    with pytest.raises(JfrError, match="not a `jfr print --json` export"):
        summarize_jfr(p)


# -- helpers ---------------------------------------------------------------------------------

def test_percentile_is_nearest_rank():
    values = list(range(1, 101))
    assert percentile_nearest_rank(values, 99) == 99
    assert percentile_nearest_rank(values + [1000], 99) == 100
    assert percentile_nearest_rank([5.0], 99) == 5.0
    assert percentile_nearest_rank([], 99) is None


@pytest.mark.parametrize("text,ms", [("20 ms", 20.0), ("0 ns", 0.0), ("1 s", 1000.0),
                                     ("100 us", 0.1), ("off", None), (None, None)])
def test_threshold_parsing(text, ms):
    assert parse_threshold_ms(text) == ms


# -- the command -------------------------------------------------------------------------------

def run_cli(*argv):
    parser = argparse.ArgumentParser(prog="python -m analysis jfr")
    jfr_cli.add_arguments(parser)
    return jfr_cli.run(parser.parse_args([str(a) for a in argv]))


def test_cli_json_has_the_documented_keys(capsys):
    assert run_cli(FIXTURES / "jdk17-default.jfr", "--json") == 0
    out = json.loads(capsys.readouterr().out)
    g = golden("jdk17-default")
    assert out["gc"]["count"] == g["gc"]["count"]
    assert close(out["gc"]["pause_total_ms"], g["gc"]["pause_total_ms"])
    assert close(out["gc"]["pause_max_ms"], g["gc"]["pause_max_ms"])
    assert close(out["gc"]["pause_p99_ms"], g["gc"]["pause_p99_ms"])
    for key in ("jvm_user", "jvm_system", "machine"):
        assert close(out["cpu"][key], g["cpu"][key])
    assert out["allocation_rate_mb_s"] > 0
    assert out["truncated"] is False and out["covered_until"] > out["start_epoch_s"]


def test_cli_text_summary(capsys):
    cut = summarize_jfr(FIXTURES / "jdk17-default-cut.jfr")
    assert run_cli(FIXTURES / "jdk17-default-cut.jfr", "--attribute",
                   r"Workload\$.*=workload") == 0
    out = capsys.readouterr().out
    assert "TRUNCATED: data up to 2026-" in out
    assert f"GC           {cut['gc']['count']} collections" in out
    assert f"threshold {cut['threads']['park_threshold_ms']:g} ms" in out
    if cut["samples"]["unresolved"]:
        assert f"{cut['samples']['unresolved']} without a readable stack" in out
    profile = summary_of("jdk25-profile.jfr.gz")
    assert run_cli(FIXTURES / "jdk25-profile.jfr.gz", "--top", "3") == 0
    out = capsys.readouterr().out
    for h in profile["hot_methods"][:3]:
        assert f"{h['self_pct']:6.1f}  {h['total_pct']:7.1f}  {h['method']}\n" in out
    lines = out.splitlines()
    first = lines.index("hot methods   self %  total %  method") + 1
    listed = [ln for ln in lines[first:first + 4] if ln.startswith("             ")]
    assert len(listed) == 3
    assert f"safepoints   {profile['safepoint']['count']}," in out and "complete" in out


def test_cli_bad_attribute_spec():
    with pytest.raises(JfrError, match="REGEX=LABEL"):
        run_cli(FIXTURES / "jdk17-default.jfr", "--attribute", "nolabel")


def test_cli_through_the_dispatcher():
    out = subprocess.run([sys.executable, "-m", "analysis", "jfr", "/etc/hostname"],
                         cwd=REPO, capture_output=True, text=True, timeout=60)
    assert out.returncode == 1 and out.stderr.startswith("error: /etc/hostname: byte 0:")
    assert "Traceback" not in out.stderr


# -- live referee ------------------------------------------------------------------------------

@pytest.mark.jdk
def test_event_counts_match_live_jfr_summary():
    jfr = shutil.which("jfr")
    if jfr is None:
        pytest.skip("needs the JDK's jfr tool")
    out = subprocess.run([jfr, "summary", str(FIXTURES / "jdk17-profile.jfr")],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    counts = {line.split()[0]: int(line.split()[1]) for line in out.splitlines()
              if line.strip().startswith("jdk.") and len(line.split()) >= 3}
    s = summary_of("jdk17-profile.jfr")
    assert s["gc"]["count"] == counts["jdk.GarbageCollection"]
    assert s["samples"]["count"] == counts["jdk.ExecutionSample"]
    assert s["threads"]["park_events"] == counts["jdk.ThreadPark"]
    assert s["safepoint"]["count"] == counts["jdk.SafepointBegin"]
    assert s["allocation_samples"] == counts["jdk.ObjectAllocationSample"]


@pytest.mark.slow
@pytest.mark.jdk
def test_fresh_recording_from_this_machines_jdk_matches_jfr_print(tmp_path):
    """Records two seconds with whatever JDK is installed here (it may be newer than the
    fixtures' JDKs) and checks GC and CPU against that JDK's own `jfr print`."""
    tools = {name: shutil.which(name) for name in ("java", "javac", "jfr")}
    if None in tools.values():
        pytest.skip("needs java, javac and jfr")
    subprocess.run([tools["javac"], "-d", str(tmp_path), "--release", "11",
                    str(FIXTURES / "src" / "Workload.java")], check=True, timeout=120)
    rec = tmp_path / "fresh.jfr"
    subprocess.run([tools["java"], "-Xmx64m", "-Xms64m", "-cp", str(tmp_path),
                    f"-XX:StartFlightRecording=settings=default,filename={rec}",
                    "Workload", "2"], check=True, timeout=120, capture_output=True)
    printed = subprocess.run([tools["jfr"], "print", "--json", "--events",
                              "jdk.GarbageCollection,jdk.CPULoad", str(rec)],
                             check=True, timeout=120, capture_output=True, text=True).stdout
    events = json.loads(printed)["recording"]["events"]
    gcs = [e["values"] for e in events if e["type"] == "jdk.GarbageCollection"]
    cpu = [e["values"] for e in events if e["type"] == "jdk.CPULoad"]
    s = summarize_jfr(rec)
    assert s["gc"]["count"] == len(gcs) > 0
    from analysis.read.jfr.export import duration_ns
    assert close(s["gc"]["pause_total_ms"], sum(duration_ns(g["sumOfPauses"]) for g in gcs) / 1e6)
    assert close(s["cpu"]["machine"], sum(c["machineTotal"] for c in cpu) / len(cpu))
    assert s["truncated"] is False and s["warning_count"] == 0


class _MatchingAgain:
    """A pattern that fails the test if a frame is matched against it."""

    def fullmatch(self, frame):
        raise AssertionError(f"{frame} matched again")


def test_summaries_of_one_attribution_match_each_frame_once():
    """A run's recordings share their attribution: a frame is matched against the patterns in
    the first summary that meets it, and later summaries take its label (the same patterns
    give the same label); other patterns match anew."""
    attribution = [(r"org\.once\..*", "once")]
    first = Summary(attribution)
    first.samples(("org.once.App.run", "java.lang.Thread.run"), 3)
    second = Summary(attribution)
    second.attribution = [(_MatchingAgain(), "other")]
    second.samples(("org.once.App.run", "java.lang.Thread.run"), 2)
    assert first.label_counts == {"once": 3} and second.label_counts == {"once": 2}
    other = Summary([(r"java\..*", "jdk"), (r"org\.once\..*", "twice")])
    other.samples(("org.once.App.run", "java.lang.Thread.run"), 1)
    assert other.label_counts == {"twice": 1}


def test_a_cached_metadata_is_found_by_comparing_not_hashing(monkeypatch):
    """Each recording's metadata event (~110 KB) is a new bytes object: finding the parsed
    types by a dict lookup hashed all of it every time; the few cached events are compared
    instead (a length check, then memcmp), and the same Metadata comes back."""
    from collections import OrderedDict
    from analysis.read.jfr import metadata as md_module
    from analysis.read.jfr.chunks import HEADER_SIZE
    from tests.helpers import chunk

    class NoHashedLookups(OrderedDict):
        def get(self, key, default=None):
            raise AssertionError("metadata looked up by hash")
        __getitem__ = __contains__ = get

    monkeypatch.setattr(md_module, "_metadata_cache", NoHashedLookups())
    data = chunk(b"")
    first = md_module.metadata_for(data, HEADER_SIZE + 5, len(data))
    again = md_module.metadata_for(bytes(bytearray(data)), HEADER_SIZE + 5, len(data))
    assert again is first and list(md_module._metadata_cache.values()) == [first]


def test_a_share_is_rounded_once_per_distinct_count(monkeypatch):
    """The hot-method tables' percentages: 40 rows of methods with none, one or two samples
    round three shares, not 80 (rounding a float is a decimal conversion); a method in both
    tables has equal rows that are still separate objects."""
    import analysis.derive.jvm_summary as module
    s = Summary()
    s.sample_count = 30
    for i in range(30):
        s.self_counts[f"leaf{i}"] = 1
        s.total_counts[f"leaf{i}"] = 1
        s.total_counts[f"caller{i}"] = 2
    rounded = []

    def counting(x, digits=None):
        rounded.append(digits)
        return round(x, digits)
    monkeypatch.setattr(module, "round", counting, raising=False)
    result = jvm_summary(s)
    assert rounded.count(3) == 3     # 0, 1 and 2 samples
    assert [r["self_pct"] for r in result["hot_methods"][:2]] == [3.333, 3.333]
    assert result["hot_methods_by_total"][0]["total_pct"] == 6.667
    both = {r["method"]: r for r in result["hot_methods"]}
    shared = [r for r in result["hot_methods_by_total"] if r["method"] in both]
    monkeypatch.undo()
    assert all(r == both[r["method"]] and r is not both[r["method"]] for r in shared)


def test_the_jdk_label_of_a_jvm_is_made_once():
    """Seven times a recording (the summary and each event's folded stacks) and the same two
    strings for every recording of a JVM: made once per pair."""
    from analysis.read.jfr.summary import jdk_label
    name, version = "OpenJDK 64-Bit Server VM", "OpenJDK 64-Bit Server VM (99.0.1+7) for x"
    label = jdk_label(name, version)
    before = jdk_label.cache_info().hits
    assert jdk_label(name, version) == label == "OpenJDK 64-Bit Server VM 99.0.1+7"
    assert jdk_label.cache_info().hits == before + 1


def test_a_setting_text_is_parsed_once():
    """Every recording repeats the same few threshold and period texts: one regex match each
    per process, the same milliseconds."""
    text = "37 ms"
    first = parse_threshold_ms(text)
    before = parse_threshold_ms.cache_info().hits
    assert parse_threshold_ms(text) == first == 37.0
    assert parse_threshold_ms.cache_info().hits == before + 1
