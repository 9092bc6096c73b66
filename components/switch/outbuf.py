"""The output side of a switch port with output VL buffers (``outputBufferSize > 0``).

Without output buffers a switch is input-queued: a packet leaves its input
buffer only when its output link starts sending it, so a packet whose
output is busy blocks the packets behind it in its VL (head-of-line
blocking); a faster crossbar only frees the input's crossbar connection
sooner.  With output buffers the crossbar moves a packet from its input
into the output port's buffer for its VL as soon as it may cross, the
buffer has room for it, the input's crossbar connection is free and the
output's crossbar port is free; the transfer takes ``L / (crossbarSpeedup
x fastest link rate)``.  The input buffer's credits go back upstream once
the packet has crossed, which is how speedup and output buffers relieve
head-of-line blocking (Alfaro et al. 2001 §5.1 use a crossbar twice as
fast as the links; Kim et al. 2007 Table 1 and Martínez et al. 2003 §5.1
have input and output buffers).  The link then arbitrates among the output
VL buffers (the VL arbiter), subject to the credits downstream; a packet
may start on the link while it is still crossing (cut-through) and frees
its space in the output buffer once it has left.

The output buffer counts 64-byte blocks, as the input buffers' flow control
does: ``outputBufferSize // 64`` credits per VL, a packet taking
``ceil(size / 64)`` of them (Kim's 4,200 B buffers hold three 1,050 B
packets at the input and at the output alike).

One wake-up drives both stages, so an output port still costs one event
per decision: a transfer, a transmission, or both at once.  VL15 packets
go straight from their input onto the link, before the data VLs.
"""

from __future__ import annotations

from collections import deque

from ..port import INF, SEVERAL

__all__ = ["OutputBuffers"]


class OutputBuffers:
    """The output-buffer side of :class:`~.tx.SwitchTx` (its methods and state; see the module)."""

    __slots__ = ()  # its state is in SwitchTx's slots: obuf, ocap, ofree, oqueued, osince, on_link, xfree, rr,
    # link_free (the port's own busy_until stays 0: a poke is never put off by the link, whose end this side's
    # step looks at by itself)

    def init_output(self, credits: int) -> None:
        """Give the port output VL buffers of *credits* each (0: none, straight to the link)."""
        self.on_link = None
        self.xfree = 0.0
        self.link_free = 0.0
        self.rr = 0
        if not credits:
            self.obuf = self.ofree = self.oqueued = self.osince = None
            self.ocap = 0
            return
        nvl = self.nvl
        self.ocap = credits
        self.obuf: tuple[deque, ...] = tuple(deque() for _ in range(nvl))
        #: free credits of each VL's buffer (a packet on the link holds its space until it has left)
        self.ofree = [credits] * nvl
        #: credits of the packets waiting in each VL's buffer (not the one on the link)
        self.oqueued = [0] * nvl
        #: when each VL's head became its head (IBA's HOQ time; lifetime watchers read it)
        self.osince = [0.0] * nvl
        self.wants = self.obuf  # a credit return pokes the port when its output buffer holds that VL's packets

    def held_packets(self) -> int:
        """Packets in the output buffers (on the link or waiting)."""
        if self.obuf is None:
            return 0
        return sum(len(q) for q in self.obuf)

    # ------------------------------------------------------------ the wake-up

    def _leave(self, now: float) -> None:
        """The packet on the link frees its space once it has left."""
        gone = self.on_link
        if gone is not None and gone[0] <= now:
            self.ofree[gone[1]] += gone[2]
            self.on_link = None

    def _step_buffered(self, now: float) -> float:
        self._leave(now)
        nxt = INF
        if self.mcands and self.link_free <= now:
            end, t15 = self._try_vl15(now)  # VL15 first, straight from its input buffer
            if end is not None:
                self.link_free = end
            elif t15 < nxt:
                nxt = t15
        if self.xfree <= now:
            t = self.transfer(now)
            if t < nxt:
                nxt = t
        if self.link_free <= now:
            self._transmit(now)
        xf = self.xfree
        t = self.next_transfer(now if now > xf else xf)
        if t < nxt:
            nxt = t
        if (self.mq or self.mfifo) and xf > now and xf < nxt:
            nxt = xf  # multicast work waits for the crossbar output (the engine says more when it looks)
        lf = self.link_free
        t = self.heads_credit_time(self.obuf, now if now > lf else lf)
        if t < nxt:
            nxt = t
        if self.mcands and lf > now and lf < nxt:
            nxt = lf
        return nxt

    # ------------------------------------------------------------ the crossbar

    def _transfer(self, now: float) -> float:
        """Move one packet that may cross now into its output buffer, VLs in turn (the step then works out
        when the next may: ``next_transfer``, :meth:`_next_transfer` or the routing options'); returns INF."""
        nvl = self.nvl
        cands = self.cands
        pick = self.pick
        for k in range(nvl):
            vl = self.rr + k
            if vl >= nvl:
                vl -= nvl
            if not cands[vl]:
                continue
            c, _t = pick(vl, now)
            if c is None:
                continue
            self.rr = vl + 1 if vl + 1 < nvl else 0
            cands[vl].remove(c)
            self.send(c, c.q[0], vl, now)
            break
        return INF

    def _next_transfer(self, after: float) -> float:
        """The earliest time from *after* on when a candidate could cross into its output buffer: it must
        be ready, its input's crossbar free, and its VL's buffer must have room, which appears when the
        packet on the link leaves (if it is of that VL) or after this port sends from that VL (a decision
        it takes itself, and then looks again)."""
        best = INF
        gone = self.on_link
        for vl in range(self.nvl):
            c = self.cands[vl]
            if not c:
                continue
            room = self.ofree[vl]
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
                n = p.credits
                if n > room:
                    if n > room + later:
                        continue
                    if gone[0] > t:
                        t = gone[0]
                if t < best:
                    best = t
        return best

    def _send_buffered(self, c, p, vl: int, now: float) -> float:
        """*p*, at read point *c*, crosses into the output buffer of VL *vl*."""
        return self._accept_buffered(p, vl, now, c.take(p, now))

    def _accept_buffered(self, p, vl: int, now: float, xend: float) -> float:
        p.ready_at = xend  # from here on: when the packet is wholly in the output buffer
        q = self.obuf[vl]
        q.append(p)
        cr = p.credits
        self.ofree[vl] -= cr
        self.oqueued[vl] += cr
        self.xfree = xend
        if len(q) == 1:
            t = self.link_free
            self.poke(now if t < now else t)
        return xend

    def _obuf_room_time(self, vl: int, need: int, after: float) -> float:
        """When *need* credits of room appear in VL *vl*'s buffer: as the packet on the link leaves, if it
        is of that VL and enough; else only after this port sends from that VL, which is a decision it
        takes itself (and then looks again)."""
        if self.ofree[vl] >= need:
            return after
        gone = self.on_link
        if gone is not None and gone[1] == vl and self.ofree[vl] + gone[2] >= need:
            return gone[0] if gone[0] > after else after
        return INF

    def freed_by(self, vl: int, now: float) -> int:
        """Credits of VL *vl*'s buffer that the packet on the link has freed by *now* (not taken in yet)."""
        gone = self.on_link
        return gone[2] if gone is not None and gone[1] == vl and gone[0] <= now else 0

    # ------------------------------------------------------------ the link

    def _transmit(self, now: float) -> None:
        """Send one packet from the output buffers, the VL arbiter's choice among those whose head has
        its credits downstream."""
        one, _ = self.ready_heads(self.obuf, now)
        if one < 0:
            return
        if self.single:
            vl = 0
        else:
            vl = self.pick_one(self.ready, one) if one != SEVERAL else self.arbiter.select(self.ready)
        q = self.obuf[vl]
        p = q.popleft()
        cr = p.credits
        self.oqueued[vl] -= cr
        self.osince[vl] = now
        end = now + p.size * self.byte_time
        if p.ready_at > end:
            end = p.ready_at  # it is still crossing
        self.on_link = (end, vl, cr)
        self.link_free = end
        self.launch(p, vl, now, end)

    # ------------------------------------------------------------ cold

    def link_sendable(self, now: float) -> bool:
        """Whether an output buffer's head could start on the link now (no side effects)."""
        if self.link_free > now:
            return False
        for vl, q in enumerate(self.obuf):
            if q and q[0].credits <= self.credits_at(vl, now):
                return True
        return False

    def flush_output(self, now: float, reason: str) -> int:
        """Discard what waits in the output buffers (the port leaves Active, or its node fails)."""
        if self.obuf is None:
            return 0
        sim = self.node.sim
        n = 0
        for vl, q in enumerate(self.obuf):
            while q:
                sim.drop(q.popleft(), reason, self.node)
                n += 1
            self.ofree[vl] = self.ocap
            self.oqueued[vl] = 0
        self.on_link = None
        return n

    def output_waits(self, now: float, starved):
        """For the deadlock finder: ``(vl, head, downstream key)`` of each output VL buffer whose head
        lacks credits downstream with none on their way (``starved(tx, vl, need)`` says)."""
        out = []
        if self.obuf is None:
            return out
        for vl, q in enumerate(self.obuf):
            if q:
                k = starved(self, vl, q[0].credits)
                if k is not None:
                    out.append((vl, q[0], k))
        return out
