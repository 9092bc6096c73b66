"""Elaboration: from a network type to an :class:`~ibfabric.ned_like.model.ElaboratedNetwork`.

A module instance is elaborated in dependency order: its parameters (see
:mod:`ibfabric.ned_like.params`), then its gates (vector sizes may use the
parameters), then, for a compound module, its submodules one after the other
(vector sizes and conditions may use the parameters and ``sizeof`` of earlier
submodules), then its connections (:mod:`ibfabric.ned_like.connect`).

Every error is a :class:`~ibfabric.ned_like.errors.NedError` at the offending
construct; nothing half-built is returned.

The :class:`~ibfabric.ned_like.limits.Limits` are checked before what they
bound is built: a submodule vector against the module limit before its first
element, a gate vector against the gate limit before the instance exists.
A module type that contains itself (directly or through other types) is an
error naming the cycle, and modules nest at most
:data:`~ibfabric.ned_like.limits.MAX_MODULE_DEPTH` levels.
"""

from __future__ import annotations

import attrs

from ibfabric.ned_like import ast
from ibfabric.errors import did_you_mean
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import Scope, evaluate, show, to_bool, to_int
from ibfabric.ned_like.library import EffectiveType, TypeLibrary
from ibfabric.ned_like.limits import MAX_MODULE_DEPTH, Limits
from ibfabric.ned_like.model import (
    Connection,
    ElaboratedNetwork,
    GateVector,
    Location,
    ModuleInstance,
    Value,
)
from ibfabric.ned_like.connect import Connector, check_channel_chains
from ibfabric.ned_like.params import AssignLevel, Params, find_assignment, override_value
from ibfabric.ned_like.patterns import OverrideSet, is_literal

__all__ = ["MAX_VECTOR_SIZE", "Built", "Elaborator", "Gate"]


@attrs.define(eq=False)
class Gate:
    """A gate or gate vector of an instance while connections are made.

    ``used`` maps ``(index, half, side)`` to the place of the connection that
    took it; ``half`` is ``'i'``/``'o'`` for inout gates and ``'x'`` for the
    others, ``side`` ``'out'`` when connected in the parent and ``'in'`` when
    connected inside the module itself.
    """

    name: str
    kind: str
    vector: bool
    size: int
    growable: bool
    used: dict = attrs.field(factory=dict)
    free_from: dict = attrs.field(factory=dict)  # (side, halves) -> no free '++' gate below this index

    def model(self) -> GateVector:
        """The gate as the elaborated network records it (its size None for a scalar gate)."""
        return GateVector(self.name, self.kind, self.size if self.vector else None)


@attrs.define(eq=False)
class Built:
    """An elaborated instance whose gate sizes may still grow (``port++`` in the parent)."""

    instance: ModuleInstance
    gates: dict[str, Gate]
    params: Params

    def final(self) -> ModuleInstance:
        """The instance with its gates at their final sizes."""
        return attrs.evolve(self.instance, gates=tuple(g.model() for g in self.gates.values()))


@attrs.define(eq=False)
class SubEntry:
    """A submodule declaration of a compound instance, with its elements."""

    present: bool
    size: int | None  # None for a scalar submodule
    elements: dict = attrs.field(factory=dict)  # index (None for scalar) -> Built


class Elaborator:
    """Elaborates networks from a library, applying overrides, within *limits*.

    ``modules``, ``gates`` and ``loop_iterations`` count what the elaboration
    has built so far (the limits bound them).
    """

    def __init__(self, library: TypeLibrary, overrides: OverrideSet, limits: Limits | None = None):
        self.lib = library
        self.overrides = overrides
        self.limits = limits if limits is not None else Limits.from_env()
        self.param_paths: set[str] = set()
        self._literal_checks: list[tuple[str, ast.ParamAssign]] = []
        self.modules = 0
        self.gates = 0
        self.loop_iterations = 0
        self._ancestors: list[tuple[str, str]] = []  # (type qualname, path) of the instances being elaborated

    # ------------------------------------------------------------ entry

    def run(self, decl: ast.TypeDecl, source: str) -> ElaboratedNetwork:
        """Elaborate network type *decl*."""
        if not decl.is_network:
            raise NedError(f"'{decl.simple_name}' is a {decl.kind}, not a network", decl.loc)
        eff = self.lib.effective(decl.qualname)
        built = self.instantiate(
            eff, path=decl.simple_name, name=decl.simple_name, index=None, vector_size=None,
            loc=decl.loc, levels=[], body=None,
        )
        root = built.final()
        built.params.release()
        for path, assign in self._literal_checks:
            if path not in self.param_paths:
                raise NedError(f"deep assignment '{assign.pattern}' matches no parameter ({path})", assign.loc)
        check_channel_chains(root)
        return ElaboratedNetwork(root=root, source=source)

    # ------------------------------------------------------------ instances

    def instantiate(
        self,
        eff: EffectiveType,
        *,
        path: str,
        name: str,
        index: int | None,
        vector_size: int | None,
        loc: Location,
        levels: list[AssignLevel],
        body: ast.Submodule | None,
        body_scope: Scope | None = None,
    ) -> Built:
        """Elaborate one module instance (and, for a compound module, everything in it)."""
        self._enter(eff, path, loc)
        label = f"{path} ({eff.decl.simple_name})"
        params = Params(
            eff, path, label, loc, index=index, levels=levels,
            body=tuple(a for a in body.params if not a.is_deep) if body is not None else (),
            body_scope=body_scope, overrides=self.overrides,
        )
        values = params.all()
        self.param_paths.update(f"{path}.{p}" for p in values)
        gates = self._gates(eff, params, body, body_scope, label, loc)
        instance = ModuleInstance(
            path=path, name=name, type_name=eff.qualname, kind="compound" if eff.is_compound else "simple", index=index,
            vector_size=vector_size, params=values, location=loc,
        )
        built = Built(instance, gates, params)
        if eff.is_compound:
            self._ancestors.append((eff.qualname, path))
            try:
                self._compound(eff, built, levels)
            finally:
                self._ancestors.pop()
        return built

    def _enter(self, eff: EffectiveType, path: str, loc: Location) -> None:
        """Check containment cycles, nesting depth and the module limit for a new instance at *path*."""
        for i, (qualname, _) in enumerate(self._ancestors):
            if qualname == eff.qualname:
                chain = [q.rpartition(".")[2] for q, _ in self._ancestors[i:]] + [eff.decl.simple_name]
                raise NedError(
                    f"module type '{eff.decl.simple_name}' contains itself ({' -> '.join(chain)}, at {path})", loc
                )
        if len(self._ancestors) >= MAX_MODULE_DEPTH:
            raise NedError(f"modules nested more than {MAX_MODULE_DEPTH} levels deep (at {path})", loc)
        self.modules += 1
        if self.modules > self.limits.max_modules:
            raise NedError(
                f"the network has more than {self.limits.max_modules} modules (at {path}); "
                + Limits.how_to_raise("max_modules"),
                loc,
            )

    def count_gate(self, what: str, loc: Location) -> None:
        """Count one more gate (a vector grown by ``++``), refusing to pass the gate limit."""
        if self.gates + 1 > self.limits.max_gates:
            raise NedError(
                f"{what} would bring the network to more than {self.limits.max_gates} gates; "
                + Limits.how_to_raise("max_gates"),
                loc,
            )
        self.gates += 1

    def _gates(self, eff, params: Params, body, body_scope, label, loc: Location) -> dict[str, Gate]:
        gates: dict[str, Gate] = {}
        for g in eff.gates.values():
            size, growable = 0, False
            if g.vector:
                if g.size is None:
                    growable = True
                else:
                    try:
                        size = self._size(
                            evaluate(g.size, params.own_scope), f"gate vector '{g.name}' of {label}", g.size.loc
                        )
                    except NedError as e:
                        raise _blame(e, g.size, params) from None
            gates[g.name] = Gate(g.name, g.kind, g.vector, size, growable)
        sized = {}
        for g in body.gates if body is not None else ():
            gate = gates.get(g.name)
            if gate is None:
                raise NedError(f"unknown gate '{g.name}' of {label}", g.loc)
            if not gate.vector:
                raise NedError(f"gate '{g.name}' of {label} is not a vector", g.loc)
            size = self._size(evaluate(g.size, body_scope), f"gate vector '{g.name}' of {label}", g.size.loc)
            gate.size, gate.growable = size, False
            sized[g.name] = g.size
        total = sum(g.size if g.vector else 1 for g in gates.values())
        if self.gates + total > self.limits.max_gates:
            error = NedError(
                f"the {total} gates of {label} would bring the network to {self.gates + total} gates, more than"
                f" {self.limits.max_gates}; " + Limits.how_to_raise("max_gates"),
                loc,
            )
            big = max(gates.values(), key=lambda g: g.size if g.vector else 1)
            if big.name in sized:
                raise NedError(error.message, sized[big.name].loc)
            if big.vector and eff.gates[big.name].size is not None:
                raise _blame(error, eff.gates[big.name].size, params)
            raise error
        self.gates += total
        return gates

    def _compound(self, eff: EffectiveType, built: Built, levels: list[AssignLevel]) -> None:
        inst = built.instance
        path = inst.path
        subs: dict[str, SubEntry] = {}
        scope = Scope(
            params=built.params.lookup, index=inst.index,
            sizeof=lambda n, loc: self._sizeof(subs, built.gates, n, loc),
            subparam=lambda m, i, n, loc: self._subparam(subs, m, i, n, loc),
        )
        here = self._with_level(levels, path, [a for a, _ in eff.deep], scope)
        for sm, owner in eff.submodules:
            subs[sm.name] = self._submodule(sm, owner, path, scope, here)
        connector = Connector(self, eff, built, subs, scope, here)
        connections: list[Connection] = connector.run()
        children = tuple(
            b.final() for entry in subs.values() for b in entry.elements.values()
        )
        built.instance = attrs.evolve(inst, submodules=children, connections=tuple(connections))
        for entry in subs.values():  # done with them: no reference cycles left to the garbage collector
            for b in entry.elements.values():
                b.params.release()
        subs.clear()

    def _with_level(self, levels: list[AssignLevel], prefix: str, assigns, scope: Scope) -> list[AssignLevel]:
        """*levels* plus one for the deep assignments *assigns* written at *prefix* (if any)."""
        deep = [(f"{prefix}.{a.pattern}", a, scope) for a in assigns]
        if not deep:
            return list(levels)
        self._literal_checks.extend((p, a) for p, a, _ in deep if is_literal(p))
        return levels + [AssignLevel(deep)]

    def _submodule(self, sm: ast.Submodule, owner: ast.TypeDecl, path: str, scope: Scope, levels) -> SubEntry:
        if sm.condition is not None:
            present = to_bool(evaluate(sm.condition, scope), "the condition of a submodule", sm.condition.loc)
            if not present:
                return SubEntry(False, None)
        size = None
        if sm.vector is not None:
            size = self._size(evaluate(sm.vector, scope), f"submodule vector '{sm.name}'", sm.vector.loc)
            if self.modules + size > self.limits.max_modules:
                raise NedError(
                    f"submodule vector '{sm.name}' of {size} elements would give the network more than"
                    f" {self.limits.max_modules} modules; " + Limits.how_to_raise("max_modules"),
                    sm.vector.loc,
                )
        entry = SubEntry(True, size)
        for index in range(size) if size is not None else (None,):
            sub_path = f"{path}.{sm.name}" if index is None else f"{path}.{sm.name}[{index}]"
            body_scope = scope.with_index(index)
            eff = self.lib.effective(self._submodule_type(sm, owner, sub_path, body_scope, levels))
            entry.elements[index] = self.instantiate(
                eff, path=sub_path, name=sm.name, index=index, vector_size=size, loc=sm.loc,
                levels=self._with_level(levels, sub_path, [a for a in sm.params if a.is_deep], body_scope),
                body=sm, body_scope=body_scope,
            )
        return entry

    def _submodule_type(self, sm: ast.Submodule, owner: ast.TypeDecl, sub_path: str, scope: Scope, levels) -> str:
        if sm.type_name is not None:
            decl = self.lib.get(sm.type_name.name, context=owner, loc=sm.type_name.loc)
            if not decl.is_module:
                raise NedError(f"'{sm.type_name.name}' is a {decl.kind}, not a module type", sm.type_name.loc)
            return decl.qualname
        iface = self.lib.get(sm.like.name, context=owner, loc=sm.like.loc)
        if iface.kind != "moduleinterface":
            raise NedError(f"'{sm.like.name}' is a {iface.kind}, not a module interface", sm.like.loc)
        name, loc = self._typename(sm, sub_path, scope, levels)
        decl = self.lib.get(name, context=owner, loc=loc)
        if not decl.is_module:
            raise NedError(f"'{name}' is a {decl.kind}, not a module type", loc)
        self.lib.check_implements(decl.qualname, iface.qualname, loc)
        return decl.qualname

    def _typename(self, sm: ast.Submodule, sub_path: str, scope: Scope, levels) -> tuple[str, Location]:
        """The type name of a ``like`` submodule: typename override, deep typename assignment, ``<expr>``."""
        tpath = f"{sub_path}.typename"
        self.param_paths.add(tpath)
        found = self.overrides.find(tpath)
        if found is not None:
            value = override_value(found[0], found[1], "string", None, "typename", tpath)
            return value.value, Location(f"<override {found[0]}>", 1, 1)
        plain, default = find_assignment(levels, tpath, "typename")
        entry = plain or default
        if entry is not None:
            v = evaluate(entry.assign.value, entry.scope)
            if type(v.value) is not str:
                raise NedError(f"typename must be a string, got {show(v)}", entry.assign.value.loc)
            return v.value, entry.assign.value.loc
        if sm.like_expr is None:
            raise NedError(
                f"no type for {sub_path} ('<> like {sm.like.name}'): assign its typename", sm.like_loc
            )
        v = evaluate(sm.like_expr, scope)
        if type(v.value) is not str:
            raise NedError(f"the type of '{sm.name}' must be a string, got {show(v)}", sm.like_expr.loc)
        return v.value, sm.like_expr.loc

    # ------------------------------------------------------------ compound-module scope helpers

    @staticmethod
    def _sizeof(subs: dict[str, SubEntry], gates: dict[str, Gate], name: str, loc: Location) -> int:
        entry = subs.get(name)
        if entry is not None:
            if not entry.present:
                return 0
            return 1 if entry.size is None else entry.size
        gate = gates.get(name)
        if gate is not None:
            return gate.size if gate.vector else 1
        raise NedError(f"sizeof({name}): no submodule or gate '{name}' here", loc)

    @staticmethod
    def _subparam(subs: dict[str, SubEntry], module: str, index: int | None, name: str, loc: Location) -> Value:
        entry = subs.get(module)
        if entry is None:
            raise NedError(f"no submodule '{module}' here (a submodule can be used after its declaration)", loc)
        if not entry.present:
            raise NedError(f"submodule '{module}' does not exist (its condition is false)", loc)
        if (index is None) != (entry.size is None):
            need = "needs an index" if index is None else "is not a vector"
            raise NedError(f"submodule '{module}' {need}", loc)
        if index is not None and not 0 <= index < entry.size:
            raise NedError(f"index {index} out of range for submodule vector '{module}' of size {entry.size}", loc)
        built = entry.elements[index]
        value = built.params.lookup(name)
        if value is None:
            raise NedError(f"unknown parameter '{name}' of {built.params.label}{did_you_mean(name, built.params.eff.params)}",
                           loc)
        return value


    def _size(self, value: Value, what: str, loc: Location) -> int:
        """A vector size: an integer from 0 to the vector limit."""
        size = to_int(value, f"the size of {what}", loc)
        limit = self.limits.max_vector_size
        if not 0 <= size <= limit:
            hint = "; " + Limits.how_to_raise("max_vector_size") if size > limit else ""
            raise NedError(f"the size of {what} must be from 0 to {limit}, got {size}{hint}", loc)
        return size


#: The default vector limit (:attr:`Limits.max_vector_size`).
MAX_VECTOR_SIZE = Limits().max_vector_size


def _names(expr: ast.Expr) -> list[str]:
    """The parameter names *expr* mentions (``numPorts`` in ``numPorts + 1``), in order, iteratively."""
    out: list[str] = []
    stack = [expr]
    while stack:
        n = stack.pop()
        if isinstance(n, (ast.Name, ast.ThisParam)):
            if n.name not in out:
                out.append(n.name)
        elif isinstance(n, (tuple, list)):
            stack.extend(reversed(n))
        elif attrs.has(type(n)) and not isinstance(n, (Location, Value)):
            stack.extend(reversed([getattr(n, f.name) for f in attrs.fields(type(n)) if f.name != "loc"]))
    return out


def _blame(error: NedError, expr: ast.Expr, params: Params) -> NedError:
    """*error* about a type's expression (a gate size), moved to where the user set a value it uses.

    ``inout port[numPorts + 1]`` is written in the type's file (the built-in
    ``ib.ned`` for a Switch); when it fails because of ``numPorts = 10^8`` in
    the user's file or an override, the error goes there, with the value.
    """
    for name in _names(expr):
        origin = params.origins.get(name)
        if origin is not None and not origin.type_default and origin.loc is not None:
            cause = f" (from {name} = {show(params.values[name])})"
            message, sep, hint = error.message.partition("; raise it")
            return NedError(message + cause + sep + hint, origin.loc)
    return error
