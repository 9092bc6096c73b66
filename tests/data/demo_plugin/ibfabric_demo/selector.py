"""A path selector: a lottery among the routing options, weighted by their free credits."""

from ibfabric.plugins.selectors import PathSelector


class CreditLottery(PathSelector):
    """Takes each option with a probability proportional to the credits it has free downstream.

    An option without free credits is never taken while another has some.
    Takes no options (the base class refuses any).  ``taken`` counts the
    choices per option index (0: the escape option).
    """

    name = "credit-lottery"
    deterministic = False  # the same candidates may give another choice

    def __init__(self, options, rng):
        super().__init__(options, rng)
        self.taken = {}

    def select(self, packet, cands, now):
        total = 0
        for _option, _vl, free in cands:
            total += free
        if total <= 0:
            return 0
        x = self.rng.random() * total
        for k, (_option, _vl, free) in enumerate(cands):
            x -= free
            if x < 0:
                return k
        return len(cands) - 1

    def chosen(self, option, vl):
        self.taken[option.index] = self.taken.get(option.index, 0) + 1
