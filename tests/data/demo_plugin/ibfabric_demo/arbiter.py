"""VL arbiters: strict priority, and a lottery weighted by the port's VLArbitrationTables."""

from ibfabric import ConfigError


class StrictPriority:
    """The lowest ready VL always goes first."""

    single_vl_trivial = True  # one data VL: always VL 0, no state, the port may skip select()

    def __init__(self, config):
        self.num_vls = config.num_vls

    def select(self, ready):
        for vl, packet in enumerate(ready):
            if packet is not None:
                return vl
        raise ValueError("select() called with no VL ready")


class Lottery:
    """Each ready VL wins with a probability proportional to its weight in the port's tables.

    A VL's weight is the sum of its entries in the high- and low-priority
    VLArbitrationTables (``vlArbHigh``, ``vlArbLow``; every data VL at 64
    when both are empty).  The draws come from ``config.rng``, the port's own
    generator, so a run is reproducible from its seed.
    """

    def __init__(self, config):
        self.weights = [0] * config.num_vls  # a list: select() indexes it per packet, faster than an array
        for vl, weight in config.high + config.low:
            if vl < config.num_vls:
                self.weights[vl] += weight
        self.rng = config.rng
        if not any(self.weights):
            raise ConfigError(f"{config.port}: the lottery arbiter needs a VL with a weight above 0")

    def unserved(self):
        """Data VLs without weight: ibfabric refuses a port whose VLs could never send."""
        return [vl for vl, w in enumerate(self.weights) if w == 0]

    def select(self, ready):
        weights = self.weights
        total = 0
        for vl, packet in enumerate(ready):
            if packet is not None:
                total += weights[vl]
        x = self.rng.random() * total
        for vl, packet in enumerate(ready):
            if packet is not None:
                x -= weights[vl]
                if x < 0:
                    return vl
        return max(vl for vl, packet in enumerate(ready) if packet is not None)
