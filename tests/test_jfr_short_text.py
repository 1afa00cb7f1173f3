"""A setting's name and value read by handlers.short_text (the JVM's short ASCII strings
without wire.read_string's calls): the same text, or the same error, as read_string."""
from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from analysis.derive.jvm_summary import summarize_and_fold
from analysis.read.jfr import handlers, native
from analysis.read.jfr.wire import StringRef, read_string
from tests.conftest import REPO
from tests.helpers import jstring


def _outcome(read, data, at):
    try:
        text = read(data, at)
    except Exception as exc:   # noqa: BLE001 (the reference's error, compared)
        return type(exc).__name__, str(exc)
    # a constant-pool reference has no equality of its own: compare its key
    return ("StringRef", text.key) if isinstance(text, StringRef) else text


@settings(max_examples=400, deadline=None)
@given(st.one_of(
    st.text(max_size=140).map(lambda s: jstring(s)),
    st.text(max_size=140).map(lambda s: jstring(s, 4)),
    st.text(alphabet=st.characters(max_codepoint=255), max_size=20).map(lambda s: jstring(s, 5)),
    st.tuples(st.sampled_from([3, 4]), st.binary(max_size=140)).map(
        lambda t: bytes([t[0], len(t[1]) % 256]) + t[1]),
    st.binary(max_size=8)), st.binary(max_size=4), st.integers(0, 3))
def test_short_text_reads_as_read_string(encoded, tail, cut):
    """Any string encoding, lengths past 127 and past the data, bytes that are no UTF-8 or
    ASCII, a cut tail: short_text gives what read_string gives (or raises its error)."""
    data = b"\x00\x00" + encoded + tail
    data = data[:len(data) - cut] if cut < len(data) - 2 else data
    for read in (bytes, memoryview):
        assert _outcome(handlers.short_text, read(data), 2) == \
            _outcome(lambda d, a: read_string(d, a)[0], read(data), 2)


def test_a_runs_settings_are_read_without_read_string(monkeypatch):
    """A run's recording: its ~17 reported settings (each a name and a value) and the JVM's
    name and version are read by short_text alone, and the summary keeps them."""
    calls = []
    monkeypatch.setattr(handlers, "read_string",
                        lambda *a: calls.append(1) or read_string(*a))
    summary, _folds = summarize_and_fold(REPO / "runs" / "pool-vs-virtual" / "virtual" /
                                         "r25.2.jfr")
    assert summary["samples"]["period_ms"] == 20.0 and " 25." in summary["jdk"]
    assert calls == [] or native.get() is None
