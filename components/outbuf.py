"""Switch output ports with output buffers (``outputBufferSize > 0``).

Without output buffers a switch is input-queued: a packet stays in its input
buffer until its output link sends it, so a crossbar faster than the links
changes nothing.  With them the crossbar moves a packet from its input
buffer into the output port's buffer for its VL as soon as it is ready, the
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

from .packet import VL15
from .port import INF
from .switch import SwitchTx, cross

__all__ = ["BufferedSwitchTx"]


class BufferedSwitchTx(SwitchTx):
    """A switch output port with a buffer of ``capacity`` bytes per data VL."""

    def __init__(self, node, port, link, nvl, arbiter, env, capacity: int):
        super().__init__(node, port, link, nvl, arbiter, env)
        self.ocap = capacity
        self.obuf: list[deque] = [deque() for _ in range(nvl)]
        self.wants = self.obuf  # credits matter to the packets in the output buffers
        self.obytes = [0] * nvl
        self.ofree: list[deque] = [deque() for _ in range(nvl)]
        self.xbar_out_free = 0.0
        self.link_free = 0.0
        self.rr = 0
        self.single = False
        self.trivial = nvl == 1 and getattr(arbiter, "single_vl_trivial", False)

    def has_work(self) -> bool:
        return bool(self.mcands) or any(self.obuf) or any(self.cands)

    def held_packets(self) -> int:
        return sum(len(q) for q in self.obuf)

    def step(self, now: float) -> float:
        nxt = INF
        ob = self.obytes
        for vl, fq in enumerate(self.ofree):
            while fq and fq[0][0] <= now:
                ob[vl] -= fq.popleft()[1]
        if self.mcands and self.link_free <= now:
            end, t15 = self._try_vl15(now)  # VL15 first, directly from its input buffer
            if end is not None:
                self.link_free = end
            elif t15 < nxt:
                nxt = t15
        if self.xbar_out_free <= now:
            t = self._transfer(now)
        else:
            t = self.xbar_out_free if any(self.cands) else INF
        if t < nxt:
            nxt = t
        if self.link_free <= now:
            t = self._transmit(now)
        else:
            t = self.link_free if any(self.obuf) else INF
        if t < nxt:
            nxt = t
        for vl in range(self.nvl):
            if self.cands[vl] and self.ofree[vl] and self.ofree[vl][0][0] < nxt:
                nxt = self.ofree[vl][0][0]
        if self.mcands and self.link_free > now:
            nxt = min(nxt, self.link_free)
        return nxt

    def sendable(self, now: float) -> bool:
        if self.link_free <= now:
            for vl, ob in enumerate(self.obuf):
                if ob and ob[0].credits <= self._credits_at(vl, now):
                    return True
        if self.xbar_out_free <= now:
            for vl in range(self.nvl):
                free = self.ocap - self.obytes[vl] + sum(b for t, b in self.ofree[vl] if t <= now)
                for buf in self.cands[vl]:
                    p = buf.q[0]
                    if max(p.ready_at, buf.rx.xbar_free) <= now and p.size <= free:
                        return True
        return False

    def try_send(self, now: float) -> float | None:  # pragma: no cover - step() drives this port
        raise NotImplementedError

    # ------------------------------------------------------------ crossbar

    def _transfer(self, now: float) -> float:
        """Move one ready packet into its output buffer; return when to try the next transfer."""
        nxt = INF
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
                    # no room for it: a smaller packet behind may fit; else wait for the buffer to drain
                elif t < nxt:
                    nxt = t
            if found:
                break
        if found is None:
            return nxt
        vl, buf, p = found
        self.rr = vl + 1 if vl + 1 < nvl else 0
        self.cands[vl].remove(buf)
        xend = cross(buf, p, now)
        self.xbar_out_free = xend
        p.ready_at = xend  # from here on: when the packet is wholly in the output buffer
        self.obuf[vl].append(p)
        self.obytes[vl] += p.size
        return xend if any(self.cands) else INF

    # ---------------------------------------------------------------- link

    def _transmit(self, now: float) -> float:
        """Send one packet from the output buffers if one may go; return when to look again."""
        any_ready, nxt = self.ready_heads(self.obuf, now)
        if not any_ready:
            return nxt
        vl = 0 if self.trivial else self.arbiter.select(self.ready)
        p = self.obuf[vl].popleft()
        size = p.size
        end = now + size * self.byte_time
        if p.ready_at > end:
            end = p.ready_at
        self.ofree[vl].append((end, size))
        self.link_free = end
        self.launch(p, vl, now, end)
        return end
