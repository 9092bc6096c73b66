"""Parameter values of one module or channel instance: where each comes from.

A parameter's value is, from strongest to weakest:

1. an override from the :class:`~ibfabric.ned_like.patterns.OverrideSet`
   (first matching pattern);
2. an assignment from the NED source: deep assignments of enclosing compound
   modules (the outermost module first) and finally the submodule's (or
   channel's) own body; the first assignment found wins, and assignments
   written ``default(...)`` count only if there is no plain one;
3. a default from the OverrideSet's ``defaults`` (first matching pattern);
4. the default in the type declaration (``= expr`` and ``= default(expr)``
   are both defaults there);

otherwise the parameter has no value, which is an error.  Values are computed
on demand, so a default may use other parameters of the same module in any
order; a cycle is an error.  A chain of such dependencies is followed with an
explicit stack, not by recursion, so it can be of any length.
"""

from __future__ import annotations

import attrs

from ibfabric.ned_like import ast
from ibfabric.errors import did_you_mean
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.expr import EMPTY_SCOPE, Scope, coerce, evaluate
from ibfabric.ned_like.library import EffectiveType, ParamSpec
from ibfabric.ned_like.model import Location, Value
from ibfabric.ned_like.parser import parse_expression
from ibfabric.ned_like.patterns import OverrideSet, compile_pattern, is_literal

__all__ = ["AssignLevel", "Origin", "Params", "find_assignment", "override_value"]


@attrs.frozen
class Origin:
    """Where a parameter's value was written: ``loc``, and whether that is the type's own default."""

    loc: Location
    type_default: bool


class _Need(Exception):
    """Raised by an evaluation that needs a parameter of the same instance not computed yet."""

    def __init__(self, name: str):
        super().__init__(name)
        self.name = name


@attrs.frozen
class _Entry:
    order: int
    assign: ast.ParamAssign
    scope: Scope


class AssignLevel:
    """The deep assignments written in one place (a parameters block or a body).

    Patterns are absolute (the compound module's path, a dot, the pattern as
    written).  Literal patterns are found by dictionary lookup, wildcard ones
    by regex; within a level the assignment written first wins.
    """

    def __init__(self, items: list[tuple[str, ast.ParamAssign, Scope]]):
        self.literal: dict[str, list[_Entry]] = {}
        self._wild_by_name: dict[str, list[tuple[_Entry, object]]] = {}
        self._wild_any: list[tuple[_Entry, object]] = []
        for order, (path, assign, scope) in enumerate(items):
            entry = _Entry(order, assign, scope)
            if is_literal(path):
                self.literal.setdefault(path, []).append(entry)
                continue
            regex = compile_pattern(path)
            last = path.rpartition(".")[2]
            if any(c in last for c in "*?{["):
                self._wild_any.append((entry, regex))
            else:
                self._wild_by_name.setdefault(last, []).append((entry, regex))

    def find(self, path: str, name: str) -> tuple[_Entry | None, _Entry | None]:
        """The first plain and the first ``default(...)`` assignment matching *path*."""
        found = list(self.literal.get(path, ()))
        for entry, regex in self._wild_by_name.get(name, ()):
            if regex.fullmatch(path):
                found.append(entry)
        for entry, regex in self._wild_any:
            if regex.fullmatch(path):
                found.append(entry)
        found.sort(key=lambda e: e.order)
        plain = next((e for e in found if not e.assign.is_default), None)
        default = next((e for e in found if e.assign.is_default), None)
        return plain, default


#: override_value's results by (pattern, text, type, unit, name): one pattern sets the parameter of every
#: host of a big fabric, and parsing the same text again for each costs more than the rest of its lookup
_OVERRIDE_VALUES: dict[tuple, Value] = {}


def override_value(pattern: str, text: str, ptype: str, unit: str | None, name: str, path: str) -> Value:
    """The value an override text gives a parameter (see :class:`~ibfabric.ned_like.patterns.OverrideSet`).

    For a string parameter a text that is not a string expression is the
    string itself (``round-robin``, ``minhop``).
    """
    key = (pattern, text, ptype, unit, name)
    value = _OVERRIDE_VALUES.get(key)
    if value is None:
        value = _override_value(pattern, text, ptype, unit, name, path)  # raises naming *path*: not kept
        if len(_OVERRIDE_VALUES) >= 4096:
            _OVERRIDE_VALUES.clear()
        _OVERRIDE_VALUES[key] = value
    return value


def _override_value(pattern: str, text: str, ptype: str, unit: str | None, name: str, path: str) -> Value:
    fname = f"<override {pattern}>"
    try:
        value = evaluate(parse_expression(text, fname), EMPTY_SCOPE)
    except NedError as e:
        if ptype == "string":
            return Value(text.strip())
        raise NedError(f"{e.message} (value for {path})", e.location) from None
    if ptype == "string" and type(value.value) is not str:
        return Value(text.strip())
    try:
        return coerce(value, ptype, unit, name, Location(fname, 1, 1))
    except NedError as e:
        raise NedError(f"{e.message} (for {path})", e.location) from None


def find_assignment(levels, ppath: str, name: str) -> tuple[_Entry | None, _Entry | None]:
    """``(plain, default)``: the deep assignments of parameter path *ppath* over
    *levels* (outermost first).  A plain assignment at any level beats every
    ``default(...)``; the outermost of each kind wins.  At most one is not None."""
    default = None
    for level in levels:
        p, d = level.find(ppath, name)
        if p is not None:
            return p, None
        if d is not None and default is None:
            default = d
    return None, default


class Params:
    """The parameters of one instance, computed on demand.

    Parameters
    ----------
    eff : EffectiveType
        The module or channel type.
    path : str
        The instance path; parameter paths are ``path + "." + name``.
    label : str
        How errors name the instance (``"fig1.sw[2] (Switch)"``).
    loc : Location
        Where a missing value is reported (the submodule declaration).
    index : int or None
        The instance's index in its vector (for ``index`` in defaults).
    levels : list of AssignLevel
        Deep assignments of the enclosing modules, outermost first.
    body : tuple of ParamAssign
        Plain assignments of the submodule or channel body.
    body_scope : Scope
        The scope of the body (the enclosing module's), without ``this``.
    overrides : OverrideSet
    fixed : dict, optional
        Values given outright (the writer uses this to find the defaults).
    """

    def __init__(
        self,
        eff: EffectiveType,
        path: str,
        label: str,
        loc: Location,
        *,
        index: int | None = None,
        levels: list[AssignLevel] = (),
        body: tuple[ast.ParamAssign, ...] = (),
        body_scope: Scope | None = None,
        overrides: OverrideSet | None = None,
        fixed: dict[str, Value] | None = None,
    ):
        self.eff = eff
        self.path = path
        self.label = label
        self.loc = loc
        self.levels = levels
        self.overrides = overrides
        self.fixed = fixed or {}
        self.values: dict[str, Value] = {}
        self.origins: dict[str, Origin] = {}
        self._evaluating = False
        self._locs: dict[str, Location] = {}
        self.own_scope = Scope(params=self.lookup, index=index, this=self.this)
        self._body: dict[str, ast.ParamAssign] = {}
        for a in body:
            if a.pattern not in eff.params:
                raise NedError(f"unknown parameter '{a.pattern}' of {eff.decl.simple_name}"
                               f"{did_you_mean(a.pattern, eff.params)}", a.loc)
            self._body[a.pattern] = a
        self._body_scope = None
        if body_scope is not None:
            self._body_scope = body_scope.replace(this=self.this)

    def lookup(self, name: str) -> Value | None:
        """The value of parameter *name*, or None if the type has no such parameter."""
        if name not in self.eff.params:
            return None
        return self.get(name)

    def this(self, name: str, loc: Location) -> Value:
        """The value of ``this.name`` in an expression written at *loc*.

        Raises
        ------
        NedError
            If the type has no parameter *name*.
        """
        if name not in self.eff.params:
            raise NedError(f"unknown parameter '{name}' of {self.label}{did_you_mean(name, self.eff.params)}", loc)
        return self.get(name)

    def release(self) -> None:
        """Drop the scopes that refer back to this object, once no more values are needed.

        Those reference cycles would keep every instance's parameters, and
        the source they were computed from, alive until the cyclic garbage
        collector runs; released, they go as soon as the instance does.
        """
        self.own_scope = self._body_scope = None

    def all(self) -> dict[str, Value]:
        """Every parameter's value, in declaration order."""
        for name in self.eff.params:
            self.get(name)
        return {name: self.values[name] for name in self.eff.params}

    def get(self, name: str) -> Value:
        """The value of parameter *name*, computed on first use with every parameter it needs."""
        v = self.values.get(name)
        if v is not None:
            return v
        if self._evaluating:  # inside one of our own expressions: let _resolve compute it first
            raise _Need(name)
        return self._resolve(name)

    def _resolve(self, name: str) -> Value:
        """Compute *name* and, first, every parameter of this instance it needs.

        An evaluation that meets a parameter not computed yet stops (``_Need``);
        that parameter goes on the stack and the evaluation is repeated once it
        is known.  Expressions have no side effects, so repeating is safe.
        """
        stack = [name]
        while stack:
            top = stack[-1]
            if top in self.values:
                stack.pop()
                continue
            self._evaluating = True
            try:
                v = self._compute(self.eff.params[top])
            except _Need as need:
                if need.name in stack:
                    cycle = " -> ".join(stack[stack.index(need.name) :] + [need.name])
                    raise NedError(
                        f"parameter '{need.name}' of {self.label} depends on itself ({cycle})", self._locs[need.name]
                    ) from None
                stack.append(need.name)
                continue
            finally:
                self._evaluating = False
            self.values[top] = v
            stack.pop()
        return self.values[name]

    def _compute(self, spec: ParamSpec) -> Value:
        name = spec.name
        if name in self.fixed:
            return self.fixed[name]
        ppath = f"{self.path}.{name}"
        if self.overrides is not None:
            found = self.overrides.find(ppath)
            if found is not None:
                self.origins[name] = Origin(Location(f"<override {found[0]}>", 1, 1), False)
                return override_value(found[0], found[1], spec.decl.type, spec.decl.unit, name, ppath)
        p, d = find_assignment(self.levels, ppath, name)
        plain = (p.assign, p.scope) if p is not None else None
        default = (d.assign, d.scope) if d is not None else None
        if plain is None and name in self._body:
            a = self._body[name]
            if not a.is_default:
                plain = (a, self._body_scope)
            elif default is None:
                default = (a, self._body_scope)
        chosen = plain or default
        if chosen is not None:
            assign, scope = chosen
            self.origins[name] = Origin(assign.loc, False)
            return self._evaluate(spec, assign.value, scope, assign.loc)
        found = self.overrides.find_default(ppath) if self.overrides is not None else None
        if found is not None:  # the weakest level: only where the source assigns nothing
            self.origins[name] = Origin(Location(f"<override {found[0]}>", 1, 1), False)
            return override_value(found[0], found[1], spec.decl.type, spec.decl.unit, name, ppath)
        if spec.default is not None:
            self.origins[name] = Origin(spec.default_loc, True)
            return self._evaluate(spec, spec.default, self.own_scope, spec.default_loc)
        raise NedError(f"parameter '{name}' of {self.label} has no value", self.loc)

    def _evaluate(self, spec: ParamSpec, expr: ast.Expr, scope: Scope, loc: Location) -> Value:
        self._locs[spec.name] = loc
        value = evaluate(expr, scope)
        return coerce(value, spec.decl.type, spec.decl.unit, spec.name, expr.loc)
