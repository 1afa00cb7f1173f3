"""Per-request accounting (issue 25): a cell's CPU per request split into the request handler,
coordination, other Java code and GC/VM, and the rest of its latency, waiting.

The inputs, pooled over the cell's repetitions that have both a CPU figure and a JFR recording:
- the server process's CPU in each window (model.CpuWindow: counts.json's
  server.cpu_share_window × machine.cores × window length, else the recording's jdk.CPULoad)
  and the replies it sent in the window: CPU per request = CPU seconds / replies;
- the window's jdk.ExecutionSample events: each is one thread seen running Java code at one
  sampling tick, so it stands for one sampling period of CPU. Samples × period is the Java CPU
  the samples account for, split by the samples' jfr_attribution labels (run.yml's
  cpu_accounting lists which labels are handler and which coordination; the rest is other
  Java). What the process used beyond it is GC/VM: GC, JIT and VM threads, which the sampler
  never sees, and Java threads in native code or system calls, which it does not count either.
Waiting is the latency (mean, p99) minus the CPU per request: queueing, parking on
dependencies, the network. Pure arithmetic on the model; no I/O.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

from analysis.model import Percentile, Repetition

KINDS = ("handler", "coordination")


@dataclass(frozen=True)
class Waiting:
    """Latency minus CPU per request: ms and share of the latency."""

    waiting_ms: float | None
    waiting_pct: float | None
    # The latency is censored (timed-out requests): both are at least these, the share too
    # since (L - cpu) / L grows with L.
    lower_bound: bool = False


@dataclass(frozen=True)
class CpuAccount:
    repetitions: int                        # the repetitions pooled
    replies: int                            # the server's replies in their windows
    cpu_s: float                            # the process's CPU in those windows
    sources: tuple[str, ...]                # CpuWindow.source values used, sorted
    samples: int                            # execution samples with a readable stack
    period_ms: float
    cpu_ms: float                           # per request: all of the process's CPU
    handler_ms: float                       # per request: samples labelled handler
    coordination_ms: float
    other_java_ms: float
    gc_vm_ms: float                         # per request: CPU the samples do not account for
    sampled_over_cpu: bool                  # samples × period exceeded the CPU: scaled to it
    mean: Waiting
    p99: Waiting


def _labelled(summary: dict[str, Any], labels: Sequence[str]) -> int:
    wanted = set(labels)
    return sum(a.get("samples") or 0 for a in summary.get("attribution") or []
               if a.get("label") in wanted)


def _usable(r: Repetition) -> bool:
    if r.cpu_window is None or r.jvm is None or not r.cpu_window.replies:
        return False
    s = r.jvm.summary
    return (isinstance(s.get("attribution"), list) and isinstance(s.get("samples"), dict)
            and s["samples"].get("period_ms") is not None)


def waiting(latency: Percentile | None, cpu_ms: float) -> Waiting:
    if latency is None or not latency.known:
        return Waiting(None, None)
    total = latency.bound()
    rest = max(0.0, total - cpu_ms)
    return Waiting(rest, 100.0 * rest / total if total > 0 else None,
                   lower_bound=latency.censored)


def account(repetitions: Sequence[Repetition], kinds: dict[str, Sequence[str]],
            mean: Percentile | None, p99: Percentile | None) -> CpuAccount | None:
    """The cell's accounting, or None when no repetition has both the process's CPU and a
    recording with labelled samples and its sampling period."""
    used = [r for r in repetitions if _usable(r)]
    if not used:
        return None
    replies = sum(r.cpu_window.replies for r in used)
    cpu_s = sum(r.cpu_window.cpu_s for r in used)
    samples = 0
    labelled = dict.fromkeys(KINDS, 0)
    java_s = 0.0
    periods = set()
    for r in used:
        s = r.jvm.summary
        n = (s["samples"].get("count") or 0) - (s["samples"].get("unresolved") or 0)
        samples += n
        period = s["samples"]["period_ms"]
        periods.add(period)
        java_s += n * period / 1000.0
        for kind in KINDS:
            labelled[kind] += _labelled(s, kinds.get(kind, ()))
    over = java_s > cpu_s
    java_s = min(java_s, cpu_s)
    per_request = 1000.0 / replies             # seconds of CPU -> ms per request

    def share(count: int) -> float:
        return java_s * count / samples * per_request if samples else 0.0
    handler, coordination = share(labelled["handler"]), share(labelled["coordination"])
    java_ms = java_s * per_request
    cpu_ms = cpu_s * per_request
    return CpuAccount(
        repetitions=len(used), replies=replies, cpu_s=cpu_s,
        sources=tuple(sorted({r.cpu_window.source for r in used})), samples=samples,
        period_ms=min(periods), cpu_ms=cpu_ms, handler_ms=handler,
        coordination_ms=coordination, other_java_ms=java_ms - handler - coordination,
        gc_vm_ms=cpu_ms - java_ms, sampled_over_cpu=over,
        mean=waiting(mean, cpu_ms), p99=waiting(p99, cpu_ms))
