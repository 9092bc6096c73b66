"""Building and running a simulation.

::

    import ibfabric
    sim = ibfabric.load("topologies/bermudez2006_fig1.ned",
                        overrides={"**.traffic": "uniform", "**.load": "0.2"}, seed=7)
    summary = sim.run("200us")
    print(summary["latency_ns"]["mean"])

A :class:`Simulation` owns one plugin set, one type library, one salabim
environment and the module tree.  Building goes: load plugins -> elaborate
the topology with the parameter overrides -> create modules and channels ->
run the init stages (IB nodes read parameters and wire their ports; the
subnet manager assigns LIDs and installs routes; traffic sources start).
"""

from __future__ import annotations

import math
import os
import re
import time
import warnings
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import salabim

from ibfabric.checks import IbfabricWarning, check_built
from ibfabric.errors import ConfigError, DeadlockError, TopologyError
from ibfabric.kernel import Channel, CompoundModule, Module, module_rng, run_gc_threshold, without_gc
from ibfabric.measure import BacklogMonitor
from ibfabric.plugins.manager import PluginSet
from ibfabric.plugins.traffic import checked
from ibfabric.endpoints import EndpointsMixin
from ibfabric.scenario import ScenarioMixin
from ibfabric.signals import Recorder, SignalBus
from ibfabric.stats import DEFAULT_LOG_LIMIT, PacketStats
from ibfabric.units import UnitError, parse_duration

__all__ = ["Simulation", "load", "parse_time"]

INF = math.inf


def parse_time(value: float | int | str, what: str = "time") -> float:
    """A duration in ns from a number (ns) or a quantity string ('100us'; a string needs a unit,
    :func:`ibfabric.units.parse_duration`): finite, not negative, at most
    :data:`ibfabric.units.MAX_DURATION_NS` (1000 s)."""
    try:
        return parse_duration(value)
    except UnitError as exc:
        raise ConfigError(f"bad {what} {value!r}: {exc}") from None


class Simulation(EndpointsMixin, ScenarioMixin):
    """One simulation run (failures, traffic changes and ``run_until``: :mod:`ibfabric.scenario`).

    Parameters
    ----------
    topology : str, os.PathLike or ElaboratedNetwork
        A ``.ned`` file, an ibnetdiscover dump (detected by content), NED
        text (when it contains a newline), or an elaborated network.
    overrides : mapping or iterable of (pattern, value), optional
        Parameter overrides by wildcard path (``'**.routingDelay': '100ns'``),
        first match wins.  A pattern that matches no parameter is an error.
    optional_overrides : mapping or iterable of (pattern, value), optional
        Overrides tried after *overrides* that may match nothing (what the
        CLI's ``--routing``, ``--load``... become).
    defaults : mapping or iterable of (pattern, value), optional
        The weakest level, which may match nothing: values for parameters
        that neither an override nor the topology file assigns, used instead
        of the type's defaults (the CLI's default ``--load``, ``--traffic``...:
        ``**.load = 0.5`` in the file wins over them).
    network : str, optional
        Which network of the file to build (default: the only/last one).
    seed : int, default 1
        The run's seed (the command line's default too); every module draws
        from its own generator derived from it and its path.
    plugins, block :
        Extra plugin objects, and plugin names not to load.
    warmup : float or str
        Start of the measurement window ``[warmup, end]`` (see
        :mod:`ibfabric.measure` for what is measured in it).
    check : bool
        Verify the credit invariant at every transmission (slow; for tests).
    deadlock_interval : float or str
        How often to look for deadlocks (sim time); 0 disables.
    log_limit : int or None
        Deliveries kept per packet before the complete ones are folded into
        streaming statistics (bounded memory on long runs; see
        :mod:`ibfabric.stats`); None keeps them all.
    limits : ibfabric.ned_like.Limits, optional
        Resource limits of the topology's elaboration (modules, gates, vector
        size, loop iterations); by default from the ``IBFABRIC_MAX_*``
        environment variables (see ``docs/ned-language.md``, *Limits*).
    names : {'desc', 'guid', 'lid'}, optional
        How to name the nodes of an ibnetdiscover dump (default ``'desc'``;
        see ``docs/ibnetdiscover.md``, *Node names*).  Giving it for a NED
        topology is a :class:`~ibfabric.errors.ConfigError`.

    Durations are quantity strings with a unit (``'200us'``) or Python numbers of ns.  What looks
    wrong but runs (routes with a channel-dependency cycle, a traffic pattern
    that leaves sources idle, an empty measurement window, saturation) is
    reported through :meth:`warn` (see :mod:`ibfabric.checks`).
    """

    def __init__(self, topology, **kwargs):
        # salabim's default Environment is the last one made: this one, from here on, not that of a
        # simulation the caller has dropped, which the build's collection can then free (without_gc)
        self.env = salabim.Environment(
            trace=False, random_seed="", set_numpy_random_seed=False, yieldless=False
        )
        self._init(topology, **kwargs)

    @without_gc
    def _init(
        self,
        topology,
        *,
        overrides: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        optional_overrides: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        defaults: Mapping[str, str] | Iterable[tuple[str, str]] | None = None,
        network: str | None = None,
        seed: int = 1,
        plugins: Iterable[Any] = (),
        block: Iterable[str] = (),
        warmup: float | str = 0.0,
        check: bool = False,
        deadlock_interval: float | str = "50us",
        log_limit: int | None = DEFAULT_LOG_LIMIT,
        limits=None,
        names: str | None = None,
    ):
        from ibfabric.argcheck import check_simulation

        check_simulation(topology, overrides=overrides, optional_overrides=optional_overrides, defaults=defaults,
                         network=network, plugins=plugins, block=block, limits=limits)
        if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
            raise ConfigError(f"seed must be a non-negative integer (got {seed!r})")
        self.seed = int(seed)
        self.check = bool(check)
        self.warmup = parse_time(warmup, "warmup")
        self.deadlock_interval = parse_time(deadlock_interval, "deadlock interval")
        self.plugins = PluginSet.load(plugins=plugins, block=block)
        self.library = self.plugins.type_library()
        self.warnings: list[str] = []  # see warn()
        self.network = self._elaborate(topology, overrides, optional_overrides, defaults, network, limits, names)
        from ibfabric.components.eventloop import PortLoop

        #: the port wake-ups and scheduled calls, run with salabim's events, and the simulation's clock
        #: (components/eventloop.py)
        self.portloop = PortLoop(self.env, self.check)
        loop = self.portloop
        self.signals = SignalBus(lambda: loop.now)
        self.stats = PacketStats(self.warmup, log_limit)
        self.stats.clock = lambda: loop.now
        self.backlog = BacklogMonitor(self)
        self.recorders: list[Recorder] = []
        self.traffic_stop = INF
        self.tables = None  # the installed ForwardingTables (set by the subnet manager)
        self.routing_time: float | None = None  # seconds the routing engine took
        self._patterns: dict[tuple[str, str], Any] = {}
        self._msg_ids = 0
        self.deadlock: DeadlockError | None = None
        self.qos = None  # the QosNetwork of a QoS run (ibfabric.components.qos.cbr)
        self.realtime_deadlines = None  # DMP/DMT of MPEG-2 streams (ibfabric.components.hca.realtime)
        self.realtime_multicast_flows: set[int] = set()  # flows of the MPEG-2 streams sent to a group
        self.workload = None  # the Workload running on the fabric (ibfabric.components.hca.workload)
        self.multicast = None  # per-group accounting when multicast groups are declared (ibfabric.mstats)
        self.wall = 0.0
        #: ``f(packet, tail time, node)`` for every delivery to a host (features that account for deliveries:
        #: the multicast accounting of replicated unicast)
        self.delivery_listeners: list[Callable] = []
        #: ``f(packet, reason, node) -> reason or None`` for every drop (see :meth:`drop`)
        self.drop_listeners: list[Callable] = []
        #: the summary's sections of the features this run has (see :meth:`add_summary_section`)
        self.summary_sections: dict[str, Callable[[], dict]] = {}
        self._listen_received = False
        self._listen_dropped = False
        with self.plugins.blaming():  # an exception in a plugin's code names the plugin
            self._build()
        check_built(self)

    # ------------------------------------------------------------ building

    def _elaborate(self, topology, overrides, optional, defaults, network, limits=None, names=None):
        from ibfabric.ned_like import OverrideSet
        from ibfabric.ned_like.model import ElaboratedNetwork
        from ibfabric.topologies import load_network

        strict = _override_items(overrides)
        patterns = {p for p, _ in strict}
        soft = [(p, v) for p, v in _override_items(optional) if p not in patterns]
        weak = _override_items(defaults)
        ov = OverrideSet(strict + soft, defaults=weak)
        if isinstance(topology, ElaboratedNetwork):
            if strict or optional or weak:
                raise ConfigError("parameter overrides need a topology file or text, not an elaborated network")
            if names is not None:
                raise ConfigError(f"names={names!r} applies to ibnetdiscover dumps, not to an elaborated network")
            net = topology
        else:
            net = load_network(topology, network=network, library=self.library, overrides=ov, limits=limits,
                               names=names)
        self._overrides = ov
        net = self._with_subnet_manager(net, ov)
        unused = [p for p in ov.unused() if p in patterns]
        if unused:
            from ibfabric.errors import did_you_mean

            head, _, last = unused[0].rpartition(".")
            names = self.library.parameter_names()
            hint = "" if last in names else did_you_mean(last, names, written=f"{head}.{{}}" if head else "{}")
            if not hint and not unused[0].startswith(("*", net.name)):
                hint = f" (patterns match full paths such as '{net.name}.sw.routingDelay'; try '**.{unused[0].split('.')[-1]}')"
            raise ConfigError(f"override '{unused[0]}' matches no parameter of network '{net.name}'{hint}")
        return net

    def _with_subnet_manager(self, net, ov):
        """Add a default subnet manager (path ``<network>.sm``) if the network has none."""
        from ibfabric.ned_like import elaborate
        from ibfabric.ned_like.model import ElaboratedNetwork

        if any(m.type_name == "ibfabric.components.SubnetManager" for m in net.simple_modules()):
            return net
        if not any(m.type_name in ("ibfabric.components.Switch", "ibfabric.components.HCA") for m in net.simple_modules()):
            return net
        name = "sm"
        taken = {s.name for s in net.root.submodules}
        while name in taken:
            name += "_"
        snippet = f"network {net.root.name} {{ submodules: {name}: SubnetManager; }}"
        sm = elaborate(snippet, library=self.library, overrides=ov, filename="<default subnet manager>").root.submodules[0]
        import attrs

        root = attrs.evolve(net.root, submodules=net.root.submodules + (sm,))
        return ElaboratedNetwork(root=root, source=net.source)

    def _build(self) -> None:
        registry = self.plugins.module_types
        self.root: Module = self._make_module(self.network.root, None, registry)
        self.modules_by_path = {m.path: m for m in self.root.walk()}
        self.channels: list[Channel] = []
        default_link = None
        for c in self.network.flat_connections():
            a = self._gate(c.src)
            b = self._gate(c.dst)
            spec = c.channel
            if spec is None and a.name == "port" and b.name == "port":
                if default_link is None:
                    default_link = self._default_link_spec()
                spec = default_link
            ch = None
            if spec is not None:
                cls = self._class_of(spec.type_name, registry, c.location)
                if not (isinstance(cls, type) and issubclass(cls, Channel)):
                    raise TopologyError(f"{c.location}: '{spec.type_name}' is not a channel type")
                ch = cls(self, spec, f"{c.src}.channel")
                ch.ends = (a, b)
                try:
                    ch.initialize()
                except ConfigError as exc:
                    raise _located(exc, c.location) from None
                self.channels.append(ch)
            for g, other in ((a, b), (b, a)):
                if g.peer is not None:
                    raise TopologyError(f"{c.location}: gate {g.path} is connected twice")
                g.peer, g.channel, g.location = other, ch, c.location
        from ibfabric.components.node import IBNode

        self.ib_nodes = [m for m in self.root.walk() if isinstance(m, IBNode)]
        self.hosts = [m for m in self.ib_nodes if not m.is_switch and any(g.peer for g in m.gate_vector("port")[1:])]
        self._host_index = {id(h): i for i, h in enumerate(self.hosts)}
        self.stats.hosts = len(self.hosts)
        stages = max((m.num_init_stages() for m in self.root.walk()), default=1)
        for stage in range(stages):
            for m in self.root.walk():
                if stage < m.num_init_stages():
                    try:
                        m.initialize(stage)
                    except ConfigError as exc:
                        raise _located(exc, m.spec.location) from None
            if stage == 1:
                self._check_buffers()
        self.watchdog = None
        switches = [n for n in self.ib_nodes if n.is_switch]
        if self.deadlock_interval > 0 and switches:
            from ibfabric.deadlock import Watchdog

            self.watchdog = Watchdog(self, self.deadlock_interval)
        self.ports = [tx for n in self.ib_nodes for tx in n.tx.values()]
        for tx in self.ports:
            tx.window = self.warmup
        self.plugins.pm.hook.ibfabric_simulation_built(simulation=self)

    def _make_module(self, spec, parent, registry) -> Module:
        if spec.kind == "compound":
            m = CompoundModule(self, spec, parent)
        else:
            cls = self._class_of(spec.type_name, registry, spec.location)
            if not (isinstance(cls, type) and issubclass(cls, Module)):
                raise TopologyError(f"{spec.location}: '{spec.type_name}' is not a module type")
            m = cls(self, spec, parent)
        for sub in spec.submodules:
            m.submodules.append(self._make_module(sub, m, registry))
        return m

    def _class_of(self, type_name: str, registry, location):
        if type_name in registry:
            return registry[type_name]
        where = f"{location}: " if location else ""
        raise TopologyError(f"{where}type '{type_name}' has no Python implementation (no plugin registered it)")

    def _gate(self, ref):
        m = self.modules_by_path[ref.path]
        return m.gate(ref.gate, ref.index)

    def _default_link_spec(self):
        from ibfabric.ned_like import elaborate

        net = elaborate(
            "network _d { submodules: a: HCA; b: HCA; connections: a.port[1] <--> Link <--> b.port[1]; }",
            library=self.library, filename="<default link>",
        )
        return net.flat_connections()[0].channel

    def _check_buffers(self) -> None:
        """Every data VL buffer must hold the largest packet a host can send (virtual cut-through)."""
        biggest = max((h.max_packet() for h in self.hosts), default=0)
        for n in self.ib_nodes:
            if n.is_switch and 0 < n.out_buffer < biggest:
                raise ConfigError(
                    f"{n.path}: outputBufferSize ({n.out_buffer}B) is smaller than the largest packet ({biggest}B)"
                )
            for port, rx in n.rx.items():
                for cap in rx.capacities():
                    if cap * 64 < biggest:
                        raise ConfigError(
                            f"{n.path}.port[{port}]: vlBufferSize ({cap * 64}B) is smaller than the largest"
                            f" packet ({biggest}B = mtu + headerSize); virtual cut-through needs room for a whole packet"
                        )

    # --------------------------------------------------------- services

    @property
    def fabric(self):
        """The routed FabricGraph (that of :attr:`tables`), or None before routing."""
        return self.tables.fabric if self.tables is not None else None

    @property
    def now(self) -> float:
        """Simulation time in ns."""
        return self.portloop.now

    def call_at(self, t: float | str, fn: Callable, *args):
        """Call ``fn(*args)`` at simulation time *t* (ns or '10us'); returns a cancellable handle."""
        from ibfabric.argcheck import check_callable

        check_callable("call_at's function", fn)
        t = parse_time(t)
        if t < self.now:
            raise ConfigError(f"cannot schedule at {t} ns: the simulation is at {self.now} ns")
        return self.portloop.call_at(t, fn, args)

    def module(self, path: str) -> Module:
        """The module at *path* (full path, or relative to the network)."""
        m = self.modules_by_path.get(path) or self.modules_by_path.get(f"{self.root.path}.{path}")
        if m is None:
            raise KeyError(f"no module '{path}' in network '{self.root.path}'")
        return m

    def find(self, pattern: str) -> list[Module]:
        """Modules whose path matches a wildcard *pattern* (``'**.sw*'``)."""
        from ibfabric.argcheck import check_pattern
        from ibfabric.ned_like import match

        check_pattern("find", pattern)

        return [m for m in self.root.walk() if match(pattern, m.path)]

    def record(self, signal: str, *stats: str, modules: str = "**", histogram_edges=None) -> Recorder:
        """Collect statistics of *signal* emitted by modules matching *modules*."""
        from ibfabric.argcheck import check_pattern, check_string

        check_string("the signal", signal)
        for s in stats:
            check_string("a statistic", s)
        check_pattern("record's modules", modules)
        rec = Recorder(signal, stats or ("count", "mean"), histogram_edges)
        for m in self.find(modules):
            self.signals.subscribe(signal, rec, source=m)
        self.recorders.append(rec)
        return rec

    def traffic_index(self, hca) -> int | None:
        """The index of *hca* among the traffic hosts, or None if it sends and receives no traffic.

        Hosts are the channel adapters with at least one connected port, numbered
        in module order; traffic patterns name destinations by this index.
        """
        return self._host_index.get(id(hca))

    def traffic_pattern(self, name: str, options: str):
        """The traffic pattern *name* with *options* (its ``trafficOptions`` text), built once.

        Every HCA that asks for the same name and options shares one pattern,
        created by its plugin with the number of hosts, the parsed options and a
        Generator seeded from the simulation seed and the pattern's name and options
        (and the hosts' module paths when it was registered with ``host_names=True``),
        and wrapped in checks of the destinations it gives.
        """
        from ibfabric.argcheck import check_string

        check_string("the traffic pattern", name)
        check_string("the traffic options", options)
        key = (name, options)
        if key not in self._patterns:
            from ibfabric.components.node import parse_options

            reg = self.plugins.traffic_patterns.get(name)
            opts = parse_options(options, "traffic", "trafficOptions")
            rng = module_rng(self.seed, f"traffic:{name}:{options}")
            kw = {"host_names": [h.path for h in self.hosts]} if reg.extra.get("host_names") else {}
            self._patterns[key] = checked(reg, reg.create(len(self.hosts), opts, rng, **kw), len(self.hosts))
        return self._patterns[key]

    def warn(self, message: str) -> None:
        """Report something that looks wrong but runs: add it to :attr:`warnings` (the summary's
        ``"warnings"``) and issue it as an :class:`ibfabric.checks.IbfabricWarning` (the CLI
        prints ``ibfabric: warning: ...``).  A message already given is not repeated."""
        if message not in self.warnings:
            self.warnings.append(message)
            warnings.warn(message, IbfabricWarning, stacklevel=2)

    def next_message_id(self) -> int:
        """A new message identifier: 1, 2, 3... in the order of the calls."""
        self._msg_ids += 1
        return self._msg_ids

    # ------------------------------------------------------ accounting

    def deliver(self, p, t: float, node) -> None:
        """Record *p*, whose last bit reaches *node* at *t* (at or after now); the delivery listeners
        (:attr:`delivery_listeners`) are told."""
        self.stats.add_delivery(p, t)
        if self.delivery_listeners:
            for f in self.delivery_listeners:
                f(p, t, node)
        if self._listen_received:
            # an event only when somebody listens: the signal fires when the tail arrives
            self.call_at(t, node.emit, "packetReceived", t - p.created)

    def deliver_local(self, p, node) -> None:
        """Record *p*, consumed by the switch *node* itself (a packet to its port 0), at its tail time."""
        self.stats.local.append(p.tail_at)

    def drop(self, p, reason: str, node) -> None:
        """Record that *node* dropped *p* for *reason* (emits ``packetDropped`` if anything listens).

        The drop listeners (:attr:`drop_listeners`) are told first; one may return the reason to count
        the drop under instead (the dynamic subnet manager counts its packets as ``smp-lost``)."""
        for f in self.drop_listeners:
            r = f(p, reason, node)
            if r:
                reason = r
        self.stats.dropped[reason] += 1
        if self._listen_dropped:
            node.emit("packetDropped", reason)

    def add_summary_section(self, name: str, section: Callable[[], dict]) -> None:
        """Give the summary what a feature of this run measures: ``section()`` returns the keys to add
        (``{"qos": ...}``; it may warn through :meth:`warn`).  The built-in plugin adds them when a run
        finishes (the ``ibfabric_run_finished`` hook), after the core figures; a third-party plugin can
        do the same from its own hook implementation."""
        self.summary_sections[name] = section

    def packets_in_network(self) -> int:
        """Packets inside the fabric now, counted where they are (buffers and final wires)."""
        n = sum(node.packets_held() for node in self.ib_nodes if node.is_switch)
        return n + self.stats.on_wire_to_hosts(self.now)

    def audit_ports(self) -> None:
        """Check (with ``check=True``) that no port sleeps past a moment it could send.

        Every sleeping transmitter whose link is free must not have a packet
        that could start now: it would otherwise be idle for no reason, which
        would be a missed wake-up in the data path.
        """
        now = self.now
        for tx in self.ports:
            if tx.running:  # it decides before it sleeps
                continue
            wake = tx.pending_wake()
            if tx.busy_until > now or wake <= now:
                continue
            if tx.sendable(now):
                raise AssertionError(f"{tx.name_} sleeps until {wake} at {now} although a packet could go now")

    def find_deadlock(self) -> list[str] | None:
        """A cycle of buffers, each full and waiting for the next to drain, or None
        (:func:`ibfabric.deadlock.find_deadlock`)."""
        from ibfabric.deadlock import find_deadlock

        return find_deadlock(self)

    # ------------------------------------------------------------- running

    def run(self, until: float | str, *, progress: bool | Callable[[float, float], None] = False) -> dict[str, Any]:
        """Run until simulation time *until* (ns or '1ms'); return the summary dict.

        Raises
        ------
        DeadlockError
            If the network deadlocks; ``sim.summary()`` still gives the
            results up to the detection and ``summary()['deadlock']`` the cycle.
        """
        end = parse_time(until, "run time")
        if not (isinstance(progress, bool) or callable(progress)):
            raise ConfigError(f"progress must be True, False or a callable (got {progress!r})")
        if end < self.now:
            raise ConfigError(f"cannot run until {end} ns: the simulation is already at {self.now} ns")
        self._listen_received = self.signals.listened("packetReceived")
        self._listen_dropped = self.signals.listened("packetDropped")
        self.backlog.schedule(end)
        t0 = time.perf_counter()
        try:
            with self.plugins.blaming():
                self._run_chunks(end, progress)
        except DeadlockError as exc:
            self.deadlock = exc
            raise
        finally:
            self.wall += time.perf_counter() - t0
            self._finish()
        return self.summary()

    def _run_chunks(self, end: float, progress) -> None:
        """One run of the event lists (:meth:`PortLoop.run <ibfabric.components.eventloop.PortLoop.run>`);
        progress is reported by a ticker component that wakes 200 times over the span."""
        start = self.now
        span = end - start
        if span <= 0:
            return
        ticker = _Ticker(self, start, span, progress) if progress else None
        try:
            with run_gc_threshold():
                self.portloop.run(end)
        finally:
            if ticker is not None:
                ticker.close()

    def _finish(self) -> None:
        for m in self.root.walk():
            m.finish()

    @property
    def events(self) -> int:
        """The number of events executed so far: port transmitter steps, scheduled calls and watchdog events."""
        n = self.portloop.events + self.portloop.calls_run
        return n + (self.watchdog.events if self.watchdog else 0)

    def summary(self) -> dict[str, Any]:
        """The results so far (what ``summary.json`` holds)."""
        from ibfabric.results import summarize

        s = summarize(self)
        with self.plugins.blaming():
            self.plugins.pm.hook.ibfabric_run_finished(simulation=self, summary=s)
        return s

    def parameters_set(self) -> list[tuple[str, str]]:
        """The ``(pattern, value)`` overrides that set a parameter of this network, in priority order."""
        return self._overrides.used()

    def scalars(self) -> list[tuple[str, str, float]]:
        """(module, statistic, value) rows of every recorder."""
        rows = []
        for r in self.recorders:
            rows.extend(r.scalars())
        return rows


class _Ticker(salabim.Component):
    """Reports progress: calls a callback, or shows a bar once the run has taken over a second."""

    def __init__(self, sim: "Simulation", start: float, span: float, progress):
        self.start = start
        self.span = span
        self.callback = progress if callable(progress) else None
        self.t_wall = time.perf_counter()
        self.bar = None
        super().__init__(env=sim.env, name="ibfabric.progress")

    def process(self):
        step = self.span / 200
        while True:
            yield self.hold(step)
            done = min(self.env.now() - self.start, self.span)
            if self.callback is not None:
                self.callback(done, self.span)
            else:
                if self.bar is None and time.perf_counter() - self.t_wall > 1.0:
                    self.bar = _ProgressBar(self.span)
                if self.bar is not None:
                    self.bar.update(done)

    def close(self) -> None:
        if self.callback is not None:
            self.callback(self.span, self.span)
        if self.bar is not None:
            self.bar.close()
        self.cancel()


class _ProgressBar:
    def __init__(self, total: float):
        from rich.progress import BarColumn, Progress, TextColumn, TimeRemainingColumn

        self.progress = Progress(
            TextColumn("simulating"), BarColumn(), TextColumn("{task.percentage:>5.1f}%"), TimeRemainingColumn(),
            transient=True,
        )
        self.progress.start()
        self.task = self.progress.add_task("run", total=total)

    def update(self, done: float) -> None:
        self.progress.update(self.task, completed=done)

    def close(self) -> None:
        self.progress.stop()


def _located(exc: ConfigError, location) -> ConfigError:
    """*exc* with ``file:line:col:`` in front, unless it already starts with one."""
    msg = str(exc)
    if location is None or re.match(r"^\S+:\d+:\d+: ", msg):
        return exc
    return type(exc)(f"{location}: {msg}")


def _override_items(overrides) -> list[tuple[str, str]]:
    if overrides is None:
        return []
    items = overrides.items() if isinstance(overrides, Mapping) else overrides
    out = []
    for item in items:
        try:
            k, v = item
        except (TypeError, ValueError):
            raise ConfigError(f"an override must be (pattern, value), got {item!r}") from None
        out.append((str(k), v if isinstance(v, str) else _literal(v)))
    return out


def _literal(v: Any) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    return repr(v)


def load(topology: str | os.PathLike, **kwargs: Any) -> Simulation:
    """Build a :class:`Simulation` from a topology file or a shipped topology's name
    (``'irregular16'``, as on the command line); see :class:`Simulation` for the parameters."""
    from ibfabric.argcheck import check_topology

    check_topology(topology)
    if isinstance(topology, os.PathLike) or (isinstance(topology, str) and "\n" not in topology and "{" not in topology):
        from ibfabric.topologies import SHIPPED, shipped

        path = Path(topology)
        if not path.exists():
            if str(topology) in SHIPPED:
                return Simulation(shipped(str(topology)), **kwargs)
            raise ConfigError(f"{topology}: no such file or shipped topology ({', '.join(sorted(SHIPPED))})")
    return Simulation(topology, **kwargs)
