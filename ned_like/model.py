"""The elaborated network: what a ``.ned`` file means, as plain frozen data.

Elaboration (:func:`ibfabric.ned_like.elaborate`) turns parsed NED-like source
into an :class:`ElaboratedNetwork`: a tree of :class:`ModuleInstance` values,
every parameter evaluated to a :class:`Value`, every gate vector sized and every
connection resolved to absolute gate references.  The simulation kernel builds
its component instances from this tree; the writer turns it back into ``.ned``
text.  Nothing here refers to the kernel, so the language can be tested alone.

Two elaborated networks are *the same network* when :meth:`ElaboratedNetwork.canonical`
gives equal results: the same simple modules (path, type, parameter values,
gate vectors) and the same connections between simple-module gates (after
resolving compound-module gates), with the same channel types and channel
parameter values.  Source locations and compound-module type names are not
part of that identity.
"""

from __future__ import annotations

import types
from collections.abc import Iterator, Mapping
from typing import Literal

import attrs

from ibfabric.units import format_quantity

__all__ = [
    "ChannelInstance",
    "Connection",
    "ElaboratedNetwork",
    "GateRef",
    "GateVector",
    "Location",
    "ModuleInstance",
    "Value",
]


def _frozen_mapping(m: Mapping | None) -> Mapping:
    return types.MappingProxyType(dict(m or {}))


@attrs.frozen
class Location:
    """A place in a source file (1-based line and column)."""

    file: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}:{self.column}"


@attrs.frozen
class Value:
    """An evaluated parameter value.

    ``value`` is a bool, int, float or str.  Quantities are stored in the
    canonical unit of their dimension (see :mod:`ibfabric.units`) and ``unit``
    names that unit (``'ns'``, ``'B'``, ``'bps'``, ``'m'``, ``'ns/m'``); it is
    None for dimensionless values.
    """

    value: bool | int | float | str
    unit: str | None = None

    def ned(self) -> str:
        """The value as a NED literal that elaborates back to an equal Value."""
        v = self.value
        if isinstance(v, bool):
            return "true" if v else "false"
        if isinstance(v, str):
            return '"' + v.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'
        if self.unit is not None:
            return format_quantity(v, self.unit)
        if isinstance(v, int):
            return str(v)
        text = repr(float(v))
        return text if any(c in text for c in ".eEn") else text + ".0"

    def __str__(self) -> str:
        return self.ned()


@attrs.frozen
class GateVector:
    """A gate (``size`` None) or gate vector of an instance.

    ``kind`` is ``'input'``, ``'output'`` or ``'inout'``.
    """

    name: str
    kind: Literal["input", "output", "inout"]
    size: int | None = None


@attrs.frozen
class GateRef:
    """One end of a connection: gate ``gate[index]`` of the module at ``path``.

    ``half`` is ``'i'`` or ``'o'`` when a single half of an inout gate is
    meant (NED ``port$i``), else None.
    """

    path: str
    gate: str
    index: int | None = None
    half: Literal["i", "o"] | None = None

    def __str__(self) -> str:
        s = f"{self.path}.{self.gate}"
        if self.half:
            s += f"${self.half}"
        if self.index is not None:
            s += f"[{self.index}]"
        return s


@attrs.frozen
class ChannelInstance:
    """The channel of a connection: its type name and evaluated parameters."""

    type_name: str
    params: Mapping[str, Value] = attrs.field(factory=dict, converter=_frozen_mapping, hash=False)


@attrs.frozen
class Connection:
    """A connection between two gates.

    ``bidirectional`` connections (``<-->``) join two inout gates; otherwise
    data flows from ``src`` to ``dst`` (``-->``; the writer may print ``<--``
    declarations as ``-->`` with the ends swapped).
    """

    src: GateRef
    dst: GateRef
    bidirectional: bool
    channel: ChannelInstance | None = None
    location: Location | None = attrs.field(default=None, eq=False)


@attrs.frozen
class ModuleInstance:
    """One module instance of the elaborated tree.

    ``path`` is the full dotted path (``'net.sw[3]'``); ``name`` and ``index``
    are its last component (``'sw'``, 3; index None for a scalar submodule)
    and ``vector_size`` the size of the submodule vector it belongs to.
    ``type_name`` is the concrete type (after ``like`` resolution), qualified
    by its package if the declaring file has one.  ``kind`` is ``'simple'``
    or ``'compound'`` (networks are compound).  ``connections`` are those
    declared in this compound module, with absolute gate references.
    """

    path: str
    name: str
    type_name: str
    kind: Literal["simple", "compound"]
    index: int | None = None
    vector_size: int | None = None
    params: Mapping[str, Value] = attrs.field(factory=dict, converter=_frozen_mapping, hash=False)
    gates: tuple[GateVector, ...] = ()
    submodules: tuple[ModuleInstance, ...] = ()
    connections: tuple[Connection, ...] = ()
    location: Location | None = attrs.field(default=None, eq=False)

    def walk(self) -> Iterator[ModuleInstance]:
        """This instance and all instances below it, in pre-order."""
        yield self
        for sub in self.submodules:
            yield from sub.walk()

    def gate(self, name: str) -> GateVector | None:
        """The gate or gate vector *name* of this instance, or None if it has none."""
        for g in self.gates:
            if g.name == name:
                return g
        return None


@attrs.frozen
class ElaboratedNetwork:
    """A network elaborated from NED-like source.

    ``root`` is the network instance (a compound module whose path is the
    network name).  ``source`` names the file it came from.
    """

    root: ModuleInstance
    source: str = attrs.field(default="<string>", eq=False)

    @property
    def name(self) -> str:
        """The network's name: the path of its root module."""
        return self.root.path

    def modules(self) -> Iterator[ModuleInstance]:
        """Every instance, the network first, in pre-order."""
        return self.root.walk()

    def simple_modules(self) -> list[ModuleInstance]:
        """The simple-module instances in pre-order."""
        return [m for m in self.root.walk() if m.kind == "simple"]

    def module(self, path: str) -> ModuleInstance:
        """The instance at *path*; raises KeyError if there is none."""
        for m in self.root.walk():
            if m.path == path:
                return m
        raise KeyError(path)

    def flat_connections(self) -> list[Connection]:
        """Connections between simple-module gates.

        A chain of connections through compound-module gates
        (``host.port`` inside and outside a compound module) is followed to
        the simple modules at both ends; the channel of the chain is the one
        non-None channel on it (elaboration rejects a chain with several).
        """
        kinds = {m.path: m.kind for m in self.root.walk()}
        conns = [c for m in self.root.walk() for c in m.connections]

        def key(ref: GateRef) -> tuple[str, str, int | None]:
            return (ref.path, ref.gate, ref.index)

        # Index the connections touching each compound-module gate.
        by_gate: dict[tuple, list[tuple[int, str]]] = {}
        for i, c in enumerate(conns):
            for end, ref in (("src", c.src), ("dst", c.dst)):
                if kinds.get(ref.path) == "compound":
                    by_gate.setdefault(key(ref), []).append((i, end))

        seen: set[int] = set()
        out: list[Connection] = []
        for i, c in enumerate(conns):
            if i in seen:
                continue
            if kinds.get(c.src.path) == "compound" and kinds.get(c.dst.path) == "compound":
                continue  # an inner segment; reached from a simple end
            if kinds.get(c.src.path) != "simple" and kinds.get(c.dst.path) != "simple":
                continue
            seen.add(i)
            ends = [c.src, c.dst]
            channel = c.channel
            # Extend each end that is a compound gate through the other connection on it.
            for side in (0, 1):
                ref = ends[side]
                prev = i
                walked: set[tuple] = set()  # (gate, previous connection) states: a repeat is a cycle
                while kinds.get(ref.path) == "compound":
                    if (key(ref), prev) in walked:
                        break  # half connections on compound gates can form a cycle; stop, leaving no connection
                    walked.add((key(ref), prev))
                    nxt = [(j, e) for j, e in by_gate.get(key(ref), []) if j != prev]
                    if not nxt:
                        break
                    j, e = nxt[0]
                    seen.add(j)
                    other = conns[j]
                    if other.channel is not None:
                        channel = other.channel
                    ref = other.dst if e == "src" else other.src
                    prev = j
                ends[side] = ref
            if kinds.get(ends[0].path) == "simple" and kinds.get(ends[1].path) == "simple":
                out.append(
                    Connection(
                        src=ends[0], dst=ends[1], bidirectional=c.bidirectional,
                        channel=channel, location=c.location,
                    )
                )
        return out

    def canonical(self) -> tuple:
        """A comparable form of the network (see the module docstring)."""
        mods = tuple(
            sorted(
                (
                    m.path,
                    m.type_name,
                    tuple(sorted((k, v.value, v.unit) for k, v in m.params.items())),
                    tuple(sorted((g.name, g.kind, g.size) for g in m.gates)),
                )
                for m in self.simple_modules()
            )
        )

        def conn_key(c: Connection) -> tuple:
            a = (c.src.path, c.src.gate, c.src.index if c.src.index is not None else -1, c.src.half or "")
            b = (c.dst.path, c.dst.gate, c.dst.index if c.dst.index is not None else -1, c.dst.half or "")
            if c.bidirectional and b < a:
                a, b = b, a
            ch = None
            if c.channel is not None:
                ch = (c.channel.type_name, tuple(sorted((k, v.value, v.unit) for k, v in c.channel.params.items())))
            return (a, b, c.bidirectional, ch)

        conns = tuple(sorted((conn_key(c) for c in self.flat_connections()), key=repr))
        return (self.root.path, mods, conns)
