"""Two processes reading one log in turns (hgrm on two cores; see processor.process).

Both processes read every line (splitting lines is ~5 % of the work, and each then knows the
header state at every group), and each takes every other group of lines: it inflates the
group's payloads, decodes and adds them up, and formats the group's interval lines. Only the
adding is in file order: the running totals' percentiles need the counts of every interval
before. So the accumulated counts array lives in memory both processes share (`Arena`), and
the turn to add passes from one process to the other with a small message (`Turns`); while
one adds, the other inflates or formats. At the end the main process takes the other's lines.

Anything out of the ordinary (a warning, a payload the fused decoder leaves to the general
one, a DoubleHistogram, an error, timestamps that go backwards) abandons the split
(`Abandon`): the caller then reads the log the usual way, whose output, warnings and errors
stand. Either way the output is the same."""
from __future__ import annotations

import mmap
import os
import pickle

import numpy as np

# The largest accumulated counts array the arena holds (entries; a power of two, as
# running.IntegerRunning rounds it): 2^22 entries (32 MB of address space, of which only the
# pages used are ever touched) covers 3 significant digits up to 2^63 and 5 digits up to ~2^44.
ARENA_ENTRIES = 1 << 22
STATE_ENTRIES = 11     # running.IntegerRunning's compiled state (_native.c: store_state)
BLOCK_BITS = 5         # running.BLOCK_BITS


class Abandon(Exception):
    """The split cannot give the usual reader's result: read the log the usual way."""


class Arena:
    """An anonymous shared mapping made before the fork: the accumulator's counts array, its
    block sums and its state, at fixed places, so that either process works on them in turn."""

    def __init__(self, entries: int = ARENA_ENTRIES):
        self.entries = entries
        blocks = entries >> BLOCK_BITS
        self.memory = mmap.mmap(-1, (entries + blocks + STATE_ENTRIES) * 8)
        words = np.frombuffer(self.memory, np.int64)
        self._dense = words[:entries]
        self._blocks = words[entries:entries + blocks]
        self._state = words[entries + blocks:]

    def dense(self, size: int) -> np.ndarray:
        if size > self.entries:
            raise Abandon(f"a counts array of {size} entries")
        return self._dense[:size]

    def blocks(self, size: int) -> np.ndarray:
        return self._blocks[:size]

    def state(self) -> np.ndarray:
        return self._state


class Turns:
    """This process's side of the two (0: the main process, 1: the forked one): which groups
    it takes (`mine`), and the turn to add, received (`wait`) and passed on (`pass_on`) with
    what the adding carries from group to group (a small picklable object)."""

    def __init__(self, side: int, conn):
        self.side, self.conn = side, conn

    def mine(self, group: int) -> bool:
        return group % 2 == self.side

    def wait(self, group: int):
        """What the other process passed on after the group before `group`."""
        try:
            message = pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            raise Abandon("the other process stopped") from None
        if message[0] != "turn" or message[1] != group:
            raise Abandon(f"the other process gave up ({message[1]})")
        return message[2]

    def pass_on(self, group: int, carried) -> None:
        """Hand the turn for `group` (the next one) to the other process."""
        self.send(("turn", group, carried))

    def send(self, message) -> None:
        try:
            self.conn.send_bytes(pickle.dumps(message, pickle.HIGHEST_PROTOCOL))
        except OSError:
            raise Abandon("the other process stopped") from None

    def receive(self):
        try:
            return pickle.loads(self.conn.recv_bytes())
        except (EOFError, OSError):
            raise Abandon("the other process stopped") from None


def run_split(own_turns, *args):
    """own_turns(turns, arena, *args) on both sides: the forked process's result (sent when it
    is done) and this one's, as (this side's, the other's). Raises Abandon when either side
    abandons, or the process cannot be had; the forked one is gone either way."""
    import multiprocessing
    context = multiprocessing.get_context("fork")
    here, there = context.Pipe(duplex=True)
    arena = Arena()
    partner = context.Process(target=_partner, name="hlog-other-half",
                              args=(own_turns, there, arena, args))
    try:
        partner.start()
    except OSError as exc:      # no process to be had (EAGAIN, ENOMEM)
        here.close()
        there.close()
        raise Abandon(f"no second process: {exc}") from None
    there.close()               # (so that a partner that dies ends the connection)
    try:
        mine = own_turns(Turns(0, here), arena, *args)
        done = Turns(0, here).receive()
        if done[0] != "done":
            raise Abandon(f"the other process gave up ({done[1]})")
        return mine, done[1]
    finally:
        here.close()
        if partner.is_alive():
            partner.terminate()
        partner.join()
        # (the arena stays mapped while the accumulator's arrays, views of it, are in use)


def _partner(own_turns, conn, arena, args) -> None:
    """The forked process: its turns, then its result; on Abandon or any error a message
    saying so (the main process then reads the log the usual way, which reports any error)."""
    turns = Turns(1, conn)
    try:
        result = own_turns(turns, arena, *args)
        turns.send(("done", result))
    except BaseException as exc:     # (any failure here: the usual reader says it there)
        try:
            turns.send(("abandon", repr(exc)))
        except Abandon:
            pass
    finally:
        conn.close()
        os._exit(0)
