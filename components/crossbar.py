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
the transfers into the output buffers) and to switches with routing options.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError

__all__ = ["WrrCrossbar", "parse_weights", "wrr_class"]

_CLASSES: dict[type, type] = {}


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


class WrrCrossbar:
    """Mixin for a switch output port: weighted round robin among input ports (see the module)."""

    wrr = True

    def init_wrr(self, weights: list[int]) -> None:
        """*weights*: packets per turn, indexed by input port number (every port of the switch)."""
        self.xweights = weights
        self.xwidth = len(weights)
        self.xptr = [0] * self.nvl
        self.xused = [0] * self.nvl

    def order(self) -> None:
        """Sort every output VL's candidates by their input port's distance from the pointer."""
        width = self.xwidth
        for vl, c in enumerate(self.cands):
            if len(c) > 1:
                ptr = self.xptr[vl]
                c.sort(key=lambda b: (b.rx.port - ptr) % width)

    def grant(self, vl: int, port: int) -> None:
        """Input *port* won output VL *vl*: count the grant, and pass the turn once its weight is used."""
        if port == self.xptr[vl]:
            self.xused[vl] += 1
        else:
            self.xptr[vl] = port
            self.xused[vl] = 1
        if self.xused[vl] >= self.xweights[port]:
            self.xptr[vl] = port + 1 if port + 1 < self.xwidth else 0
            self.xused[vl] = 0

    def try_send(self, now: float):
        """Order the candidates by weighted round robin, then send as the port's own ``try_send``."""
        self.order()
        return super().try_send(now)

    def _send(self, buf, p, vl: int, now: float) -> float:
        self.grant(vl, buf.rx.port)
        return super()._send(buf, p, vl, now)

    def _transfer(self, now: float) -> None:
        # output-buffered ports: the crossbar stage moves packets into the output buffers,
        # and BufferedSwitchTx._transfer calls grant() for the one it moves
        self.order()
        super()._transfer(now)


def wrr_class(base: type) -> type:
    """*base* (a switch transmitter class) with weighted round robin among its inputs."""
    cls = _CLASSES.get(base)
    if cls is None:
        cls = _CLASSES[base] = type("Wrr" + base.__name__, (WrrCrossbar, base), {"__module__": __name__})
    return cls
