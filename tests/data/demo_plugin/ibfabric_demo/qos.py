"""An arbitration policy for QoS runs: admit while a link has bandwidth left, equal VL weights."""


class FlatShare:
    """An arbitration policy: admit while a link has bandwidth left; every class VL at weight 32."""

    def __init__(self, options=None):
        self.options = dict(options or {})

    def new_port(self, rate, classes, name=""):
        return FlatPort(rate, classes)


class FlatPort:
    """The table state of one output port under :class:`FlatShare`."""

    def __init__(self, rate, classes):
        self.rate = rate
        self.vls = sorted(set(classes.sl2vl))
        self.held = {}

    def check(self, demand):
        left = self.rate - sum(self.held.values())
        return None if demand.bandwidth <= left else f"bandwidth: {left:g} bit/s left"

    def reserve(self, demand):
        self.held[demand.conn] = demand.bandwidth

    def release(self, conn):
        self.held.pop(conn, None)

    def tables(self):
        return (), tuple((vl, 32) for vl in self.vls), 0

    def reserved(self):
        return float(sum(self.held.values()))
