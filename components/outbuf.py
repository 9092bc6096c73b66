"""Switch output ports with output buffers (``outputBufferSize > 0``).

Without output buffers a switch is input-queued: a packet leaves its input
buffer only when its output link starts sending it (the output port holds
just the packet on its link), so a packet whose output is busy blocks the
packets behind it in its VL (head-of-line blocking); a faster crossbar only
frees the input's crossbar connection sooner.  With output buffers the
crossbar moves a packet from its input buffer into the output port's buffer
for its VL as soon as it is ready, the
buffer has room, the input's crossbar connection is free and the output's
crossbar port is free; the transfer takes ``L / (crossbarSpeedup x fastest
link rate)``.  The input buffer's credits go back upstream as soon as the
packet has crossed, which is how speedup and output buffers relieve
head-of-line blocking (Alfaro et al. 2001 §5.1 use a crossbar twice as fast
as the links; Kim et al. 2007 Table 1 and Martínez et al. 2003 §5 have input
and output buffers).  The link then arbitrates among the output VL buffers
as usual; a packet may start on the link while it is still crossing (cut-
through) and frees its output-buffer space when it has left.

The same component drives both stages, so an output port still costs one
event per decision: a transfer, a transmission, or both at once.
"""

from __future__ import annotations

from collections import deque

from .port import INF, SEVERAL
from .switch import SwitchTx, cross

__all__ = ["BufferedSwitchTx"]


class BufferedSwitchTx(SwitchTx):
    """A switch output port with a buffer of ``capacity`` bytes per data VL."""

    __slots__ = ("ocap", "obuf", "obytes", "on_link", "xbar_out_free", "link_free", "rr", "trivial")

    def __init__(self, node, port, link, nvl, arbiter, env, capacity: int):
        super().__init__(node, port, link, nvl, arbiter, env)
        self.ocap = capacity
        self.obuf: tuple[deque, ...] = tuple(deque() for _ in range(nvl))
        self.wants = self.obuf  # credits matter to the packets in the output buffers
        self.obytes = [0] * nvl
        #: (end, vl, bytes) of the packet on the link: its output-buffer space is
        #: freed when it has left (only one packet is on the link at a time)
        self.on_link: tuple[float, int, int] | None = None
        self.xbar_out_free = 0.0
        self.link_free = 0.0
        self.rr = 0
        # step() below does not take SwitchTx's single-VL path; _transmit() still skips select()
        self.trivial, self.single = self.single, False

    def has_work(self) -> bool:
        return bool(self.mcands) or any(self.obuf) or any(self.cands)

    def held_packets(self) -> int:
        return sum(len(q) for q in self.obuf)

    def step(self, now: float) -> float:
        nxt = INF
        gone = self.on_link
        if gone is not None and gone[0] <= now:
            self.obytes[gone[1]] -= gone[2]
            self.on_link = None
        if self.mcands and self.link_free <= now:
            end, t15 = self._try_vl15(now)  # VL15 first, directly from its input buffer
            if end is not None:
                self.link_free = end
            elif t15 < nxt:
                nxt = t15
        if self.xbar_out_free <= now:
            self._transfer(now)
        if self.link_free <= now:
            self._transmit(now)
        t = self._next_transfer(now if now > self.xbar_out_free else self.xbar_out_free)
        if t < nxt:
            nxt = t
        t = self.heads_credit_time(self.obuf, now if now > self.link_free else self.link_free)
        if t < nxt:
            nxt = t
        if self.mcands and self.link_free > now:
            nxt = min(nxt, self.link_free)
        return nxt

    def _next_transfer(self, after: float) -> float:
        """Earliest time from *after* on when a candidate could cross into its output buffer.

        A candidate's packet needs to be ready, its input's crossbar free and
        room in its VL's buffer; room appears when the packet on the link
        leaves (if it is of that VL) or after this port sends from that VL,
        which is a decision it takes itself, and looks again then.
        """
        best = INF
        gone = self.on_link
        ob = self.obytes
        for vl in range(self.nvl):
            c = self.cands[vl]
            if not c:
                continue
            room = self.ocap - ob[vl]
            later = 0
            if gone is not None and gone[1] == vl:
                if gone[0] <= after:
                    room += gone[2]
                else:
                    later = gone[2]
            for buf in c:
                p = buf.q[0]
                t = p.ready_at
                xf = buf.rx.xbar_free
                if xf > t:
                    t = xf
                if after > t:
                    t = after
                if p.size > room:
                    if p.size > room + later:
                        continue
                    if gone[0] > t:
                        t = gone[0]
                if t < best:
                    best = t
        return best

    def sendable(self, now: float) -> bool:
        if self.link_free <= now:
            for vl, ob in enumerate(self.obuf):
                if ob and ob[0].credits <= self._credits_at(vl, now):
                    return True
        if self.xbar_out_free <= now:
            for vl in range(self.nvl):
                free = self.ocap - self.obytes[vl] + self.freed_by(vl, now)
                for buf in self.cands[vl]:
                    p = buf.q[0]
                    if max(p.ready_at, buf.rx.xbar_free) <= now and p.size <= free:
                        return True
        return False

    def freed_by(self, vl: int, now: float) -> int:
        """Bytes of VL *vl*'s output buffer that the packet on the link has freed by *now*."""
        gone = self.on_link
        return gone[2] if gone is not None and gone[1] == vl and gone[0] <= now else 0

    def try_send(self, now: float) -> float | None:  # pragma: no cover - step() drives this port
        """Not used: :meth:`step` drives this port.

        Raises
        ------
        NotImplementedError
            Always.
        """
        raise NotImplementedError

    # ------------------------------------------------------------ crossbar

    def _transfer(self, now: float) -> None:
        """Move one ready packet into its output buffer, if one can cross now."""
        nvl = self.nvl
        found = None
        for k in range(nvl):
            vl = self.rr + k
            if vl >= nvl:
                vl -= nvl
            c = self.cands[vl]
            if not c:
                continue
            ob = self.obytes
            for buf in c:
                p = buf.q[0]
                t = p.ready_at
                xf = buf.rx.xbar_free
                if xf > t:
                    t = xf
                if t <= now:
                    if ob[vl] + p.size <= self.ocap:
                        found = (vl, buf, p)
                        break
                    # no room for it: a smaller packet behind may fit
            if found:
                break
        if found is None:
            return
        vl, buf, p = found
        self.rr = vl + 1 if vl + 1 < nvl else 0
        if self.wrr:
            self.grant(vl, buf.rx.port)
        self.cands[vl].remove(buf)
        xend = cross(buf, p, now)
        self.xbar_out_free = xend
        p.ready_at = xend  # from here on: when the packet is wholly in the output buffer
        self.obuf[vl].append(p)
        self.obytes[vl] += p.size

    # ---------------------------------------------------------------- link

    def _transmit(self, now: float) -> None:
        """Send one packet from the output buffers if one may go now."""
        one, _ = self.ready_heads(self.obuf, now)
        if one < 0:
            return
        if self.trivial:
            vl = 0
        else:
            vl = self.pick_one(self.ready, one) if one != SEVERAL else self.arbiter.select(self.ready)
        p = self.obuf[vl].popleft()
        size = p.size
        end = now + size * self.byte_time
        if p.ready_at > end:
            end = p.ready_at
        self.on_link = (end, vl, size)
        self.link_free = end
        self.launch(p, vl, now, end)
