"""Types for the writer: library types it can reference, and types it must declare.

Used by :mod:`ibfabric.ned_like.writer`.  A simple-module or channel type of
the network is *referenced* when the library has a declaration that fits its
instances (same parameters and gates), and *synthesized* otherwise: then the
written file declares it, with every parameter (no defaults) and every gate
vector unsized (sizes go in the submodule bodies).

For a referenced type the writer needs to know which parameter values the
type's defaults reproduce; :class:`DefaultFinder` finds the largest set of
parameters that can be left unassigned.
"""

from __future__ import annotations

import attrs

from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import evaluate, to_int
from ibfabric.ned_like.library import EffectiveType, TypeLibrary
from ibfabric.ned_like.model import ElaboratedNetwork, Location, ModuleInstance, Value
from ibfabric.ned_like.params import Params

__all__ = ["DefaultFinder", "TypeInfo", "collect_types", "value_key"]

_WRITER = Location("<write_ned>", 0, 0)


def value_key(v: Value) -> tuple:
    """A key telling values apart exactly (``1``, ``1.0`` and ``true`` differ)."""
    return (type(v.value).__name__, v.value, v.unit)


@attrs.define(eq=False)
class TypeInfo:
    """A simple-module or channel type of the network, as the writer sees it.

    ``eff`` is the library type it references, or None when the writer
    declares the type itself with ``params`` (name -> (type, unit)) and
    ``gates`` (name -> (kind, vector)); ``likes`` are the interfaces it then
    declares.
    """

    qualname: str
    kind: str
    eff: EffectiveType | None
    params: dict[str, tuple[str, str | None]] = attrs.field(factory=dict)
    gates: dict[str, tuple[str, bool]] = attrs.field(factory=dict)
    likes: list[str] = attrs.field(factory=list)

    @property
    def synthesized(self) -> bool:
        """Whether the writer declares the type itself (no library type to reference)."""
        return self.eff is None


def _ptype(values: list[Value], what: str) -> tuple[str, str | None]:
    kinds = {type(v.value) for v in values}
    unit_set = {v.unit for v in values}
    if len(unit_set) > 1:
        raise NedError(f"cannot write {what}: its values have different units ({sorted(map(str, unit_set))})", _WRITER)
    unit = unit_set.pop()
    if kinds == {bool}:
        return "bool", None
    if kinds == {str}:
        return "string", None
    if kinds == {int}:
        return "int", unit
    if kinds <= {int, float}:
        return "double", unit
    raise NedError(f"cannot write {what}: its values have different types", _WRITER)


def collect_types(net: ElaboratedNetwork, lib: TypeLibrary) -> dict[str, TypeInfo]:
    """The simple-module and channel types used by *net*, by qualified name.

    Raises
    ------
    NedError
        If the library declares a type of the network differently from its
        instances (so the written text could not reproduce them).
    """
    modules: dict[str, list[ModuleInstance]] = {}
    for m in net.simple_modules():
        modules.setdefault(m.type_name, []).append(m)
    channels: dict[str, list] = {}
    for m in net.modules():
        for c in m.connections:
            if c.channel is not None:
                channels.setdefault(c.channel.type_name, []).append(c.channel)
    out: dict[str, TypeInfo] = {}
    for kind, groups in (("simple", modules), ("channel", channels)):
        for qualname, instances in groups.items():
            decl = lib.lookup(qualname)
            if decl is None:
                out[qualname] = _synthesize(qualname, kind, instances)
                continue
            if decl.kind != kind:
                raise NedError(f"cannot write the network: '{qualname}' is a {decl.kind} in the library", _WRITER)
            eff = lib.effective(qualname)
            for inst in instances:
                _check_fits(eff, inst, kind)
            out[qualname] = TypeInfo(qualname, kind, eff)
    return out


def _synthesize(qualname: str, kind: str, instances: list) -> TypeInfo:
    info = TypeInfo(qualname, kind, None)
    names: dict[str, list[Value]] = {}
    for inst in instances:
        for name, v in inst.params.items():
            names.setdefault(name, []).append(v)
    for name, values in names.items():
        if len(values) != len(instances):
            raise NedError(f"cannot write type '{qualname}': parameter '{name}' is missing on some instances", _WRITER)
        info.params[name] = _ptype(values, f"parameter '{name}' of '{qualname}'")
    if kind == "simple":
        for inst in instances:
            for g in inst.gates:
                shape = (g.kind, g.size is not None)
                if info.gates.setdefault(g.name, shape) != shape:
                    raise NedError(f"cannot write type '{qualname}': gate '{g.name}' differs between instances", _WRITER)
        for inst in instances:
            if {g.name for g in inst.gates} != set(info.gates):
                raise NedError(f"cannot write type '{qualname}': its instances have different gates", _WRITER)
    return info


def _check_fits(eff: EffectiveType, inst, kind: str) -> None:
    where = getattr(inst, "path", None) or "a channel"
    if set(inst.params) != set(eff.params):
        diff = sorted(set(inst.params) ^ set(eff.params))
        raise NedError(
            f"cannot write {where}: type '{eff.qualname}' in the library has other parameters ({', '.join(diff)})",
            _WRITER,
        )
    if kind == "simple":
        mine = {g.name: (g.kind, g.size is not None) for g in inst.gates}
        theirs = {g.name: (g.kind, g.vector) for g in eff.gates.values()}
        if mine != theirs:
            raise NedError(f"cannot write {where}: type '{eff.qualname}' in the library has other gates", _WRITER)


def _uses_index(node) -> bool:
    """Whether an expression mentions ``index`` (iteratively, over the ast values)."""
    stack = [node]
    while stack:
        n = stack.pop()
        if isinstance(n, ast.IndexRef):
            return True
        if isinstance(n, (tuple, list)):
            stack.extend(n)
        elif attrs.has(type(n)):
            stack.extend(getattr(n, f.name) for f in attrs.fields(type(n)) if f.name != "loc")
    return False


class DefaultFinder:
    """Finds which parameter values of an instance its type's defaults reproduce."""

    def __init__(self) -> None:
        self._memo: dict[tuple, frozenset[str]] = {}
        self._index_use: dict[str, bool] = {}

    def needed(self, info: TypeInfo, params: dict[str, Value], index: int | None) -> frozenset[str]:
        """The parameters that must be assigned for the instance to get *params*.

        Starts from every parameter that has a default left unassigned and
        removes those whose default (computed with the others' actual values,
        as elaboration would) differs from the actual value, until the rest
        is consistent.  Synthesized types have no defaults: all are needed.
        """
        if info.eff is None:
            return frozenset(params)
        eff = info.eff
        if eff.qualname not in self._index_use:
            self._index_use[eff.qualname] = any(_uses_index(s.default) for s in eff.params.values())
        key = (
            eff.qualname,
            index if self._index_use[eff.qualname] else None,
            tuple(sorted((k,) + value_key(v) for k, v in params.items())),
        )
        found = self._memo.get(key)
        if found is None:
            found = self._memo[key] = self._search(eff, params, index)
        return found

    @staticmethod
    def _search(eff: EffectiveType, params: dict[str, Value], index: int | None) -> frozenset[str]:
        # First the parameters whose default gives the actual value when every
        # other parameter has its actual value; then drop those that fail when
        # evaluated together (only cycles of defaults can).
        free = set()
        for name, spec in eff.params.items():
            if spec.default is None:
                continue
            fixed = {n: v for n, v in params.items() if n != name}
            try:
                got = Params(eff, "<write_ned>", eff.qualname, _WRITER, index=index, fixed=fixed).get(name)
            except NedError:
                continue
            if value_key(got) == value_key(params[name]):
                free.add(name)
        while True:
            fixed = {n: v for n, v in params.items() if n not in free}
            resolver = Params(eff, "<write_ned>", eff.qualname, _WRITER, index=index, fixed=fixed)
            bad = set()
            for name in free:
                try:
                    got = resolver.get(name)
                except NedError:
                    bad.add(name)
                    continue
                if value_key(got) != value_key(params[name]):
                    bad.add(name)
            if not bad:
                return frozenset(params) - free
            free -= bad

    @staticmethod
    def declared_sizes(info: TypeInfo, params: dict[str, Value], index: int | None) -> dict[str, int | None]:
        """The gate-vector sizes the type's declaration gives (None: unsized or not computable)."""
        out: dict[str, int | None] = {}
        if info.eff is None:
            return {g: None for g, (_, vector) in info.gates.items() if vector}
        resolver = Params(info.eff, "<write_ned>", info.qualname, _WRITER, index=index, fixed=dict(params))
        for g in info.eff.gates.values():
            if not g.vector:
                continue
            if g.size is None:
                out[g.name] = None
                continue
            try:
                out[g.name] = to_int(evaluate(g.size, resolver.own_scope), "a gate vector size", g.size.loc)
            except NedError:
                out[g.name] = None
        return out
