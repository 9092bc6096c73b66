"""A traffic pattern: every host sends to the host ``distance`` places further on."""

import numpy as np

from ibfabric import ConfigError
from ibfabric.plugins.traffic import TrafficPattern


class Neighbour(TrafficPattern):
    """Host i sends to host (i + distance) mod N (option ``distance``, default 1)."""

    name = "neighbour"
    option_names = ("distance",)

    def __init__(self, num_hosts, options, rng):
        super().__init__(num_hosts, options, rng)  # checks num_hosts >= 2 and the option names
        try:
            self.distance = int(self.options.get("distance", "1"))
        except ValueError:
            raise ConfigError(f"traffic pattern 'neighbour': 'distance' must be an integer"
                              f" (got {self.options['distance']!r})") from None
        if self.distance % num_hosts == 0:
            raise ConfigError(f"traffic pattern 'neighbour': a distance of {self.distance} sends every"
                              f" host to itself ({num_hosts} hosts)")

    def destinations(self, src, rng, n):
        return np.full(n, (src + self.distance) % self.num_hosts)
