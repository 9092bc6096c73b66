"""The InfiniBand link channel.

A :class:`Link` joins two ports, full duplex.  Its data rate comes from
``width`` and ``speed`` (see :mod:`ibfabric.components.rates`) unless
``dataRate`` is set (> 0), which overrides it: papers that treat a 1x link as
2.5 Gb/s of data (Alfaro et al. 2001) set ``dataRate = 2.5Gbps``.  Its wire
delay is ``length * propagationDelay``.  A packet of ``L`` bytes sent at time ``t``
has its first bit at the far end at ``t + delay`` and its last bit at
``t + delay + L * byte_time``.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError
from ibfabric.kernel import Channel, Message

from .rates import check_link, link_rate, signalling_rate
from .routing.validate import negative_problem

__all__ = ["Link", "shared"]

#: one float object per value of the constants the data path reads at every hop (see :func:`shared`)
_SHARED: dict[float, float] = {}


def shared(x: float) -> float:
    """*x*, as the one float object kept for its value.

    Every port reads its link's ``byte_time`` and ``delay`` and its switch's
    routing delay at every packet-hop.  Computed per link and per switch, they
    are as many float objects as there are links and switches, all but a few
    of them cold on a large fabric (each a cache miss where the read touches
    the object); equal values share one object instead, which stays in the
    cache.  Zeros (of either sign) and NaN are returned as they are.
    """
    if x == 0 or x != x:
        return x
    kept = _SHARED.get(x)
    if kept is None:
        if len(_SHARED) >= 4096:  # a long sweep over many values: start again rather than grow
            _SHARED.clear()
        kept = _SHARED[x] = x
    return kept


class Link(Channel):
    """An IB link: ``rate`` (bit/s), ``byte_time`` (ns/byte), ``delay`` (ns)."""

    def initialize(self) -> None:
        p = self.params
        width, speed = str(p["width"]), str(p["speed"])
        try:
            check_link(width, speed)
        except ValueError as exc:
            raise ConfigError(f"{self.path}: {exc}") from None
        self.width = width
        self.speed = speed
        problem = negative_problem({k: float(p[k]) for k in ("dataRate", "length", "propagationDelay") if k in p})
        if problem is not None:
            raise ConfigError(f"{self.path}: {problem}")
        data_rate = float(p["dataRate"]) if "dataRate" in p else 0.0
        self.rate = data_rate if data_rate > 0 else link_rate(width, speed)
        self.signalling_rate = signalling_rate(width, speed)
        self.byte_time = shared(8e9 / self.rate)
        self.length = float(p["length"])
        per_m = float(p["propagationDelay"])
        self.delay = shared(self.length * per_m)

    def transmit_time(self, msg: Message) -> float:
        return self.delay + msg.size * self.byte_time

    @property
    def label(self) -> str:
        """``'4xQDR'``, as ibnetdiscover prints it."""
        return f"{self.width}{self.speed}"
