"""Crossbar arbitration among the input ports that compete for one output (switch parameter
``crossbarArbiter``).

Kim et al. 2007 §2.2 (Fig. 1, stage 4): "WRR scheduling is used to service
packets arriving at Stage 4", the crossbar, before VL arbitration at the
output link (stage 5).  Two orders are available:

``fifo`` (the default)
    An output port serves, per output VL, the input buffers whose head packet
    is routed to it in the order they became candidates: a buffer that has
    just sent goes to the back, so equal inputs already take turns, but a
    ready input never waits for an idle one.

``wrr``
    Weighted round robin over input port numbers, per output port and output
    VL.  A pointer names the input port whose turn it is; the port takes the
    first ready candidate at or after the pointer (cyclically), so an input
    that has nothing ready loses its turn to the next one.  Input *i* may take
    ``weight[i]`` grants in a row (``crossbarWeights = "port:weight,..."``,
    packets per turn, default 1 for every port: plain round robin); after its
    last one, or when another input is granted, the turn moves on.

Either order only decides among candidates that may cross now (ready, their
input's crossbar connection free, enough credits downstream): a packet that
does not fit never holds back one that does.  VL15 packets are served first
and in FIFO order.  The same order applies to output-buffered switches (to
the transfers into the output buffers), to switches with routing options
and to multicast switches' unicast candidates.

``wrr`` is a stage of the output port (:mod:`~ibfabric.components.switch.tx`): :func:`wrap_wrr` puts the
ordering in front of its crossbar and the grant count behind its ``send``.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError

__all__ = ["parse_weights", "init_wrr", "wrap_wrr"]


def parse_weights(text: str, ports: list[int], owner: str) -> dict[int, int]:
    """``"1:4, 3:2"`` -> ``{1: 4, 3: 2}``: packets per turn of the listed input ports (1..255)."""
    out: dict[int, int] = {}
    for item in text.replace(",", " ").split():
        port, sep, weight = item.partition(":")
        try:
            port_n, weight_n = int(port), int(weight)
        except ValueError:
            port_n = weight_n = -1
        if not sep or not 1 <= weight_n <= 255:
            raise ConfigError(f"{owner}: 'crossbarWeights' takes \"port:weight\" items, weights 1..255"
                              f" (got {item!r})")
        if port_n not in ports:
            raise ConfigError(f"{owner}: 'crossbarWeights' names port {port!r}, which is not connected"
                              f" (connected: {', '.join(map(str, sorted(ports)))})")
        if port_n in out:
            raise ConfigError(f"{owner}: 'crossbarWeights' names port {port_n} twice")
        out[port_n] = weight_n
    return out


def init_wrr(tx, weights: list[int]) -> None:
    """Give port *tx* the round-robin state: *weights*, packets per turn, indexed by input port number
    (every port of the switch); a pointer and a grant count per output VL."""
    tx.xweights = weights
    tx.xptr = [0] * tx.nvl
    tx.xused = [0] * tx.nvl


def order(tx) -> None:
    """Sort every output VL's candidates of *tx* by their input port's distance from the pointer."""
    width = len(tx.xweights)
    for vl, c in enumerate(tx.cands):
        if len(c) > 1:
            ptr = tx.xptr[vl]
            c.sort(key=lambda b: (b.rx.port - ptr) % width)


def grant(tx, vl: int, port: int) -> None:
    """Input *port* won output VL *vl* of *tx*: count the grant, and pass the turn once its weight is used."""
    if port == tx.xptr[vl]:
        tx.xused[vl] += 1
    else:
        tx.xptr[vl] = port
        tx.xused[vl] = 1
    if tx.xused[vl] >= tx.xweights[port]:
        tx.xptr[vl] = port + 1 if port + 1 < len(tx.xweights) else 0
        tx.xused[vl] = 0


def wrap_wrr(tx) -> None:
    """Order *tx*'s candidates by weighted round robin before its crossbar chooses, and count the grant of
    what it sends (called by ``SwitchTx.bind``)."""
    send = tx.send

    def granted(c, p, vl: int, now: float) -> float:
        grant(tx, vl, c.rx.port)
        return send(c, p, vl, now)

    tx.send = granted
    if tx.obuf is None:
        inner = tx.try_send

        def try_send(now: float):
            order(tx)
            return inner(now)

        tx.try_send = try_send
    else:
        inner_transfer = tx.transfer

        def transfer(now: float) -> float:
            order(tx)
            return inner_transfer(now)

        tx.transfer = transfer
