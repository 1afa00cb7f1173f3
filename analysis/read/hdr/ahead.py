"""A log's groups read and decoded ahead by a pool of threads, handed out in file order: hgrm's
use of a second core (log.iter_batches with threads > 1).

Why threads and not a second process: a group's heavy steps are compiled calls that let go of
the GIL (lc_scan_lines, the base64 and inflating of group_inflate, lc_kinds, lc_bodies), and so
is the adding (lc_add_bodies) and the printing that the caller does with each group in turn. So
while the caller adds group n, the pool inflates groups n + 1 and on, with nothing pickled or
handed between processes. The reading itself stays one group at a time, in order, under a lock
(the header state advances line by line); only a group's decoding runs side by side.

The caller sees what the sequential reader gives: the same (batch, warnings) a group, in order,
and its HeaderState as it was once that group was read (a snapshot of its fields, taken by the
reading thread, which reads into a copy of its own). An error raised while reading or decoding
a group is raised to the caller where that group would have come."""
from __future__ import annotations

import copy
import threading

# Groups read past the one the caller has taken, at most: each holds its lines' texts and its
# inflated bodies (~2 MB for the 24-hour log's 512 lines of 2,000 values).
AHEAD = 4
_END = object()


class _Pool:
    def __init__(self, read_groups, state, decode, threads: int):
        self.reading_state = copy.deepcopy(state)
        # (items, read warnings) a group, read under `reading`
        self.groups = read_groups(self.reading_state)
        self.decode = decode              # (items, read warnings) -> what the caller yields
        self.reading = threading.Lock()
        self.done = threading.Condition()
        self.results: dict[int, tuple] = {}  # group number -> (outcome, state snapshot)
        self.taken = 0                    # groups read so far
        self.handed = 0                   # groups handed to the caller so far
        self.stop = False
        self.threads = [threading.Thread(target=self._work, name=f"hlog-ahead-{k}", daemon=True)
                        for k in range(threads)]

    def _next_group(self):
        """-> (number, (items, warnings) or an exception or _END, state snapshot), or None
        when the pool stops."""
        with self.done:
            while not self.stop and self.taken - self.handed >= AHEAD:
                self.done.wait()
            if self.stop:
                return None
        with self.reading:
            if self.stop:
                return None
            number = self.taken
            try:
                group = next(self.groups)
            except StopIteration:
                group = _END
            except BaseException as exc:       # (the caller raises it in its place)
                group = exc
            if group is _END or isinstance(group, BaseException):
                self.stop = True
            self.taken += 1
            return number, group, dict(self.reading_state.__dict__)

    def _work(self):
        while True:
            got = self._next_group()
            if got is None:
                return
            number, group, snapshot = got
            outcome = group
            if isinstance(group, tuple):
                try:
                    outcome = self.decode(*group)
                except BaseException as exc:
                    outcome = exc
            with self.done:
                self.results[number] = (outcome, snapshot)
                self.done.notify_all()
            if group is _END or isinstance(group, BaseException):
                return

    def take(self, number: int):
        with self.done:
            while number not in self.results:
                self.done.wait()
            self.handed = number + 1
            self.done.notify_all()
            return self.results.pop(number)

    def close(self):
        with self.done:
            self.stop = True
            self.done.notify_all()
        for thread in self.threads:
            if thread.is_alive() and thread is not threading.current_thread():
                thread.join()


def decoded_ahead(read_groups, state, decode, threads: int):
    """decode(items, warnings) of each group that read_groups(its own HeaderState) yields, in
    order, `threads` groups decoded at once; `state` holds what the reading had set once the
    group just yielded was read (finally, once the last was)."""
    pool = _Pool(read_groups, state, decode, threads)
    for thread in pool.threads:
        thread.start()
    try:
        number = 0
        while True:
            outcome, snapshot = pool.take(number)
            state.__dict__.update(snapshot)
            if outcome is _END:
                return
            if isinstance(outcome, BaseException):
                raise outcome
            yield outcome
            number += 1
    finally:
        pool.close()
        pool.groups.close()
