"""Per-flow throughput and latency, and victims against contributors (congestion control on or off).

A :class:`FlowMeter` listens to deliveries (:attr:`Simulation.delivery_listeners
<ibfabric.simulation.Simulation.delivery_listeners>`) and sums, per flow (source
host, destination host), the bytes and packets delivered in the measurement
window and their latency (creation to last bit).  It is set up by the subnet
manager when congestion control is on, or when a traffic pattern names
contributors (``hot-spot`` with ``contributors``: :class:`~ibfabric.plugins.traffic.HotSpot`),
so that the same run without congestion control is measured the same way.

The summary's ``flows`` section: per role (``contributor``, ``victim``; with
any other pattern every source is a ``source``), the hosts, the bytes per ns
they had delivered in the window (in all and per host), as a fraction of one
host link, and the mean latency; what the hot spot received; and per flow,
up to :data:`MAX_FLOWS` of them, ``"src->dst": [bytes per ns, mean latency
ns, packets]``.  CNPs and other control packets (class 3) are not counted.
"""

from __future__ import annotations

__all__ = ["FlowMeter", "attach_flows", "MAX_FLOWS"]

#: flows listed one by one in the summary (beyond, only the roles' sums)
MAX_FLOWS = 256


def _pattern_with_roles(sim):
    """The traffic pattern of the run's hosts that has contributors, or None.  A pattern that cannot be
    built is left to its host, which reports it at its own place in the topology when it starts."""
    from ibfabric.errors import IbfabricError

    for h in sim.hosts:
        try:
            name = str(h.params["traffic"])
            pattern = sim.traffic_pattern(name, str(h.params["trafficOptions"])) if name else None
        except (KeyError, IbfabricError):
            continue
        if getattr(pattern, "contributors", None) is not None:
            return pattern
    return None


def attach_flows(sim, force: bool = False) -> "FlowMeter | None":
    """Set up a :class:`FlowMeter` for *sim* if *force* or a pattern has contributors; return it."""
    pattern = _pattern_with_roles(sim)
    if pattern is None and not force:
        return None
    meter = FlowMeter(sim, pattern)
    sim.delivery_listeners.append(meter.delivered)
    sim.add_summary_section("flows", meter.summary)
    return meter


class FlowMeter:
    """Bytes, packets and latency delivered per flow in the measurement window (module docstring)."""

    def __init__(self, sim, pattern=None):
        self.sim = sim
        self.pattern = pattern
        self.window = sim.warmup
        #: per (src, dst): [bytes, packets, latency sum]
        self.flows: dict[tuple[int, int], list] = {}

    def delivered(self, p, t: float, node) -> None:
        """A delivery listener: count *p* if its last bit arrives in the window and it is data."""
        if t < self.window or p.cls == 3:
            return
        f = self.flows.get((p.src, p.dst))
        if f is None:
            f = self.flows[(p.src, p.dst)] = [0, 0, 0.0]
        f[0] += p.size
        f[1] += 1
        f[2] += t - p.created

    def role(self, src: int) -> str:
        """The role of source host *src*."""
        return self.pattern.role(src) if self.pattern is not None else "source"

    def summary(self) -> dict:
        """The ``flows`` section of the run's summary."""
        sim = self.sim
        span = sim.now - self.window
        if span <= 0:
            return {"flows": {}}
        hosts = sim.hosts
        rate = {}  # bytes per ns of each host's first link
        for i, h in enumerate(hosts):
            tx = h.tx.get(h.first_port) if h.first_port is not None else None
            rate[i] = tx.link.rate / 8e9 if tx is not None else 0.0
        senders: dict[str, set] = {}
        for i in range(len(hosts)):
            if self.pattern is None or self.pattern.active(i):
                senders.setdefault(self.role(i), set()).add(i)
        roles = {}
        for role, members in sorted(senders.items()):
            b = n = 0
            lat = 0.0
            for (s, _d), (fb, fn, fl) in self.flows.items():
                if s in members:
                    b += fb
                    n += fn
                    lat += fl
            per_host = b / span / len(members)
            link = sum(rate[i] for i in members) / len(members)
            roles[role] = {"hosts": len(members), "bytes_per_ns": b / span, "bytes_per_ns_per_host": per_host,
                           "per_host_of_link": per_host / link if link else 0.0,
                           "latency_mean_ns": lat / n if n else None, "packets": n}
        out = {"window_ns": span, "roles": roles}
        if self.pattern is not None:
            hot = self.pattern.hotspot
            got = sum(f[0] for (s, d), f in self.flows.items() if d == hot)
            out["hot_spot"] = {"host": hosts[hot].path, "bytes_per_ns": got / span,
                               "of_link": got / span / rate[hot] if rate[hot] else 0.0}
        if len(self.flows) <= MAX_FLOWS:
            out["per_flow"] = {f"{s}->{d}": [b / span, lat / n, n]
                               for (s, d), (b, n, lat) in sorted(self.flows.items())}
        out["flow_count"] = len(self.flows)
        return {"flows": out}
