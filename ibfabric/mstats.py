"""Per-group multicast delivery accounting (the summary's ``"multicast"`` block).

A multicast packet is *sent* once by its source (``HCA.send_multicast``);
the members it must reach are the group's members but the sender.  Each
member's copy is an ordinary delivery in the run's delivery log (``dst`` is
the member, so per-destination load and latency count it) and is also
recorded here.  A packet is *complete* when every member it must reach has
its copy; its latency is then the time to the last member (creation to the
tail of the last copy), and each member's copy gives a member latency.

Counted per group: ``packets`` sent, ``complete``, ``member_deliveries``,
``duplicates`` (a member receiving a packet it already had, or a copy of a
packet no longer expected: always 0 in a correct data path; with
``Simulation(check=True)`` the first one raises), ``latency_ns`` (to the
last member) and ``member_latency_ns`` (``mean`` and ``max``) over packets
created at or after the warm-up, and ``member_network_latency_ns``: each
member's copy from its packet's injection (its head leaving the source) to
its tail at the member, the member latency less the time in the source's
queue.
"""

from __future__ import annotations

__all__ = ["MulticastStats"]


class MulticastStats:
    """The multicast accounting of one simulation (``sim.multicast``)."""

    def __init__(self, sim, groups, source_copies: bool):
        self.sim = sim
        self.groups = tuple(groups)
        self.source_copies = source_copies
        #: per group, the SLs its packets use (a bandwidth policy's, :mod:`ibfabric.components.qos.mcastbw`);
        #: empty: the sender's SL
        self.sls: list[list[int]] = [[] for _ in self.groups]
        self.by_mlid = {mlid: i for i, g in enumerate(self.groups) for mlid in g.mlids}
        self.members = [frozenset(g.member_hosts) for g in self.groups]
        #: (msg, seq) -> [group index, created, members still to reach, latest tail time]
        self.pending: dict[tuple[int, int], list] = {}
        n = len(self.groups)
        self.sent = [0] * n
        self.complete = [0] * n
        self.member_deliveries = [0] * n
        self.duplicates = [0] * n
        self._lat = [[0, 0.0, 0.0] for _ in range(n)]  # measured packets: count, sum, max
        self._mlat = [[0, 0.0, 0.0] for _ in range(n)]
        self._mnet = [[0, 0.0, 0.0] for _ in range(n)]  # member copies: injection to tail

    def group_index(self, group) -> int:
        """The index of *group* (a name or a MulticastGroup)."""
        for i, g in enumerate(self.groups):
            if g is group or g.name == group:
                return i
        names = ", ".join(g.name for g in self.groups) or "none"
        raise KeyError(f"no multicast group {group!r} (groups: {names})")

    def add_sent(self, p, gi: int, src_host: int) -> None:
        """Packet *p* (``msg``/``seq`` set) leaves host *src_host* for group *gi*."""
        expected = set(self.members[gi])
        expected.discard(src_host)
        self.pending[(p.msg, p.seq)] = [gi, p.created, expected, 0.0]
        self.sent[gi] += 1

    def receive(self, p, t: float, node) -> None:
        """A copy addressed to a multicast LID reaches HCA *node*, its tail at *t*."""
        sim = self.sim
        host = sim.traffic_index(node)
        gi = self.by_mlid.get(p.dlid)
        if gi is None or host not in self.members[gi]:
            sim.drop(p, "misrouted", node)
            return
        p.dst = host
        sim.deliver(p, t, node)
        self.member(p, gi, host, t)

    def delivered(self, p, t: float, node) -> None:
        """A delivery listener of a replicated-unicast run (``sim.delivery_listeners``): a unicast delivery
        is a member's copy if it is one."""
        rec = self.pending.get((p.msg, p.seq))
        if rec is not None:
            self.member(p, rec[0], p.dst, t)

    def member(self, p, gi: int, host: int, t: float) -> None:
        """Count member *host*'s copy of packet *p* of group *gi*, its tail at *t*.

        The copy is a duplicate when the packet is not pending or *host* has
        had it already (with ``check`` on the simulation, an
        :class:`AssertionError`).  Otherwise the member latency of a packet
        created at or after the warm-up is counted, and when it was the last
        member to reach, the packet is complete and its latency (to that
        last member) is counted.
        """
        key = (p.msg, p.seq)
        rec = self.pending.get(key)
        if rec is None or host not in rec[2]:
            self.duplicates[gi] += 1
            if self.sim.check:
                raise AssertionError(f"multicast packet {p!r} of group '{self.groups[gi].name}' reached host {host}"
                                     f" again (or unexpectedly)")
            return
        rec[2].discard(host)
        self.member_deliveries[gi] += 1
        created = rec[1]
        measured = created >= self.sim.warmup
        if measured:
            _add(self._mlat[gi], t - created)
            _add(self._mnet[gi], t - p.injected)
        if t > rec[3]:
            rec[3] = t
        if not rec[2]:
            del self.pending[key]
            self.complete[gi] += 1
            if measured:
                _add(self._lat[gi], rec[3] - created)

    def summary(self) -> dict:
        """The summary's ``"multicast"`` block: ``copies``, ``source_copies`` and ``groups``.

        ``groups`` maps each group's name to its ``members``, ``packets``,
        ``complete``, ``member_deliveries``, ``duplicates``, and
        ``latency_ns``, ``member_latency_ns`` and ``member_network_latency_ns``
        (``count``, ``mean``, ``max``; None without packets), as the module
        documentation defines them.
        """
        out = {}
        for i, g in enumerate(self.groups):
            out[g.name] = {
                "members": g.size,
                "packets": self.sent[i],
                "complete": self.complete[i],
                "member_deliveries": self.member_deliveries[i],
                "duplicates": self.duplicates[i],
                "latency_ns": _stat(self._lat[i]),
                "member_latency_ns": _stat(self._mlat[i]),
                "member_network_latency_ns": _stat(self._mnet[i]),
            }
        return {"copies": self.sim.stats.copies, "source_copies": self.source_copies, "groups": out}


def _add(acc: list, x: float) -> None:
    acc[0] += 1
    acc[1] += x
    if x > acc[2]:
        acc[2] = x


def _stat(acc: list) -> dict:
    n, s, m = acc
    return {"count": n, "mean": s / n if n else None, "max": m if n else None}
