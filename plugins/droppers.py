"""Packet droppers: policies that may discard packets in switch input buffers.

A dropper is built per switch (``dropper`` parameter, options from
``dropperOptions``).  The data path asks it twice:

- :meth:`Dropper.on_arrival` as a packet enters an input buffer (unless the
  dropper is ``passive``), and
- :meth:`Dropper.expiry` as a packet reaches the head of its VL queue (if
  the dropper has ``lifetimes``): the time at which the packet is discarded
  if it is still there.  The switch keeps that time per VL (Kim et al.'s
  *HQLifetime*) and the output ports look at it in the wake-ups they
  already have, plus at most one wake-up per head packet at its expiry:
  time passing never costs an event per packet per tick.

Discarded packets free their buffer space (credits go back upstream) and
are counted per reason (``summary["dropped"]``).

Built in:

``none``
    Never drops: IBA's lossless behaviour.
``hll``
    Head-of-queue lifetime (IBA's HLL; Kim et al. 2007 §3.5): a packet at
    the head of a VL queue for longer than ``4.096 us x 2^HV`` is discarded
    (option ``hv``, 0..19; above 19 the limit is infinite).
``sll``
    Switch lifetime (IBA's SLL): a packet that has been in the switch for
    longer than ``4.096 us x 2^LV`` since its first bit arrived is discarded
    when it reaches the head of its queue, or at that time if it is the
    head (option ``lv``).

Both take ``selective`` (default ``true``, Kim's selective dropping): never
drop control packets (traffic class 3) nor packets marked ``keep`` by their
source (every packet of an MPEG-2 I frame, the first and last of B and P
frames; :func:`ibfabric.mpeg.protected`).
"""

from __future__ import annotations

from ibfabric.errors import ConfigError, did_you_mean
from ibfabric.plugins.manager import hookimpl

__all__ = ["Dropper", "NoDropper", "LifetimeDropper", "HeadOfQueueLifetime", "SwitchLifetime", "lifetime_ns"]

INF = float("inf")
#: IBA's lifetime unit: 4.096 microseconds, in ns.
LIFETIME_UNIT = 4096.0
#: The class index of control (management) traffic (:data:`ibfabric.measure.TRAFFIC_CLASSES`).
CONTROL = 3


def lifetime_ns(value: int) -> float:
    """``4.096 us x 2^value`` in ns, infinite above 19 (IBA's HLL and SLL encodings)."""
    return INF if value > 19 else LIFETIME_UNIT * (1 << value)


class Dropper:
    """Base class of packet droppers.

    ``passive = True`` tells the data path that :meth:`on_arrival` always
    answers False, so it need not be called; ``lifetimes = True`` that
    :meth:`expiry` must be asked for every packet reaching a queue's head.
    """

    passive = False
    lifetimes = False

    def on_arrival(self, packet, buffer, now: float) -> bool:
        """Whether to discard *packet* as it enters *buffer* (an input buffer) at *now*."""
        return False

    def expiry(self, packet, buffer, head_since: float) -> float:
        """When *packet*, at the head of *buffer* since *head_since*, is discarded (inf: never)."""
        return INF


class NoDropper(Dropper):
    """Never drops a packet: lossless, credit-based IBA links."""

    passive = True

    def __init__(self, options: dict[str, str], rng=None):
        if options:
            raise ConfigError(f"the 'none' dropper takes no options (got {', '.join(options)})")


def _flag(value: str, name: str) -> bool:
    v = value.strip().lower()
    if v in ("true", "1", "yes"):
        return True
    if v in ("false", "0", "no"):
        return False
    raise ConfigError(f"dropper option '{name}' must be true or false (got {value!r})")


class LifetimeDropper(Dropper):
    """A dropper with a lifetime limit ``4.096 us x 2^value`` (option *key*) and Kim's selective rule."""

    passive = True
    lifetimes = True
    key = "hv"
    name = ""

    def __init__(self, options: dict[str, str], rng=None):
        options = dict(options)
        unknown = sorted(set(options) - {self.key, "selective"})
        if unknown:
            raise ConfigError(f"unknown option '{unknown[0]}' for dropper '{self.name}'"
                              f"{did_you_mean(unknown[0], (self.key, 'selective'))} (valid: {self.key}, selective)")
        if self.key not in options:
            raise ConfigError(f"dropper '{self.name}' needs '{self.key}' (the limit is 4.096us x 2^{self.key}, "
                              f"{self.key} 0..19; above 19 never)")
        try:
            value = int(options[self.key])
        except ValueError:
            raise ConfigError(f"dropper '{self.name}': '{self.key}' must be an integer (got {options[self.key]!r})") \
                from None
        if value < 0:
            raise ConfigError(f"dropper '{self.name}': '{self.key}' must be >= 0 (got {value})")
        self.value = value
        self.limit = lifetime_ns(value)
        self.selective = _flag(options.get("selective", "true"), "selective")

    def protected(self, packet) -> bool:
        """Whether *packet* is never discarded: with the selective rule on, packets marked
        ``keep`` and control-class packets.
        """
        return self.selective and (packet.keep or packet.cls == CONTROL)


class HeadOfQueueLifetime(LifetimeDropper):
    """``hll``: discard a packet that heads its VL queue for longer than HLL."""

    key = "hv"
    name = "hll"

    def expiry(self, packet, buffer, head_since):
        if self.protected(packet):
            return INF
        return head_since + self.limit


class SwitchLifetime(LifetimeDropper):
    """``sll``: discard a packet that has been in the switch for longer than SLL."""

    key = "lv"
    name = "sll"

    def expiry(self, packet, buffer, head_since):
        if self.protected(packet):
            return INF
        return packet.head_at + self.limit


@hookimpl
def ibfabric_register_packet_droppers(register) -> None:
    register("none", NoDropper, description="never drop (lossless IBA)")
    register("hll", HeadOfQueueLifetime, description="head-of-queue lifetime 4.096us x 2^hv (Kim et al.; selective=)")
    register("sll", SwitchLifetime, description="switch lifetime 4.096us x 2^lv from arrival (selective=)")
