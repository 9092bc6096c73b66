"""A multicast replication engine: every copy read from the input VL, the packet freed with the last."""

from ibfabric.components.port import INF
from ibfabric.plugins.replication import ReplicationEngine


class FromInput(ReplicationEngine):
    """Copies leave one at a time, each read from the packet's input VL; the last one frees it.

    No extra buffer: the packet holds its input VL, and the credits of the
    link it came on, until its last copy has left.  Each copy occupies the
    input port's crossbar connection while it crosses.  Takes no options.
    """

    name = "from-input"

    def serve(self, tx, now):
        nxt = INF
        for head in tx.mq:
            t = head.ready_at()
            if t <= now:
                vl, need = head.vl[tx], head.p.credits
                if tx.has_room(vl, need, now):
                    return self._send(tx, head, vl, now), nxt, False
                t = tx.room_time(vl, need, now)  # when the room will be there (INF: not on its way)
            if t < nxt:
                nxt = t
        return None, nxt, False

    def _send(self, tx, head, vl, now):
        p = head.p
        head.outs.remove(tx)
        tx.mq.remove(head)
        last = not head.outs
        if last:
            del self.heads[head.buf]
            xend = head.buf.take(p, now)  # out of the input VL: its credits go back upstream
        else:
            xend = max(now + p.size * head.rx.xbar_bt, p.tail_at)
            head.rx.xbar_free = xend  # this copy holds the input's crossbar connection meanwhile
            for other in head.outs:
                other.poke(xend)
        return self.copy_out(tx, p, vl, now, xend, last)

    def sendable(self, tx, now):
        for head in tx.mq:
            if head.ready_at() <= now and head.p.credits <= tx.room_at(head.vl[tx], now):
                return True, False
        return False, False

    def waits(self, head, now, starved):
        if head.ready_at() > now:
            return None, False
        return self.any_starved(head, head.outs, now, starved), False
