"""Packet droppers: policies that may discard packets in switch input buffers.

A dropper is built per switch (``dropper`` parameter, options from
``dropperOptions``) and asked about every packet entering one of its input
buffers.  The built-in ``none`` never drops, which is IBA's lossless
behaviour; packet dropping schemes such as Kim et al.'s HLL-based dropping
are further droppers.
"""

from __future__ import annotations

from ibfabric.errors import ConfigError
from ibfabric.plugins.manager import hookimpl

__all__ = ["Dropper", "NoDropper"]


class Dropper:
    """Base class of packet droppers.

    ``passive = True`` tells the data path that :meth:`on_arrival` always
    answers False, so it need not be called.
    """

    passive = False

    def on_arrival(self, packet, buffer, now: float) -> bool:
        """Whether to discard *packet* as it enters *buffer* (an input buffer) at *now*."""
        return False


class NoDropper(Dropper):
    """Never drops a packet: lossless, credit-based IBA links."""

    passive = True

    def __init__(self, options: dict[str, str], rng=None):
        if options:
            raise ConfigError(f"the 'none' dropper takes no options (got {', '.join(options)})")


@hookimpl
def ibfabric_register_packet_droppers(register) -> None:
    register("none", NoDropper, description="never drop (lossless IBA)")
