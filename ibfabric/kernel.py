"""The component kernel: modules, gates, channels and messages, OMNeT++ style.

A :class:`Module` is one instance of a module type declared in NED-like
source.  Simple modules are subclasses with the OMNeT++ lifecycle:

- :meth:`Module.initialize` is called once per init stage (stages
  ``0 .. num_init_stages() - 1``), every module finishing stage *k* before
  any module starts stage *k + 1*;
- :meth:`Module.handle_message` receives messages sent to the module with
  :meth:`Module.send` or scheduled with :meth:`Module.schedule_at`;
- :meth:`Module.finish` runs once after the simulation ends.

Modules talk through gates joined by channels.  The InfiniBand data path of
``ibfabric.components`` does not use ``send``: it moves packets between port
objects directly and keeps one event per transmission (DESIGN §5).
``send`` is the general mechanism for everything else (management, probes,
third-party modules) and costs one event per message.
"""

from __future__ import annotations

import functools
import gc
import zlib
from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

import attrs
import numpy as np

from ibfabric.errors import ConfigError

if TYPE_CHECKING:  # pragma: no cover
    from ibfabric.ned_like.model import ChannelInstance, ModuleInstance
    from ibfabric.simulation import Simulation

__all__ = ["Channel", "Gate", "Message", "Module", "Params", "EventHandle"]


class Params(Mapping):
    """Evaluated parameters of a module or channel: ``params['lid']`` or ``params.lid``.

    Quantities are in canonical units: time in ns, data in bytes, bandwidth
    in bit/s, length in metres.
    """

    __slots__ = ("_values", "_owner")

    def __init__(self, values: Mapping[str, Any], owner: str):
        object.__setattr__(self, "_values", dict(values))
        object.__setattr__(self, "_owner", owner)

    def __getitem__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise KeyError(f"{self._owner} has no parameter '{name}'") from None

    def __getattr__(self, name: str) -> Any:
        try:
            return self._values[name]
        except KeyError:
            raise AttributeError(f"{self._owner} has no parameter '{name}'") from None

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("parameters are read-only after elaboration")

    def __contains__(self, name: object) -> bool:  # Mapping's would raise and format a KeyError per miss
        return name in self._values

    def __iter__(self) -> Iterator[str]:
        return iter(self._values)

    def __len__(self) -> int:
        return len(self._values)

    def __repr__(self) -> str:
        return f"Params({self._values!r})"


@attrs.define(eq=False, slots=True)
class Message:
    """A message sent between modules with :meth:`Module.send`.

    ``size`` (bytes) sets the serialisation time on datarate channels.
    ``arrival_gate`` is set when the message arrives (None for self-messages).
    """

    name: str = ""
    kind: int = 0
    payload: Any = None
    size: int = 0
    sender: Module | None = None
    arrival_gate: Gate | None = None
    sent_at: float = 0.0
    arrived_at: float = 0.0
    _handle: EventHandle | None = attrs.field(default=None, repr=False)

    @property
    def is_scheduled(self) -> bool:
        """Whether it is on its way: sent (:meth:`Module.send`) or scheduled (:meth:`Module.schedule_at`),
        not yet arrived and not cancelled."""
        return self._handle is not None and not self._handle.cancelled


class Gate:
    """A gate of a module: ``port[3]`` is ``Gate(name='port', index=3)``.

    A bidirectional connection joins two ``inout`` gates; ``peer`` is the gate
    at the other end and ``channel`` the channel between them (None for an
    ideal connection).  For ``-->`` connections the output gate's peer is the
    input gate and vice versa.
    """

    __slots__ = ("owner", "name", "index", "kind", "peer", "channel", "outbound", "location")

    def __init__(self, owner: Module, name: str, index: int | None, kind: str):
        self.owner = owner
        self.name = name
        self.index = index
        self.kind = kind
        self.peer: Gate | None = None
        self.channel: Channel | None = None
        self.outbound = kind != "input"  # may send through this gate
        self.location = None  # where its connection is declared (file:line:col)

    @property
    def full_name(self) -> str:
        """The name with its index, if it is an element of a gate vector (``port[3]``)."""
        return self.name if self.index is None else f"{self.name}[{self.index}]"

    @property
    def path(self) -> str:
        """The owner module's path and the gate's full name (``star.sw.port[3]``)."""
        return f"{self.owner.path}.{self.full_name}"

    @property
    def connected(self) -> bool:
        """Whether a connection joins the gate to a peer gate."""
        return self.peer is not None

    def __repr__(self) -> str:
        return f"<Gate {self.path}>"


class Channel:
    """Base class of channel types (the implementation of a NED ``channel``).

    Subclasses override :meth:`transmit_time` to delay messages sent through
    them with :meth:`Module.send`.  ``params`` holds the evaluated channel
    parameters.
    """

    def __init__(self, sim: Simulation, spec: ChannelInstance, path: str):
        self.sim = sim
        self.type_name = spec.type_name
        self.path = path
        self.params = Params({k: v.value for k, v in spec.params.items()}, path)
        self.ends: tuple[Gate, Gate] | None = None

    def initialize(self) -> None:
        """Check and derive parameters; raise ConfigError for invalid ones."""

    def transmit_time(self, msg: Message) -> float:
        """Time (ns) from sending *msg* until it arrives at the other end."""
        return 0.0

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"


class DelayChannel(Channel):
    """Delays every message by the ``delay`` parameter."""

    def initialize(self) -> None:
        self.delay = float(self.params["delay"])
        if self.delay < 0:
            raise ConfigError(f"{self.path}: 'delay' must be >= 0 (got {self.delay}ns)")

    def transmit_time(self, msg: Message) -> float:
        return self.delay


class DatarateChannel(DelayChannel):
    """Delay plus serialisation of ``msg.size`` bytes at ``datarate`` bit/s."""

    def initialize(self) -> None:
        super().initialize()
        self.datarate = float(self.params["datarate"])
        if self.datarate < 0:
            raise ConfigError(f"{self.path}: 'datarate' must be >= 0 (got {self.datarate}bps)")

    def transmit_time(self, msg: Message) -> float:
        if self.datarate == 0:
            return self.delay
        return self.delay + msg.size * 8e9 / self.datarate


class EventHandle:
    """A scheduled call; :meth:`cancel` prevents it from running."""

    __slots__ = ("time", "seq", "fn", "args", "cancelled")

    def __init__(self, time: float, seq: int, fn: Callable, args: tuple):
        self.time = time
        self.seq = seq
        self.fn = fn
        self.args = args
        self.cancelled = False

    def cancel(self) -> None:
        """Mark the call cancelled: the event queue skips it instead of running it."""
        self.cancelled = True

    def __lt__(self, other: EventHandle) -> bool:
        return (self.time, self.seq) < (other.time, other.seq)


class Module:
    """A module instance.  Subclass it for simple modules.

    Attributes
    ----------
    sim : Simulation
    path : str
        Full path, e.g. ``'fig1.sw[3]'``.
    name : str
    index : int or None
        Index within its submodule vector.
    type_name : str
        Qualified NED type name.
    params : Params
        Evaluated parameters.
    parent : Module or None
    submodules : list of Module
    """

    def __init__(self, sim: Simulation, spec: ModuleInstance, parent: Module | None):
        self.sim = sim
        self.spec = spec
        self.path = spec.path
        self.name = spec.name
        self.index = spec.index
        self.type_name = spec.type_name
        self.parent = parent
        self.params = Params({k: v.value for k, v in spec.params.items()}, spec.path)
        self.submodules: list[Module] = []
        self._gates: dict[str, list[Gate] | Gate] = {}
        for g in spec.gates:
            if g.size is None:
                self._gates[g.name] = Gate(self, g.name, None, g.kind)
            else:
                self._gates[g.name] = [Gate(self, g.name, i, g.kind) for i in range(g.size)]
        self._rng: np.random.Generator | None = None

    # ----------------------------------------------------------- structure

    def gate(self, name: str, index: int | None = None) -> Gate:
        """The gate ``name`` (scalar) or ``name[index]`` (vector)."""
        try:
            g = self._gates[name]
        except KeyError:
            raise KeyError(f"{self.path} has no gate '{name}'") from None
        if isinstance(g, list):
            if index is None:
                raise KeyError(f"{self.path}.{name} is a gate vector; give an index")
            if not 0 <= index < len(g):
                raise IndexError(f"{self.path}.{name}[{index}]: index out of range 0..{len(g) - 1}")
            return g[index]
        if index is not None:
            raise KeyError(f"{self.path}.{name} is not a gate vector")
        return g

    def gate_vector(self, name: str) -> list[Gate]:
        """The gates ``name[0]``, ``name[1]``...: a list of one for a scalar gate.

        Raises
        ------
        KeyError
            If the module has no gate ``name``.
        """
        g = self._gates.get(name)
        if g is None:
            raise KeyError(f"{self.path} has no gate '{name}'")
        return g if isinstance(g, list) else [g]

    def gates(self) -> Iterator[Gate]:
        """Every gate of the module, vector gates element by element, in declaration order."""
        for g in self._gates.values():
            yield from (g if isinstance(g, list) else [g])

    @property
    def full_name(self) -> str:
        """The name with its index, if it is an element of a submodule vector (``hca[3]``)."""
        return self.name if self.index is None else f"{self.name}[{self.index}]"

    def walk(self) -> Iterator[Module]:
        """This module and all its submodules, depth first, parents before children."""
        yield self
        for s in self.submodules:
            yield from s.walk()

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"

    # --------------------------------------------------------------- time

    @property
    def now(self) -> float:
        """Simulation time in ns."""
        return self.sim.now

    @property
    def rng(self) -> np.random.Generator:
        """This module's random generator, independent of every other module's.

        Seeded from the run's seed and the module's path, so adding a module
        elsewhere never changes the numbers this one draws.
        """
        if self._rng is None:
            self._rng = module_rng(self.sim.seed, self.path)
        return self._rng

    # ---------------------------------------------------------- lifecycle

    def num_init_stages(self) -> int:
        """How many init stages this module needs (default 1)."""
        return 1

    def initialize(self, stage: int) -> None:
        """Set the module up; called once per stage before time 0 runs."""

    def handle_message(self, msg: Message) -> None:
        """Process a message that arrived or a self-message that fired."""
        raise NotImplementedError(f"{type(self).__name__} ({self.path}) received a message but has no handle_message")

    def finish(self) -> None:
        """Called once after the run, e.g. to record final statistics."""

    # ----------------------------------------------------------- messages

    def send(self, msg: Message, gate: str | Gate, index: int | None = None, *, delay: float = 0.0) -> None:
        """Send *msg* through an output (or inout) gate.

        It arrives at the module on the other side after ``delay`` plus the
        channel's transmission time, in that module's
        :meth:`handle_message` with ``msg.arrival_gate`` set.
        """
        g = gate if isinstance(gate, Gate) else self.gate(gate, index)
        if not g.outbound:
            raise ConfigError(f"{g.path} is an input gate; cannot send through it")
        if g.peer is None:
            raise ConfigError(f"{g.path} is not connected")
        if msg.is_scheduled:
            raise ConfigError(f"message '{msg.name}' is already scheduled or in transit")
        msg.sender = self
        msg.sent_at = self.sim.now
        t = self.sim.now + delay + (g.channel.transmit_time(msg) if g.channel is not None else 0.0)
        target = g.peer
        msg._handle = self.sim.call_at(t, _deliver, target, msg)

    def schedule_at(self, time: float, msg: Message) -> None:
        """Deliver *msg* to this module itself at *time* (a self-message)."""
        if msg.is_scheduled:
            raise ConfigError(f"message '{msg.name}' is already scheduled")
        if time < self.sim.now:
            raise ConfigError(f"cannot schedule '{msg.name}' in the past ({time} < {self.sim.now})")
        msg.sender = self
        msg.sent_at = self.sim.now
        msg._handle = self.sim.call_at(time, _deliver_self, self, msg)

    def cancel_event(self, msg: Message) -> None:
        """Cancel a scheduled self-message (no effect if it is not scheduled)."""
        if msg._handle is not None:
            msg._handle.cancel()
            msg._handle = None

    # ------------------------------------------------------------ signals

    def emit(self, signal: str, value: Any) -> None:
        """Emit *value* on *signal*; listeners subscribed to it (for this module) are called."""
        self.sim.signals.emit(self, signal, value)


class CompoundModule(Module):
    """A compound module (or network): only holds submodules and gates."""


def _deliver(gate: Gate, msg: Message) -> None:
    msg._handle = None
    msg.arrival_gate = gate
    msg.arrived_at = gate.owner.sim.now
    gate.owner.handle_message(msg)


def _deliver_self(module: Module, msg: Message) -> None:
    msg._handle = None
    msg.arrival_gate = None
    msg.arrived_at = module.sim.now
    module.handle_message(msg)


def without_gc(build: Callable) -> Callable:
    """Decorator: run *build* with the cyclic garbage collector paused, and freeze what it made.

    Building a big fabric allocates millions of objects that live as long
    as the simulation (ports, buffers, queues); every collection while they
    pile up walks all of them, which took about half the build time of a
    4,096-host fat tree.  After the build, ``gc.freeze()`` moves everything
    the collector tracks to its permanent generation in one step (a
    collection of the young generations there took 6 s on a 32,768-host
    tree and 20 ms of the default scenario's start-up), so no collection
    during the run walks the fabric again.  The next build unfreezes them
    and collects all generations first, so a simulation the caller has
    dropped is freed then (a process runs one build without that collection).
    If someone else has frozen objects, or the build fails, the build ends
    with a collection of the young generations instead, as before.

    What it costs: the build's own cyclic garbage (about 9,000 objects for
    the default scenario) and a dropped simulation stay in memory until the
    next build (a Simulation makes its salabim Environment, which salabim keeps
    as its default, before this collection, so that the dropped one is not
    kept alive by salabim); a build while a big simulation is still referenced
    walks it once in that full collection; and objects the caller froze after
    a build are unfrozen with it by the next.
    """

    @functools.wraps(build)
    def run(*args, **kwargs):
        global _frozen_by_build
        if not gc.isenabled():  # paused already (a build inside a build, or the caller's choice)
            return build(*args, **kwargs)
        if _frozen_by_build:
            # the previous build's objects: collectable again, and collected now if the caller has
            # dropped that simulation (the freeze below would otherwise keep its cycles for good)
            gc.unfreeze()
            _frozen_by_build = False
            gc.collect()
        gc.disable()
        done = False
        try:
            out = build(*args, **kwargs)
            done = True
            return out
        finally:
            if done and gc.get_freeze_count() == 0:
                gc.freeze()
                _frozen_by_build = True
            else:
                gc.collect(1)
            gc.enable()

    return run


#: whether the permanent generation holds what the last build made (:func:`without_gc`)
_frozen_by_build = False


#: Allocations between two collections of the youngest generation during a run (Python's default: 700).
RUN_GC_THRESHOLD = 50_000


@contextmanager
def run_gc_threshold(threshold: int = RUN_GC_THRESHOLD):
    """Collect the youngest generation every *threshold* allocations (not 700) while a run lasts.

    A packet lives for thousands of allocations (other packets, heap
    entries); at 700 the collector walks it several times, promotes it to
    the oldest generation, and the pile of promoted packets sets off full
    collections that walk the whole fabric, about a tenth of a 4,096-host
    run's time.  With a larger young generation most packets die in it.
    The collector still runs; the old threshold is back after the run.
    """
    old = gc.get_threshold()
    if old[0] >= threshold or not gc.isenabled():
        yield
        return
    gc.set_threshold(threshold, *old[1:])
    try:
        yield
    finally:
        gc.set_threshold(*old)


def module_rng(seed: int, path: str) -> np.random.Generator:
    """An independent generator for (seed, path): SeedSequence keyed by a hash of the path."""
    key = zlib.crc32(path.encode("utf-8"))
    return np.random.Generator(np.random.PCG64(np.random.SeedSequence(int(seed), spawn_key=(key,))))
