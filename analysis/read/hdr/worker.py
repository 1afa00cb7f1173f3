"""The read-ahead worker: a forked process splits lines and inflates payloads one group ahead
of the decoder (see `log.iter_batches`)."""
from __future__ import annotations

import os

import numpy as np

from analysis.errors import HlogError
from analysis.read.hdr.batch import unjoin, inflate_items
from analysis.read.hdr.groups import item_groups
from analysis.read.hdr.histogram import Layout, layout_for
from analysis.read.hdr.lines import HeaderState
from analysis.read.hdr.payload import V2_MAX_WORD_SIZE, DecodedPayload

# Inputs at least this large are read with a second process when parallel=None (~7,000
# intervals of 2,000 values); below it the worker's start-up costs more than it saves.
PARALLEL_MIN_BYTES = 8 << 20
PIPE_BYTES = 1 << 20     # Linux's default limit for an unprivileged pipe buffer
# No worker when the 1-minute load average leaves less than this much of a CPU free: the two
# processes then wait for each other. Measured on 2 CPUs at load ~7 (the 24-hour log, run
# alternately): in one process 4.7-7.0 s wall, with the worker 6.6-9.5 s.
BUSY_MARGIN = 0.5


def _load() -> float:
    try:
        return os.getloadavg()[0]
    except (AttributeError, OSError):
        return 0.0


def use_worker(path: str, text, parallel: bool | None) -> bool:
    if not parallel and parallel is not None:
        return False
    import multiprocessing
    if multiprocessing.current_process().daemon:    # (may not start processes)
        return False
    if parallel:
        return "fork" in multiprocessing.get_all_start_methods()
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    if cpus < 2 or "fork" not in multiprocessing.get_all_start_methods():
        return False
    if _load() > cpus - BUSY_MARGIN:
        return False
    try:
        size = len(text) if text is not None else os.path.getsize(path)
    except OSError:
        return False
    return size >= PARALLEL_MIN_BYTES


def _dumps(message) -> bytes:
    """Pickle a worker message; Layouts travel as their three parameters (the receiver gets
    its own cached Layout object), DecodedPayloads as their fields (faster than their dict)."""
    import copyreg
    import io
    import pickle
    buffer = io.BytesIO()
    pickler = pickle.Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = {**copyreg.dispatch_table, Layout: _reduce_layout,
                              DecodedPayload: _reduce_payload}
    pickler.dump(message)
    return buffer.getbuffer()


def _reduce_layout(layout):
    return layout_for, (layout.lowest_discernible_value, layout.highest_trackable_value,
                        layout.significant_digits)


def _reduce_payload(p: DecodedPayload):
    return DecodedPayload, (p.layout, p.word_size, p.counts_bytes, p.double_ratio,
                            p.double_config)


def pack_payloads(payloads):
    """A group of plain payloads (every line of a normal log: V2 counts ending on a whole
    varint, one layout, no DoubleHistogram) as (layout parameters, ratio, every counts body
    joined, their lengths); None for any other group. Cheaper to send and to receive than the
    DecodedPayloads: one bytes object, and the receiver's decoder takes the bodies joined."""
    if not payloads:
        return None
    first = payloads[0]
    layout, ratio = first.layout, first.double_ratio
    if not all(p.layout is layout and p.word_size == V2_MAX_WORD_SIZE and
               p.double_config is None and p.double_ratio == ratio and
               (not p.counts_bytes or p.counts_bytes[-1] < 0x80) for p in payloads):
        return None
    bodies = [p.counts_bytes for p in payloads]
    lengths = np.fromiter(map(len, bodies), np.int64, len(bodies))
    return ((layout.lowest_discernible_value, layout.highest_trackable_value,
             layout.significant_digits), ratio, b"".join(bodies), lengths)


def unpack_payloads(packed):
    """pack_payloads' group -> (payloads, raws, errors, joined) for batch.decode_batch: the
    rows share one DecodedPayload whose counts are in `joined` = (bodies joined, lengths)."""
    params, ratio, joined, lengths = packed
    payload = DecodedPayload(layout_for(*params), V2_MAX_WORD_SIZE, b"", ratio)
    n = lengths.size
    return [payload] * n, [None] * n, {}, (joined, lengths)


def main_is_waiting(conn) -> bool:
    """Whether the pipe to the main process is empty: it has taken every group sent, so the
    worker is the slower of the two (on Linux; elsewhere, never)."""
    import array
    import fcntl
    import termios
    pending = array.array("i", [0])
    try:
        fcntl.ioctl(conn.fileno(), termios.FIONREAD, pending, True)
    except OSError:
        return False
    return pending[0] == 0


def _read_ahead(conn, lines, path: str, state: HeaderState, batch_size: int,
                keep_raws: bool, share: bool) -> None:
    """The worker process: split lines and inflate payloads, one message per group of lines:
    ("group", items, read warnings, (payloads, raws, errors), header state after the group),
    then ("done", final header state), or ("error", exception). `share`: a group found
    with the main process waiting for one goes as its lines ("lines", items, read warnings,
    header state), for the main process to inflate while this one inflates the next: the two
    then share the inflating as their speeds allow (the output is the same either way)."""
    try:
        for items, read_warnings in item_groups(lines, path, state, batch_size):
            if share and items and main_is_waiting(conn):
                conn.send_bytes(_dumps(("lines", items, read_warnings, state)))
                continue
            inflated = inflate_items(items)
            payloads, raws, errors = inflated[:3]
            joined = inflated[3] if len(inflated) == 4 else None
            # (a packed message carries one layout: a group of several goes unpacked)
            if joined is not None and (keep_raws or any(p is not payloads[0] for p in payloads)):
                payloads, joined = unjoin(payloads, joined), None
            if not keep_raws:
                raws = None
            items = [item[:7] + (None,) for item in items]   # (the payload text is done with)
            if joined is not None:     # (inflate_items packed them already)
                layout = payloads[0].layout
                packed = ((layout.lowest_discernible_value, layout.highest_trackable_value,
                           layout.significant_digits), payloads[0].double_ratio, *joined)
            else:
                packed = None if keep_raws or errors else pack_payloads(payloads)
            if packed is not None:
                # the bodies (~0.5 MB a group of the 24-hour log) go as they are, after the
                # message: pickled, they were copied twice more (into the pickle, out of it)
                params, ratio, blob, lengths = packed
                conn.send_bytes(_dumps(("packed", items, read_warnings, (params, ratio, lengths),
                                        state)))
                conn.send_bytes(blob)
            else:
                conn.send_bytes(_dumps(("group", items, read_warnings, (payloads, raws, errors),
                                        state)))
        conn.send_bytes(_dumps(("done", state)))
    except BaseException as exc:     # (the main process raises it, or reports the failure)
        try:
            message = _dumps(("error", exc))
        except Exception:
            message = _dumps(("error", HlogError(f"reading failed: {exc!r}", path=path)))
        try:
            conn.send_bytes(message)
        except OSError:
            pass
    finally:
        conn.close()


def worker_groups(lines, path: str, state: HeaderState, batch_size: int, keep_raws: bool,
                  share: bool = False):
    """item_groups' groups, each with its (payloads, raws, errors) from inflate_items, made
    by a forked worker process one group ahead (with `share`, some as None: see _read_ahead;
    the caller inflates those). The worker's header state is copied into
    `state` as each group arrives, as if it had been read here; an exception in the worker is
    raised here, and a worker that dies raises one HlogError."""
    import multiprocessing
    import pickle
    context = multiprocessing.get_context("fork")
    receiver, sender = context.Pipe(duplex=False)
    try:   # room for a whole message, so that the worker need not wait for this process
        import fcntl
        fcntl.fcntl(sender.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)
    except (ImportError, AttributeError, OSError):
        pass
    worker = context.Process(target=_read_ahead, name="hlog-reader",
                             args=(sender, lines, path, state, batch_size, keep_raws,
                                   share))
    try:
        worker.start()
    except OSError:    # no process to be had (EAGAIN, ENOMEM): read here
        receiver.close()
        sender.close()
        yield from ((items, read_warnings, None)
                    for items, read_warnings in item_groups(lines, path, state, batch_size))
        return
    sender.close()     # so that a worker that dies ends the pipe

    def receive() -> bytes:
        try:
            return receiver.recv_bytes()
        except (EOFError, OSError):
            worker.join(5)
            code = worker.exitcode
            how = (f"killed by signal {-code}" if code is not None and code < 0
                   else f"exit status {code}")
            raise HlogError(f"the reader process stopped unexpectedly ({how})",
                            path=path) from None

    try:
        while True:
            message = pickle.loads(receive())
            if message[0] == "packed":
                _, items, read_warnings, (params, ratio, lengths), new_state = message
                blob = receive()
                state.__dict__.update(new_state.__dict__)
                yield items, read_warnings, unpack_payloads((params, ratio, blob, lengths))
            elif message[0] == "lines":
                _, items, read_warnings, new_state = message
                state.__dict__.update(new_state.__dict__)
                yield items, read_warnings, None
            elif message[0] == "group":
                _, items, read_warnings, (payloads, raws, errors), new_state = message
                state.__dict__.update(new_state.__dict__)
                yield items, read_warnings, (payloads, raws or [None] * len(items), errors)
            elif message[0] == "done":
                state.__dict__.update(message[1].__dict__)
                return
            else:
                raise message[1]
    finally:
        receiver.close()
        if worker.is_alive():
            worker.terminate()
        worker.join()
