"""Connections of a compound module: loops, conditions, gate checks, channels.

The rules checked here, each a :class:`~ibfabric.ned_like.errors.NedError` at
the offending gate:

* the submodule and gate exist, a vector is indexed (or ``++``) and a scalar
  is not, indices are in range;
* ``<-->`` joins two whole inout gates; ``-->`` and ``<--`` join an output
  (or ``$o`` half) to an input (or ``$i`` half) — seen from inside a compound
  module its own gates point the other way;
* no gate (or half) is connected twice on the same side;
* a chain of connections through compound-module gates has at most one
  channel.

Unconnected gates are not an error (``allowunconnected`` is accepted and has
no further effect): InfiniBand switches have many unused ports.

``gate++`` takes the first gate of the vector not yet connected on that side;
an unsized vector (``inout port[]``) grows by one when all are taken (a gate
counted against :attr:`~ibfabric.ned_like.limits.Limits.max_gates`).

Loops take their values from the network's budget of
:attr:`~ibfabric.ned_like.limits.Limits.max_loop_iterations`: a range larger
than what is left is refused before its first iteration.

A connection without a channel type but with a body (``<--> { delay = 1ns; } <-->``)
gets ``DelayChannel`` if it assigns only ``delay``, else ``DatarateChannel``
(both from ``ibfabric.components``).
"""

from __future__ import annotations

import attrs

from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import Scope, evaluate, to_bool, to_int
from ibfabric.ned_like.library import BUILTIN_PACKAGE
from ibfabric.ned_like.limits import Limits
from ibfabric.ned_like.model import ChannelInstance, Connection, GateRef, ModuleInstance, Value
from ibfabric.ned_like.params import Params

__all__ = ["Connector", "check_channel_chains"]


@attrs.define(eq=False)
class _End:
    path: str
    gate: object  # elaborate.Gate
    index: int | None
    half: str | None
    own: bool
    spec: ast.GateSpec
    label: str

    def ref(self) -> GateRef:
        return GateRef(self.path, self.gate.name, self.index, self.half)

    def direction(self) -> str:
        """``'input'`` or ``'output'``: which way data flows at this end, seen from the connection."""
        kind = self.gate.kind
        if kind == "inout":
            kind = "input" if self.half == "i" else "output"
        if self.own:  # seen from inside, a module's input gate sends into it
            kind = "output" if kind == "input" else "input"
        return kind


class Connector:
    """Makes the connections of one compound instance."""

    def __init__(self, elab, eff, built, subs, scope: Scope, levels):
        self.elab = elab
        self.eff = eff
        self.built = built
        self.subs = subs
        self.scope = scope
        self.levels = levels
        self.path = built.instance.path
        self.out: list[Connection] = []

    def run(self) -> list[Connection]:
        """Make every connection of the type (its own and inherited ones) and return them, in order.

        Raises
        ------
        NedError
            At the first connection that is wrong (an unknown gate, a gate used twice...).
        """
        for item, owner in self.eff.connections:
            self._item(item, self.scope, owner)
        return self.out

    def _item(self, item: ast.ConnItem, scope: Scope, owner: ast.TypeDecl) -> None:
        if isinstance(item, ast.ConnLoop):
            self._loop(item, 0, scope, owner)
        elif isinstance(item, ast.ConnIf):
            if to_bool(evaluate(item.condition, scope), "an 'if' condition", item.condition.loc):
                for sub in item.body:
                    self._item(sub, scope, owner)
        else:
            self._connect(item, scope, owner)

    def _loop(self, loop: ast.ConnLoop, i: int, scope: Scope, owner) -> None:
        if i == len(loop.vars):
            for sub in loop.body:
                self._item(sub, scope, owner)
            return
        var = loop.vars[i]
        start = to_int(evaluate(var.start, scope), "a loop bound", var.start.loc)
        end = to_int(evaluate(var.end, scope), "a loop bound", var.end.loc)
        count = max(0, end - start + 1)
        elab = self.elab
        limit = elab.limits.max_loop_iterations
        if elab.loop_iterations + count > limit:
            left = limit - elab.loop_iterations
            room = f"the {left} left of " if left < limit else ""
            raise NedError(
                f"loop '{var.name}' would run {count} times, more than {room}the limit of {limit} loop iterations"
                " per network; " + Limits.how_to_raise("max_loop_iterations"),
                var.loc,
            )
        elab.loop_iterations += count
        for x in range(start, end + 1):  # both ends inclusive, as in OMNeT++
            self._loop(loop, i + 1, scope.with_vars({var.name: Value(x)}), owner)

    # ------------------------------------------------------------ gate ends

    def _end(self, spec: ast.GateSpec, scope: Scope) -> _End:
        if spec.module is None:
            own, path, gates, type_name = True, self.path, self.built.gates, self.eff.decl.simple_name
        else:
            entry = self.subs.get(spec.module)
            if entry is None:
                raise NedError(f"unknown submodule '{spec.module}' of {self.path}", spec.loc)
            if not entry.present:
                raise NedError(f"submodule '{spec.module}' does not exist (its condition is false)", spec.loc)
            if entry.size is None:
                if spec.module_index is not None:
                    raise NedError(f"submodule '{spec.module}' is not a vector", spec.module_index.loc)
                index = None
            else:
                if spec.module_index is None:
                    raise NedError(f"submodule '{spec.module}' is a vector; give an index: {spec.module}[i]", spec.loc)
                index = to_int(evaluate(spec.module_index, scope), "a submodule index", spec.module_index.loc)
                if not 0 <= index < entry.size:
                    raise NedError(
                        f"index {index} out of range for submodule vector '{spec.module}' of size {entry.size}",
                        spec.module_index.loc,
                    )
            built = entry.elements[index]
            own, path, gates = False, built.instance.path, built.gates
            type_name = built.instance.type_name.rpartition(".")[2]
        gate = gates.get(spec.gate)
        if gate is None:
            have = ", ".join(gates) if gates else "none"
            raise NedError(f"unknown gate '{spec.gate}' of {path} ({type_name}); its gates: {have}", spec.gate_loc)
        label = f"{path}.{spec.gate}"
        if spec.half is not None and gate.kind != "inout":
            raise NedError(f"gate {label} is an {gate.kind} gate; '${spec.half}' is only for inout gates", spec.gate_loc)
        if spec.half:
            label += f"${spec.half}"
        index = None
        if gate.vector:
            if spec.index is None and not spec.plusplus:
                raise NedError(f"gate {label} is a vector; give an index or use '++'", spec.gate_loc)
            if spec.index is not None:
                index = to_int(evaluate(spec.index, scope), "a gate index", spec.index.loc)
                if not 0 <= index < gate.size:
                    raise NedError(
                        f"index {index} out of range for gate vector {label} of size {gate.size}", spec.index.loc
                    )
        elif spec.index is not None or spec.plusplus:
            raise NedError(f"gate {label} is not a vector", spec.gate_loc)
        return _End(path, gate, index, spec.half, own, spec, label)

    @staticmethod
    def _halves(end: _End, bidirectional: bool) -> tuple[str, ...]:
        if end.gate.kind != "inout":
            return ("x",)
        return ("i", "o") if bidirectional else (end.half,)

    def _take(self, end: _End, bidirectional: bool, decl: ast.ConnectionDecl) -> None:
        """Pick the index of a ``++`` end and mark the gate (halves) used."""
        side = "in" if end.own else "out"
        halves = self._halves(end, bidirectional)
        gate = end.gate
        if end.spec.plusplus:
            # Gates are only ever taken, so the first free one never moves back: start where the last search ended.
            key = (side, halves)
            index = gate.free_from.get(key, 0)
            while index < gate.size and any((index, h, side) in gate.used for h in halves):
                index += 1
            gate.free_from[key] = index
            if index == gate.size:
                if not gate.growable:
                    raise NedError(
                        f"all {gate.size} gates of {end.label} are connected; '++' needs a free one", end.spec.gate_loc
                    )
                self.elab.count_gate(f"'{end.label}++'", end.spec.gate_loc)
                gate.size += 1
            end.index = index
        for h in halves:
            prev = gate.used.get((end.index, h, side))
            if prev is not None:
                where = end.label + (f"[{end.index}]" if end.index is not None else "")
                raise NedError(f"gate {where} is already connected (at {prev})", end.spec.gate_loc)
        for h in halves:
            gate.used[(end.index, h, side)] = decl.loc

    # ------------------------------------------------------------ one connection

    def _connect(self, decl: ast.ConnectionDecl, scope: Scope, owner: ast.TypeDecl) -> None:
        left = self._end(decl.left, scope)
        right = self._end(decl.right, scope)
        bidirectional = decl.arrow == "<-->"
        if bidirectional:
            for end in (left, right):
                if end.gate.kind != "inout":
                    raise NedError(f"'<-->' needs inout gates; {end.label} is an {end.gate.kind} gate", end.spec.gate_loc)
                if end.half is not None:
                    raise NedError(
                        f"'<-->' connects whole inout gates; use '-->' or '<--' for the half {end.label}",
                        end.spec.gate_loc,
                    )
            src, dst = left, right
        else:
            src, dst = (left, right) if decl.arrow == "-->" else (right, left)
            for end, want, role in ((src, "output", "sending"), (dst, "input", "receiving")):
                if end.gate.kind == "inout" and end.half is None:
                    raise NedError(
                        f"inout gate {end.label} needs '<-->', or a half ({end.label}$i or {end.label}$o) with '{decl.arrow}'",
                        end.spec.gate_loc,
                    )
                if end.direction() != want:
                    kind = end.gate.kind if end.half is None else ("input" if end.half == "i" else "output")
                    what = "half" if end.half else "gate"
                    if end.own:
                        where = f"of this module; inside it, it cannot be the {role} end of '{decl.arrow}'"
                    else:
                        where = f"and cannot be the {role} end of '{decl.arrow}'"
                    raise NedError(f"{end.label} is an {kind} {what} {where}", end.spec.gate_loc)
        self._take(left, bidirectional, decl)
        self._take(right, bidirectional, decl)
        channel = None
        if decl.channel is not None:
            channel = self._channel(decl.channel, src, scope, owner)
        self.out.append(Connection(src.ref(), dst.ref(), bidirectional, channel, decl.loc))

    def _channel(self, spec: ast.ChannelSpec, src: _End, scope: Scope, owner) -> ChannelInstance:
        lib = self.elab.lib
        if spec.type_name is not None:
            decl = lib.get(spec.type_name.name, context=owner, loc=spec.type_name.loc)
            if decl.kind != "channel":
                raise NedError(f"'{spec.type_name.name}' is a {decl.kind}, not a channel type", spec.type_name.loc)
        else:
            names = {a.pattern for a in spec.params}
            chosen = "DelayChannel" if names <= {"delay"} else "DatarateChannel"
            decl = lib.lookup(f"{BUILTIN_PACKAGE}.{chosen}")
            if decl is None:  # pragma: no cover - the built-in library always has both
                raise NedError(f"no channel type given and {chosen} is not in the library", spec.loc)
        for a in spec.params:
            if a.is_deep:
                raise NedError(f"a channel body cannot have deep assignments ('{a.pattern}')", a.loc)
        eff = lib.effective(decl.qualname)
        path = f"{src.ref()}.channel"
        params = Params(
            eff, path, f"channel {path} ({decl.simple_name})", spec.loc, levels=self.levels,
            body=spec.params, body_scope=scope, overrides=self.elab.overrides,
        )
        values = params.all()
        params.release()
        self.elab.param_paths.update(f"{path}.{p}" for p in values)
        return ChannelInstance(decl.qualname, values)


def check_channel_chains(root: ModuleInstance) -> None:
    """Reject a path of connections through compound-module gates that has two channels.

    Each direction of a connection is followed separately: data entering
    ``host.port$i`` from outside continues inside from ``port$i``, so a
    bidirectional connection inside a compound module belongs to two paths,
    one per direction.

    Raises
    ------
    NedError
        At the second connection with a channel on one path.
    """
    kinds = {m.path: m.kind for m in root.walk()}
    conns = [c for m in root.walk() for c in m.connections]
    flows = [(i, f) for i, c in enumerate(conns) for f in (("f", "b") if c.bidirectional else ("f",))]
    parent = {x: x for x in flows}

    def find(x):
        while parent[x] != x:
            parent[x] = parent[parent[x]]
            x = parent[x]
        return x

    first_at: dict[tuple, tuple] = {}
    for i, f in flows:
        c = conns[i]
        if c.bidirectional:
            halves = (("o", "i") if f == "f" else ("i", "o"))
        else:
            halves = (c.src.half or "x", c.dst.half or "x")
        for ref, half in zip((c.src, c.dst), halves):
            if kinds.get(ref.path) != "compound":
                continue
            key = (ref.path, ref.gate, ref.index, half)
            if key in first_at:
                parent[find((i, f))] = find(first_at[key])
            else:
                first_at[key] = (i, f)
    channel_at: dict[tuple, int] = {}
    for i, f in flows:
        c = conns[i]
        if c.channel is None:
            continue
        r = find((i, f))
        if r in channel_at and channel_at[r] != i:
            other = conns[channel_at[r]].location
            raise NedError(
                f"a connection path through compound-module gates has two channels (the other at {other})",
                c.location,
            )
        channel_at[r] = i
