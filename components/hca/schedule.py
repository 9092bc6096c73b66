"""Rank programs: what a workload's ranks do, as operations with dependencies (the GOAL model).

A :class:`Schedule` gives each of ``num_ranks`` ranks a program of
operations: send *size* bytes to a rank with a tag, receive from a rank
with a tag, compute for a time.  An operation starts once every operation
it ``requires`` has completed and every one it ``irequires`` has started
(Hoefler et al.'s GOAL, the schedule format of LogGOPSim); operations with
nothing left to wait for run concurrently.  Sends and receives match as in
MPI, by (source, tag), in the order they were posted; a receive may name
source or tag ``-1``, any.

Schedules come from GOAL files (:mod:`~ibfabric.components.hca.goal`),
from the built-in collectives (:mod:`ibfabric.plugins.workloads`) or from
Python through :class:`ScheduleBuilder`::

    b = ScheduleBuilder(2)
    s = b.send(0, 1, 4096, tag=7)
    r = b.recv(1, 0, 4096, tag=7)
    b.calc(1, 500, requires=[r])
    schedule = b.build()

:meth:`Schedule.check` finds what would make a run wait forever before it
starts: a dependency cycle, a send no receive can match, a receive no send
can satisfy; each error names the rank and the operation's label.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence

import attrs

from ibfabric.errors import ConfigError

__all__ = ["ANY", "KINDS", "Op", "Schedule", "ScheduleBuilder", "ScheduleError"]

#: a receive's source or tag that matches any
ANY = -1
#: the operation kinds
KINDS = ("send", "recv", "calc")


class ScheduleError(ConfigError):
    """A schedule that cannot run: its message starts with ``file:line:col:`` where the schedule came
    from a file, and names the rank and the operation's label."""


@attrs.frozen
class Op:
    """One operation of a rank's program.

    ``size`` is bytes for ``send`` and ``recv`` and nanoseconds for ``calc``;
    ``peer`` the destination of a send, the source of a receive (``ANY``: any
    source); ``tag`` its tag (``ANY`` on a receive: any tag); ``cpu`` and
    ``nic`` as GOAL gives them (calcs on one cpu of a rank run one at a
    time); ``requires`` and ``irequires`` the indices, in the rank's program,
    of the operations it waits to have completed and to have started;
    ``phase`` groups operations for measurement (the repetition of a
    collective); ``group`` makes sends one IB multicast message; ``location``
    is ``file:line:col`` where it was read.
    """

    kind: str = attrs.field(validator=attrs.validators.in_(KINDS))
    label: str
    size: int
    peer: int = -1
    tag: int = 0
    cpu: int = 0
    nic: int = 0
    requires: tuple[int, ...] = ()
    irequires: tuple[int, ...] = ()
    phase: int = attrs.field(default=0, eq=False)
    #: a send's IB multicast group: the sends of a rank to one group, with one tag and size, posted
    #: together, go as one multicast message (not part of GOAL: written as the sends they stand for)
    group: str = attrs.field(default="", eq=False)
    location: str | None = attrs.field(default=None, eq=False)

    def describe(self) -> str:
        """The operation as a GOAL line without its label: ``send 8b to 3 tag 0``."""
        if self.kind == "calc":
            return f"calc {self.size}" + (f" cpu {self.cpu}" if self.cpu else "")
        way = "to" if self.kind == "send" else "from"
        extra = (f" cpu {self.cpu}" if self.cpu else "") + (f" nic {self.nic}" if self.nic else "")
        return f"{self.kind} {self.size}b {way} {self.peer} tag {self.tag}{extra}"


@attrs.frozen
class Schedule:
    """The programs of ``num_ranks`` ranks: ``ranks[r]`` is rank r's tuple of :class:`Op`."""

    num_ranks: int
    ranks: tuple[tuple[Op, ...], ...]
    name: str = attrs.field(default="", eq=False)
    source: str | None = attrs.field(default=None, eq=False)

    def __attrs_post_init__(self):
        if len(self.ranks) != self.num_ranks:
            raise ScheduleError(f"a schedule of {self.num_ranks} ranks has {len(self.ranks)} programs")

    @property
    def operations(self) -> int:
        """The number of operations of all ranks."""
        return sum(len(p) for p in self.ranks)

    def bytes_sent(self) -> int:
        """The bytes of every send."""
        return sum(op.size for p in self.ranks for op in p if op.kind == "send")

    def where(self, rank: int, i: int) -> str:
        """``file:line:col: rank R, label`` (without the location when there is none)."""
        op = self.ranks[rank][i]
        head = f"{op.location}: " if op.location else ""
        return f"{head}rank {rank}, {_name(op, i)}"

    def check(self) -> "Schedule":
        """Check that the schedule can run to its end; return it.

        Raises
        ------
        ScheduleError
            For a peer that is not a rank, a dependency cycle within a rank, or
            sends and receives that cannot all match (counted per source,
            destination and tag, receives of any source or tag taking what is
            left): the first such operation, by rank and label.
        """
        n = self.num_ranks
        for r, prog in enumerate(self.ranks):
            for i, op in enumerate(prog):
                if op.kind == "calc":
                    if op.size < 0:
                        raise ScheduleError(f"{self.where(r, i)}: a calc time must be >= 0 (got {op.size})")
                    continue
                if op.size < 0:
                    raise ScheduleError(f"{self.where(r, i)}: a message size must be >= 0 (got {op.size})")
                lowest = ANY if op.kind == "recv" else 0
                if not lowest <= op.peer < n:
                    raise ScheduleError(f"{self.where(r, i)}: {op.describe()}: rank {op.peer} does not exist"
                                        f" (the schedule has ranks 0..{n - 1})")
                if op.kind == "send" and op.tag < 0:
                    raise ScheduleError(f"{self.where(r, i)}: {op.describe()}: a send needs a tag >= 0")
                for d in op.requires + op.irequires:
                    if not 0 <= d < len(prog):
                        raise ScheduleError(f"{self.where(r, i)}: depends on operation {d}, which rank {r} lacks")
            self._check_cycles(r)
        self._check_matching()
        return self

    def _check_cycles(self, r: int) -> None:
        prog = self.ranks[r]
        state = [0] * len(prog)  # 0 new, 1 on the path, 2 done
        for root in range(len(prog)):
            if state[root]:
                continue
            stack = [(root, iter(prog[root].requires + prog[root].irequires))]
            state[root] = 1
            path = [root]
            while stack:
                node, it = stack[-1]
                nxt = next(it, None)
                if nxt is None:
                    state[node] = 2
                    stack.pop()
                    path.pop()
                elif state[nxt] == 1:
                    cyc = path[path.index(nxt):] + [nxt]
                    names = " -> ".join(_name(prog[k], k) for k in cyc)
                    raise ScheduleError(f"{self.where(r, nxt)}: a dependency cycle: {names} (each requires the next)")
                elif state[nxt] == 0:
                    state[nxt] = 1
                    path.append(nxt)
                    stack.append((nxt, iter(prog[nxt].requires + prog[nxt].irequires)))

    def _check_matching(self) -> None:
        sends: Counter = Counter()  # (src, dst, tag) -> count
        first_send: dict = {}
        recvs: list[tuple[int, int, Op]] = []
        for r, prog in enumerate(self.ranks):
            for i, op in enumerate(prog):
                if op.kind == "send":
                    key = (r, op.peer, op.tag)
                    sends[key] += 1
                    first_send.setdefault(key, (r, i))
                elif op.kind == "recv":
                    recvs.append((r, i, op))
        # exact receives first, then those with a wildcard, each taking from what is left.  Where a
        # rank posts wildcard receives, greedy matching may miss a matching that exists: its
        # receives are left to the run, which reports a wait that never ends by rank and label
        wild = {r for r, _, op in recvs if op.peer == ANY or op.tag == ANY}
        order = sorted(recvs, key=lambda x: ((x[2].peer == ANY) + (x[2].tag == ANY), x[0], x[1]))
        for r, i, op in order:
            keys = [k for k in _candidates(sends, r, op) if sends[k] > 0]
            if not keys:
                if r in wild:
                    continue
                src = "any rank" if op.peer == ANY else f"rank {op.peer}"
                tag = "any tag" if op.tag == ANY else f"tag {op.tag}"
                raise ScheduleError(f"{self.where(r, i)}: {op.describe()}: no send from {src} to rank {r} with"
                                    f" {tag} is left to match it (the run would wait forever)")
            sends[keys[0]] -= 1
        for key, left in sorted(sends.items()):
            if left > 0 and key[1] not in wild:
                r, i = first_send[key]
                op = self.ranks[r][i]
                raise ScheduleError(f"{self.where(r, i)}: {op.describe()}: {left} of the sends from rank {r} to rank"
                                    f" {key[1]} with tag {key[2]} match no receive at rank {key[1]}")


def _candidates(sends: Counter, dst: int, op: Op) -> list[tuple[int, int, int]]:
    if op.peer != ANY and op.tag != ANY:
        return [(op.peer, dst, op.tag)]
    return sorted(k for k in sends if k[1] == dst and op.peer in (ANY, k[0]) and op.tag in (ANY, k[2]))


def _name(op: Op, i: int) -> str:
    return op.label if op.label else f"operation {i + 1} (unlabelled)"


class ScheduleBuilder:
    """Builds a :class:`Schedule` operation by operation (what the built-in collectives use).

    Each method appends one operation to a rank's program and returns its
    index there, which later operations of the same rank name in
    ``requires``/``irequires``.  Labels are ``l1``, ``l2``... per rank, as
    LogGOPSim's Schedgen writes them.
    """

    def __init__(self, num_ranks: int, name: str = ""):
        if isinstance(num_ranks, bool) or not isinstance(num_ranks, int) or num_ranks < 1:
            raise ScheduleError(f"a schedule needs at least one rank (got {num_ranks!r})")
        self.num_ranks = num_ranks
        self.name = name
        self.progs: list[list[Op]] = [[] for _ in range(num_ranks)]
        #: the phase (repetition) new operations belong to
        self.phase = 0
        #: per rank, what its first operations of a repetition require (the built-in collectives)
        self.entry: list[list[int]] = [[] for _ in range(num_ranks)]
        #: the first tag a repetition uses
        self.tag_base = 0

    def _add(self, rank: int, kind: str, size: int, peer: int, tag: int, requires: Iterable[int],
             irequires: Iterable[int], cpu: int = 0, group: str = "") -> int:
        prog = self.progs[rank]
        i = len(prog)
        prog.append(Op(kind, f"l{i + 1}", int(size), int(peer), int(tag), cpu, 0, tuple(sorted(set(requires))),
                       tuple(sorted(set(irequires))), self.phase, group))
        return i

    def send(self, rank: int, dst: int, size: int, tag: int = 0, requires: Iterable[int] = (),
             irequires: Iterable[int] = (), group: str = "") -> int:
        """Rank *rank* sends *size* bytes to *dst* with *tag* (through IB multicast group *group*, if given:
        the rank's sends to one group with one tag and size that start together are one message)."""
        return self._add(rank, "send", size, dst, tag, requires, irequires, group=group)

    def recv(self, rank: int, src: int, size: int, tag: int = 0, requires: Iterable[int] = (),
             irequires: Iterable[int] = ()) -> int:
        """Rank *rank* receives *size* bytes from *src* (``ANY``) with *tag* (``ANY``)."""
        return self._add(rank, "recv", size, src, tag, requires, irequires)

    def calc(self, rank: int, time_ns: int, requires: Iterable[int] = (), irequires: Iterable[int] = (),
             cpu: int = 0) -> int:
        """Rank *rank* computes for *time_ns* nanoseconds on *cpu*."""
        return self._add(rank, "calc", time_ns, -1, 0, requires, irequires, cpu)

    def last(self, rank: int) -> Sequence[int]:
        """``[index]`` of the rank's last operation, or ``[]``: what the next step requires."""
        n = len(self.progs[rank])
        return [n - 1] if n else []

    def build(self) -> Schedule:
        """The schedule, checked (:meth:`Schedule.check`)."""
        return Schedule(self.num_ranks, tuple(tuple(p) for p in self.progs), self.name).check()
