"""A packet dropper: random early drop, each arriving packet with probability p."""

from ibfabric import ConfigError
from ibfabric.plugins.droppers import Dropper


class RandomEarlyDrop(Dropper):
    """Drops each packet entering a switch's input buffer with probability ``p`` (default 0.05).

    Control packets (traffic class 3) are never dropped.
    """

    def __init__(self, options, rng):
        unknown = sorted(set(options) - {"p"})
        if unknown:
            raise ConfigError(f"dropper 'random-early' has no option '{unknown[0]}' (valid: p)")
        try:
            self.p = float(options.get("p", "0.05"))
        except ValueError:
            raise ConfigError(f"dropper 'random-early': 'p' must be a number (got {options['p']!r})") from None
        if not 0 <= self.p <= 1:
            raise ConfigError(f"dropper 'random-early': 'p' must be in 0..1 (got {self.p})")
        self.rng = rng
        self.passive = self.p == 0  # never drops: the switch need not ask
        self.draws = []  # uniform numbers drawn 1024 at a time: one numpy call per 1024 packets
        self.next = 0

    def on_arrival(self, packet, buffer, now):
        if packet.cls == 3:
            return False
        if self.next == len(self.draws):
            self.draws = self.rng.random(1024).tolist()
            self.next = 0
        x = self.draws[self.next]
        self.next += 1
        return x < self.p
