"""Running a rank-program schedule on the fabric: messages with completion, MPI matching, job completion time.

::

    sim = ibfabric.load("net.ned", overrides={"**.traffic": '""'})
    wl = Workload(sim, read_goal("allreduce.goal"), placement="random", stop=True)
    summary = sim.run("10ms")            # stops when the workload completes
    summary["workload"]["completion_ns"]

(``read_goal``: :func:`ibfabric.components.hca.goal.read_goal`.)

Each rank runs on an HCA (:func:`place`: ``linear``, ``random`` with the
run's seed, or a file naming a host per rank).  An operation starts once
what it requires has completed and what it irequires has started
(:mod:`~ibfabric.components.hca.schedule`):

- a **send** posts a message: it is segmented into MTU packets (the last
  one shorter) of ``mtu + headerSize`` wire bytes on the SL of the path to
  the destination (dfsssp, lash) or the workload's SL: the workload's
  messages wait in a queue of their own at the HCA (:class:`MessageSource`,
  a traffic source beside the open-loop ones) and their packets join the
  SL's send queue while fewer than :data:`WINDOW` are on their way.  Sends
  of a rank to an IB multicast group (``Op.group``) that start together are
  one message to the group.  The message is complete
  when its last packet is delivered; so is the send (no acknowledgement is
  modelled: an RDMA write's completion without the ACK's way back).  A
  message between two ranks of one HCA arrives at once.
- a **receive** completes when a matching message has arrived: messages
  match the receives of their destination rank by (source, tag) in posting
  order, ``-1`` matching any; a message that arrives first waits in the
  rank's unexpected queue (eager protocol) and completes the receive when
  it is posted.
- a **calc** of T ns holds its cpu (per rank, GOAL's ``cpu``) for T ns;
  calcs of one cpu run one after the other.

Sends and receives cost no CPU time (the HCA does the work), unlike
LogGOPSim's overhead ``o``: the fabric's latency and bandwidth are what
is measured.  A schedule whose ranks wait for each other forever is
reported when nothing of it is left in flight: ``summary["workload"]
["error"]`` names the rank and label of the operations that wait, and the
run stops there if ``stop`` was asked.

Deliveries reach the workload through the simulation's delivery listeners
(a lookup per delivered packet while a workload runs; a run without one
has no listener and no new test on its packets' path).
"""

from __future__ import annotations

import math
from collections import deque
from typing import Any

import numpy as np

from ibfabric.errors import ConfigError

from ..packet import Packet
from ..port import INF
from .placement import PLACEMENTS, place
from .schedule import ANY, Schedule

__all__ = ["Message", "MessageSource", "PLACEMENTS", "Workload", "place"]

class Message:
    """One message of a workload: ``size`` payload bytes from rank ``src`` to rank ``dst``."""

    __slots__ = ("src", "dst", "tag", "size", "op", "posted", "arrived", "id", "left", "sizes", "sl", "dlid",
                 "dst_host", "src_host", "gi", "members", "fanout")

    def __init__(self, src: int, dst: int, tag: int, size: int, op: int, posted: float):
        self.src, self.dst, self.tag, self.size, self.op, self.posted = src, dst, tag, size, op, posted
        self.arrived = math.nan
        self.id = -1
        self.left = 0  # packets not delivered yet
        self.sizes: list[int] = []
        self.sl = 0
        self.dlid = 0
        self.src_host = self.dst_host = -1
        #: a multicast message: its group's index (else -1), its members' hosts -> (rank, send op,
        #: packets not delivered yet), and the copies each packet makes (the group's other members)
        self.gi = -1
        self.members: dict[int, list[int]] = {}
        self.fanout = 1


#: packets of a host's workload messages created and not delivered yet, at most
WINDOW = 64


class MessageSource:
    """The messages one HCA sends for a workload: a traffic source of its port's transmitter.

    Messages wait in order of posting, in a queue of their own (a queue pair
    of the application's, beside the open-loop sources'); their packets are
    created into the SL's send queue while fewer than :data:`WINDOW` of
    them are on their way (created, not delivered), so a message of any
    size costs O(WINDOW) packets at a time, and open-loop sources that keep
    the send queue full (an overloaded fabric) do not shut the workload out:
    its packets queue among theirs as they are created.  ``next_time`` is
    when the next packet may be created (a posting, or a delivery that
    opened the window), or infinity; the source is never held back.
    """

    lazy = True

    def __init__(self, hca, tx):
        self.hca = hca
        self.sim = hca.sim
        self.stats = hca.sim.stats
        self.tx = tx
        self.slid = hca.lid
        self.queue: deque[list] = deque()  # [message, index of its next packet]
        self.next_time = INF
        self.messages = 0
        self.outstanding = 0  # packets created and not delivered

    def post(self, m: Message, now: float) -> None:
        """Queue message *m* (its ``sizes``, ``sl`` and ``dlid`` set), posted at *now*."""
        self.queue.append([m, 0])
        self.messages += 1
        self.tx.use_sl(m.sl)
        if self.outstanding < WINDOW:
            self.due(now)

    def due(self, t: float) -> None:
        """A packet may be created from time *t* on: the transmitter looks then."""
        if t < self.next_time:
            self.next_time = t
            self.tx.poke(t)

    def delivered(self, t: float) -> None:
        """One of its packets reached its destination (its tail at *t*): the window opens by one."""
        self.outstanding -= 1
        if self.queue and self.outstanding < WINDOW:
            self.due(t)

    def materialize(self, now: float) -> None:
        """Create packets of the waiting messages while fewer than :data:`WINDOW` are on their way."""
        tx = self.tx
        q = self.queue
        sendq = tx.sendq
        st = self.stats
        slid = self.slid
        self.next_time = INF
        while q and self.outstanding < WINDOW:
            entry = q[0]
            m, k = entry
            sizes = m.sizes
            n = len(sizes)
            dq = sendq[m.sl]
            if m.gi >= 0:  # a multicast message (cold: one per collective step)
                k = self._multicast(m, k, dq)
            while k < n and self.outstanding < WINDOW:
                size = sizes[k]
                # positional: (slid, dlid, sl, size, credits, src, dst, created, vl, lnh, flow, msg, seq, last)
                dq.append(Packet(slid, m.dlid, m.sl, size, (size + 63) >> 6, m.src_host, m.dst_host, m.posted, 0, 2,
                                 0, m.id, k, k == n - 1))
                tx.queued += 1
                self.outstanding += 1
                st.add_generated(1, size, m.posted)
                k += 1
            if k < n:
                entry[1] = k
                break
            q.popleft()

    def _multicast(self, m: Message, k: int, dq) -> int:
        """Create the packets of multicast message *m* from its *k*-th while the window has room: one to
        the group's MLID, or a copy per member (``replicated-unicast``); each counts as the copies it
        becomes.  Returns the index of the next packet (all of them: the loop after it does nothing)."""
        n = len(m.sizes)
        while k < n and self.outstanding < WINDOW:
            out = self.hca.multicast_packets(m.gi, m.sizes[k], sl=m.sl, created=m.posted, msg=m.id, seq=k,
                                             last=k == n - 1)
            for c in out:
                dq.append(c)
                self.stats.add_generated(1, c.size, m.posted)
            self.tx.queued += len(out)
            self.outstanding += m.fanout
            k += 1
        return k

    def next_after(self, now: float) -> float:
        """Never held back: ``next_time`` if it is after *now*."""
        return self.next_time if self.next_time > now else INF

    def pending(self, now: float) -> tuple[int, int]:
        """``(packets, wire bytes created in the measurement window)`` posted but not created yet."""
        window = self.stats.window
        packets = nbytes = 0
        for m, k in self.queue:
            packets += len(m.sizes) - k
            if m.posted >= window:
                nbytes += sum(m.sizes[k:])
        return packets, nbytes

    def pending_estimate(self, now: float) -> float:
        """The exact count of :meth:`pending` (O(messages waiting))."""
        return float(self.pending(now)[0])


class Workload:
    """A schedule running on a built simulation (see the module docstring).

    Parameters
    ----------
    sim : ibfabric.Simulation
        Built, at time 0 or later, with its routes installed.
    schedule : Schedule
        Checked (:meth:`Schedule.check`).
    placement : str or list of int
        See :func:`place`, or the host index of each rank.
    sl : int
        The SL of its messages where the routing gives paths no SL of their own.
    start : float
        When the ranks start (ns).
    stop : bool
        End the run when the workload completes (or waits forever).
    ideal : bool
        Also run the schedule on an ideal crossbar of the same link rate
        (:func:`ideal_completion`): the summary gives ``ideal_ns`` and
        ``slowdown``, the completion time over the ideal one.
    """

    def __init__(self, sim, schedule: Schedule, *, placement: str | list[int] = "linear", sl: int = 0,
                 start: float = 0.0, stop: bool = False, ideal: bool = False):
        if not isinstance(schedule, Schedule):
            raise ConfigError(f"a workload needs a Schedule (got {type(schedule).__name__})")
        if isinstance(sl, bool) or not isinstance(sl, (int, np.integer)) or not 0 <= sl <= 14:
            raise ConfigError(f"the workload's SL must be 0..14 (got {sl!r})")
        if getattr(sim, "workload", None) is not None:
            raise ConfigError("this simulation runs a workload already")
        if sim.tables is None:
            raise ConfigError("the workload needs routes: the subnet manager has not routed the fabric")
        self.sim = sim
        self.schedule = schedule
        n = schedule.num_ranks
        names = [h.path for h in sim.hosts]
        if isinstance(placement, str):
            self.placement_name = placement
            self.hosts = place(n, names, placement, sim.seed)
        else:
            self.placement_name = "given"
            self.hosts = [int(h) for h in placement]
            if len(self.hosts) != n or any(not 0 <= h < len(names) for h in self.hosts):
                raise ConfigError(f"a placement must give a host 0..{len(names) - 1} for each of {n} ranks")
        self.sl = int(sl)
        self.ideal_ns = ideal_completion(sim, schedule) if ideal else None
        self.start_at = float(start)
        self.stop_when_done = bool(stop)
        self.sources: dict[int, MessageSource] = {}
        self._route: dict[int, tuple[list, Any]] = {}  # host -> (dlids, path SLs)
        for h in sorted(set(self.hosts)):
            hca = sim.hosts[h]
            if hca.first_port is None:
                raise ConfigError(f"{hca.path}: a rank is placed on a host with no connected port")
            dlids = sim.dlids_from(hca)
            path_sls = sim.path_sls_from(hca, dlids)
            if path_sls is not None:  # the SLs of the paths to the ranks this host sends to
                peers = {self.hosts[op.peer] for r in range(n) if self.hosts[r] == h
                         for op in schedule.ranks[r] if op.kind == "send"} - {h}
                hca.check_path_sls(sorted({int(path_sls[d]) for d in peers}))
            self._route[h] = (dlids, path_sls)
            src = MessageSource(hca, hca.tx[hca.first_port])
            hca.add_source(src)
            self.sources[h] = src
        self._check_groups()
        progs = schedule.ranks
        self.need = [[len(op.requires) + len(op.irequires) for op in p] for p in progs]
        self.after_done: list[list[list[int]]] = [[[] for _ in p] for p in progs]
        self.after_start: list[list[list[int]]] = [[[] for _ in p] for p in progs]
        for r, p in enumerate(progs):
            for i, op in enumerate(p):
                for d in op.requires:
                    self.after_done[r][d].append(i)
                for d in op.irequires:
                    self.after_start[r][d].append(i)
        self.started = [np.full(len(p), np.nan) for p in progs]
        self.ended = [np.full(len(p), np.nan) for p in progs]
        self.posted: list[list[tuple[int, int, int]]] = [[] for _ in range(n)]  # (op, src, tag)
        self.unexpected: list[list[Message]] = [[] for _ in range(n)]
        self.cpu_free: dict[tuple[int, int], float] = {}
        self.cpu_queue: dict[tuple[int, int], deque] = {}
        self.by_msg: dict[int, Message] = {}
        self.remaining = schedule.operations
        self.in_flight = 0
        self.calcs = 0
        self.messages = 0
        self.bytes_delivered = 0
        self.wire_bytes = 0
        self.began = math.nan
        self.finished = math.nan
        self.error: str | None = None
        self._ready: deque[tuple[int, int]] = deque()
        self._open: dict[tuple, Message] = {}  # multicast messages of the sends starting now
        self._pumping = False
        sim.workload = self
        sim.delivery_listeners.append(self.delivered)
        sim.add_summary_section("workload", lambda: {"workload": self.summary()})
        sim.portloop.call_at(max(self.start_at, sim.now), self._begin, ())

    def _check_groups(self) -> None:
        """Every multicast send's group is declared, its rank's host sends to it and the destination's
        host is a member (a ConfigError naming the rank and label otherwise)."""
        sched = self.schedule
        for r, prog in enumerate(sched.ranks):
            for i, op in enumerate(prog):
                if op.kind != "send" or not op.group or self.hosts[op.peer] == self.hosts[r]:
                    continue
                hca = self.sim.hosts[self.hosts[r]]
                try:
                    gi = hca.multicast_group(op.group)
                except ConfigError as exc:
                    raise ConfigError(f"{sched.where(r, i)}: {exc}") from None
                dst = self.hosts[op.peer]
                if dst not in self.sim.multicast.groups[gi].member_hosts:
                    raise ConfigError(f"{sched.where(r, i)}: {op.describe()} through multicast group"
                                      f" '{op.group}': host {dst} (rank {op.peer}) is not a member")

    # ------------------------------------------------------------ the programs

    def _begin(self) -> None:
        self.began = self.sim.now
        for r, need in enumerate(self.need):
            for i, k in enumerate(need):
                if k == 0:
                    self._ready.append((r, i))
        self._pump()

    def _pump(self) -> None:
        if self._pumping:
            return
        self._pumping = True
        try:
            ready = self._ready
            while ready:
                r, i = ready.popleft()
                self._start(r, i)
            if self._open:
                self._post_multicast(self.sim.now)
        finally:
            self._pumping = False
        self._check_progress()

    def _start(self, r: int, i: int) -> None:
        op = self.schedule.ranks[r][i]
        now = self.sim.now
        kind = op.kind
        if kind == "calc":
            key = (r, op.cpu)
            if self.cpu_free.get(key, -1.0) > now or self.cpu_queue.get(key):
                self.cpu_queue.setdefault(key, deque()).append(i)
                return
            self._run_calc(r, i, now)
            return
        self._mark_started(r, i, now)
        if kind == "send":
            self._send(r, i, op, now)
        else:
            for k, m in enumerate(self.unexpected[r]):
                if op.peer in (ANY, m.src) and op.tag in (ANY, m.tag):
                    del self.unexpected[r][k]
                    self._done(r, i, now)
                    return
            self.posted[r].append((i, op.peer, op.tag))

    def _mark_started(self, r: int, i: int, now: float) -> None:
        self.started[r][i] = now
        for j in self.after_start[r][i]:
            self.need[r][j] -= 1
            if self.need[r][j] == 0:
                self._ready.append((r, j))

    def _run_calc(self, r: int, i: int, now: float) -> None:
        op = self.schedule.ranks[r][i]
        self._mark_started(r, i, now)
        end = now + op.size
        self.cpu_free[(r, op.cpu)] = end
        self.calcs += 1
        self.sim.portloop.call_at(end, self._calc_done, (r, i))

    def _calc_done(self, r: int, i: int) -> None:
        now = self.sim.now
        self.calcs -= 1
        key = (r, self.schedule.ranks[r][i].cpu)
        self._done(r, i, now)
        q = self.cpu_queue.get(key)
        if q:
            self._run_calc(r, q.popleft(), now)
        self._pump()

    def _done(self, r: int, i: int, now: float) -> None:
        self.ended[r][i] = now
        self.remaining -= 1
        for j in self.after_done[r][i]:
            self.need[r][j] -= 1
            if self.need[r][j] == 0:
                self._ready.append((r, j))
        if self.remaining == 0:
            self.finished = now
            if self.unexpected_left():
                self._fail(now, "unmatched")
            elif self.stop_when_done:
                self.sim.portloop.stop()

    def _send(self, r: int, i: int, op, now: float) -> None:
        src_h, dst_h = self.hosts[r], self.hosts[op.peer]
        self.in_flight += 1
        if op.group and src_h != dst_h:  # one multicast message for the sends that start together
            key = (r, op.group, op.tag, op.size)
            m = self._open.get(key)
            if m is None:
                m = self._open[key] = Message(r, -1, op.tag, op.size, i, now)
                m.src_host = src_h
                m.gi = self.sim.hosts[src_h].multicast_group(op.group)
            m.members[dst_h] = [op.peer, i, 0]
            return
        m = Message(r, op.peer, op.tag, op.size, i, now)
        self.messages += 1
        m.src_host, m.dst_host = src_h, dst_h
        if src_h == dst_h:  # two ranks of one HCA: no packet leaves it
            self.sim.portloop.call_at(now, self._arrived, (m,))
            return
        dlids, path_sls = self._route[src_h]
        m.dlid = int(dlids[dst_h])
        self._post(m, int(path_sls[dst_h]) if path_sls is not None else self.sl, now)

    def _post(self, m: Message, sl: int, now: float) -> None:
        hca = self.sim.hosts[m.src_host]
        mtu, header = hca.mtu, hca.header_size
        n = max(1, -(-m.size // mtu))
        last = m.size - (n - 1) * mtu
        m.sizes = [mtu + header] * (n - 1) + [max(last + header, 1)]
        m.left = n * m.fanout
        m.sl = sl
        m.id = self.sim.next_message_id()
        self.by_msg[m.id] = m
        self.wire_bytes += sum(m.sizes)
        self.sources[m.src_host].post(m, now)

    def _post_multicast(self, now: float) -> None:
        """Send the multicast messages whose sends started together (in one :meth:`_pump`)."""
        acc = self.sim.multicast
        for m in self._open.values():
            self.messages += 1
            g = acc.groups[m.gi]
            m.fanout = sum(1 for h in g.member_hosts if h != m.src_host)
            n = max(1, -(-m.size // self.sim.hosts[m.src_host].mtu))
            for rec in m.members.values():
                rec[2] = n
            sls = acc.sls[m.gi]
            self._post(m, sls[0] if sls else self.sl, now)
        self._open.clear()

    def delivered(self, p, t: float, node) -> None:
        """A delivery listener (``sim.delivery_listeners``): the packet of a workload's message whose tail
        reaches its host at *t*; the message arrives with its last packet."""
        m = self.by_msg.get(p.msg)
        if m is None:
            return
        self.sources[m.src_host].delivered(t)
        if m.gi >= 0:
            self._member_copy(m, p, t)
            return
        m.left -= 1
        if m.left == 0:
            del self.by_msg[p.msg]
            self.sim.portloop.call_at(t, self._arrived, (m,))

    def _member_copy(self, m: Message, p, t: float) -> None:
        """A member's copy of a packet of multicast message *m*: the member's message arrives with its
        last packet (as a unicast message from the sender to that rank)."""
        m.left -= 1
        if m.left == 0:
            del self.by_msg[p.msg]
        rec = m.members.get(p.dst)
        if rec is None:  # a member of the group that no send of this message is for
            return
        rec[2] -= 1
        if rec[2] == 0:
            one = Message(m.src, rec[0], m.tag, m.size, rec[1], m.posted)
            self.sim.portloop.call_at(t, self._arrived, (one,))

    def _arrived(self, m: Message) -> None:
        now = self.sim.now
        m.arrived = now
        self.in_flight -= 1
        self.bytes_delivered += m.size
        self._done(m.src, m.op, now)  # the send completes with its message
        posted = self.posted[m.dst]
        for k, (i, src, tag) in enumerate(posted):
            if src in (ANY, m.src) and tag in (ANY, m.tag):
                del posted[k]
                self._done(m.dst, i, now)
                break
        else:
            self.unexpected[m.dst].append(m)
        self._pump()

    # ------------------------------------------------------------ progress

    def unexpected_left(self) -> int:
        """Messages that arrived and match no receive (yet)."""
        return sum(len(u) for u in self.unexpected)

    def _check_progress(self) -> None:
        if self.remaining and not self.in_flight and not self.calcs and not self._ready and self.error is None:
            self._fail(self.sim.now, "stalled")

    def _fail(self, now: float, why: str) -> None:
        sched = self.schedule
        if why == "unmatched":
            m = next(m for u in self.unexpected for m in u)
            self.error = (f"{sched.where(m.src, m.op)}: {sched.ranks[m.src][m.op].describe()}: the message arrived"
                          f" at rank {m.dst} at {now:.1f} ns but no receive of rank {m.dst} matched it")
        else:
            waiting = [(r, i) for r, p in enumerate(sched.ranks) for i in range(len(p))
                       if not math.isnan(self.started[r][i]) and math.isnan(self.ended[r][i])]
            blocked = waiting or [(r, i) for r, p in enumerate(sched.ranks) for i in range(len(p))
                                  if math.isnan(self.started[r][i])]
            shown = "; ".join(f"{sched.where(r, i)} ({sched.ranks[r][i].describe()})" for r, i in blocked[:3])
            more = f" and {len(blocked) - 3} more" if len(blocked) > 3 else ""
            self.error = (f"the workload waits forever from {now:.1f} ns: {len(blocked)} operation(s) wait for"
                          f" messages no rank sends: {shown}{more}")
        self.sim.warn(self.error)
        if self.stop_when_done:
            self.sim.portloop.stop()

    @property
    def complete(self) -> bool:
        """Whether every operation has completed."""
        return self.remaining == 0

    # ------------------------------------------------------------ measurement

    def rank_times(self) -> list[dict[str, Any]]:
        """Per rank: host, operations, first start and last end (ns), bytes sent and received."""
        out = []
        for r, p in enumerate(self.schedule.ranks):
            s, e = self.started[r], self.ended[r]
            out.append({
                "rank": r, "host": self.hosts[r], "host_path": self.sim.hosts[self.hosts[r]].path,
                "operations": len(p), "done": int(np.count_nonzero(~np.isnan(e))),
                "start_ns": _num(np.nanmin(s)) if len(p) and not np.isnan(s).all() else None,
                "end_ns": _num(np.nanmax(e)) if len(p) and not np.isnan(e).all() else None,
                "bytes_sent": sum(op.size for op in p if op.kind == "send"),
                "bytes_received": sum(op.size for op in p if op.kind == "recv"),
            })
        return out

    def phase_times(self) -> list[dict[str, Any]]:
        """Per phase (a collective's repetition; one for a GOAL file): start, end and time (ns)."""
        spans: dict[int, list[float]] = {}
        for r, p in enumerate(self.schedule.ranks):
            for i, op in enumerate(p):
                s, e = self.started[r][i], self.ended[r][i]
                lo_hi = spans.setdefault(op.phase, [math.inf, -math.inf, 0, 0])
                if not math.isnan(s):
                    lo_hi[0] = min(lo_hi[0], s)
                if not math.isnan(e):
                    lo_hi[1] = max(lo_hi[1], e)
                    lo_hi[3] += 1
                lo_hi[2] += 1
        out = []
        for ph in sorted(spans):
            lo, hi, n, done = spans[ph]
            ok = n == done
            out.append({"phase": ph, "operations": n, "start_ns": _num(lo) if lo < math.inf else None,
                        "end_ns": _num(hi) if ok else None, "time_ns": _num(hi - lo) if ok else None})
        return out

    def op_rows(self) -> list[dict[str, Any]]:
        """One row per operation: rank, label, kind, size, peer, tag, phase, start and end (ns; None if not)."""
        rows = []
        for r, p in enumerate(self.schedule.ranks):
            for i, op in enumerate(p):
                rows.append({"rank": r, "label": op.label or f"#{i + 1}", "kind": op.kind, "size": op.size,
                             "peer": op.peer, "tag": op.tag, "phase": op.phase,
                             "start_ns": _num(self.started[r][i]), "end_ns": _num(self.ended[r][i])})
        return rows

    def summary(self) -> dict[str, Any]:
        """The ``workload`` section of the summary (a workload that has not completed, for no error,
        is also a warning: the run ended first)."""
        done = self.complete
        if not done and self.error is None and not math.isnan(self.began):
            self.sim.warn(f"the workload did not complete: {self.schedule.operations - self.remaining} of"
                          f" {self.schedule.operations} operations done when the run ended at"
                          f" {self.sim.now:.1f} ns (a longer run, or a fabric that saturates?)")
        out: dict[str, Any] = {
            "name": self.schedule.name, "ranks": self.schedule.num_ranks, "operations": self.schedule.operations,
            "placement": self.placement_name, "hosts": list(self.hosts), "complete": done,
            "operations_done": self.schedule.operations - self.remaining,
            "start_ns": _num(self.began), "end_ns": _num(self.finished) if done else None,
            "completion_ns": _num(self.finished - self.began) if done else None,
            "messages": self.messages, "messages_in_flight": self.in_flight,
            "bytes": self.schedule.bytes_sent(), "bytes_delivered": self.bytes_delivered,
            "wire_bytes": self.wire_bytes, "phases": self.phase_times(), "per_rank": self.rank_times(),
        }
        if self.ideal_ns is not None:
            out["ideal_ns"] = self.ideal_ns
            out["slowdown"] = out["completion_ns"] / self.ideal_ns if done and self.ideal_ns > 0 else None
        if self.error is not None:
            out["error"] = self.error
        return out


def _num(x) -> float | None:
    x = float(x)
    return None if math.isnan(x) else x



#: the largest crossbar :func:`ideal_completion` builds (a switch's ports)
MAX_CROSSBAR = 254


def ideal_completion(sim, schedule: Schedule) -> float:
    """The completion time (ns) of *schedule* on an ideal full-bisection crossbar: one switch with a
    host per rank (rank r on host r), links of the rate of *sim*'s first host's link and no cable
    length, hosts of its MTU and header size.  What the fabric adds over it is its topology, routing
    and contention.

    Raises
    ------
    ConfigError
        If the schedule has more ranks than a switch has ports (:data:`MAX_CROSSBAR`), or the
        workload does not complete there.
    """
    from ibfabric.simulation import Simulation

    n = schedule.num_ranks
    if n > MAX_CROSSBAR:
        raise ConfigError(f"an ideal crossbar of {n} ranks exceeds a switch's {MAX_CROSSBAR} ports")
    hca = sim.hosts[0]
    link = hca.links[hca.first_port][2]
    ned = (f"network ideal {{ submodules: sw: Switch {{ numPorts = {max(n, 2)}; }}"
           f" h[{n}]: HCA {{ mtu = {hca.mtu}B; headerSize = {hca.header_size}B; traffic = \"\"; }}"
           f" connections: for i=0..{n - 1} {{ h[i].port[1] <--> Link {{ dataRate = {link.rate:.0f}bps;"
           f" length = 0m; }} <--> sw.port[i+1]; }} }}")
    ideal = Simulation(ned, seed=sim.seed, deadlock_interval=0)
    if any(op.group for p in schedule.ranks for op in p):  # the crossbar sends each copy on its own
        import attrs

        schedule = attrs.evolve(schedule, ranks=tuple(tuple(attrs.evolve(op, group="") for op in p)
                                                      for p in schedule.ranks))
    wl = Workload(ideal, schedule, placement="linear", stop=True)
    ideal.run(1e12)
    if not wl.complete:
        raise ConfigError(f"the workload does not complete on an ideal crossbar: {wl.error}")
    return float(wl.finished - wl.began)
