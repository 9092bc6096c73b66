"""Evaluation of NED-like expressions, with units.

Values are :class:`~ibfabric.ned_like.model.Value`: a bool, int, float or
str, and for quantities the canonical unit of their dimension (``ns``, ``B``,
``bps``, ``m``, ``ns/m``).  Arithmetic keeps track of units:

* ``+ -`` and comparisons need operands of one dimension (or two numbers);
  strings concatenate with ``+``.
* ``*`` multiplies a quantity by a number; ``m * ns/m`` gives a time,
  ``bps * ns`` a data size.
* ``/`` of two quantities of one dimension gives a number; a quantity over a
  number stays a quantity; ``ns / m`` gives a delay per length, ``ns / (ns/m)``
  a length, ``B / bps`` a time and ``B / ns`` a bandwidth.
* ``/`` always gives a double, like OMNeT++ (``7 / 2`` is 3.5); an int
  parameter accepts a double only if it is a whole number.
* ``%`` takes integers (whole doubles too, so ``i % (n/2)`` works); the
  result is an int with the sign of the left operand, as in C.
* ``^`` is power; int ``^`` non-negative int is an int.
"""

from __future__ import annotations

import decimal
import math
import re
from collections.abc import Callable
from decimal import Decimal

from ibfabric import units
from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.limits import INT_MAX, INT_MIN, MAX_STRING_LENGTH
from ibfabric.ned_like.model import Location, Value

__all__ = [
    "FUNCTIONS",
    "Scope",
    "check_int",
    "coerce",
    "describe_dimension",
    "evaluate",
    "number_literal",
    "quantity_literal",
    "show",
    "to_bool",
    "to_int",
]

_DIMENSION_NAMES = {
    "time": "a time",
    "data": "a data size",
    "bandwidth": "a bandwidth",
    "length": "a length",
    "delay/length": "a delay per length",
}

_QUANTITY_PARTS = re.compile(r"^(\d+(?:\.\d+)?(?:[eE][-+]?\d+)?)(.+)$")


# Exact decimal arithmetic for quantity literals: enough digits for any 64-bit
# mantissa times a unit factor, and exponents far beyond the double range.
_DECIMAL = decimal.Context(prec=60, Emax=10**6, Emin=-(10**6), traps=[decimal.InvalidOperation])


def _clip(text: str, limit: int = 40) -> str:
    """*text* for a message: long texts (a 5,000-digit literal) are cut, with their length."""
    if len(text) <= limit:
        return text
    return f"{text[: limit // 2]}...({len(text)} characters)"


def show(v: Value) -> str:
    """*v* as NED text for a message, cut when long (a huge string parameter)."""
    if type(v.value) is int and v.value.bit_length() > 200:  # only arithmetic in progress can get here
        return f"an integer of about {int(v.value.bit_length() * 0.30103) + 1} digits"
    return _clip(v.ned(), 60)


def _finite(v: float, loc: Location) -> float:
    if not math.isfinite(v):
        raise NedError("the result is out of range (not a finite number)", loc)
    return v


def check_int(x: int, loc: Location, what: str = "the result") -> int:
    """*x* if it is a 64-bit signed integer, else a NedError at *loc*."""
    if not INT_MIN <= x <= INT_MAX:
        shown = str(x) if x.bit_length() <= 200 else f"about 10^{int(x.bit_length() * 0.30103)}"
        raise NedError(f"{what} {_clip(shown)} is out of the 64-bit integer range ({INT_MIN}..{INT_MAX})", loc)
    return x


def _int_text(text: str, loc: Location, what: str) -> int:
    """The int of a string of ASCII digits, range-checked before it is converted."""
    digits = text.lstrip("0")
    if len(digits) > len(str(INT_MAX)) or int(digits or "0") > INT_MAX:
        raise NedError(f"{what} {_clip(text)} is out of range (at most {INT_MAX}, a 64-bit integer)", loc)
    return int(digits or "0")


def _float_text(text: str, loc: Location, what: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise NedError(f"{what} {_clip(text)} is out of range (beyond the largest double, about 1.8e308)", loc)
    return v


def number_literal(text: str, loc: Location) -> Value:
    """The value of a number literal: an int unless it has a ``.`` or an exponent.

    Raises
    ------
    NedError
        If an integer is beyond 64 bits or a double overflows to infinity
        (checked before anything big is built from the text).
    """
    if any(c in text for c in ".eE"):
        return Value(_float_text(text, loc, "number"))
    return Value(_int_text(text, loc, "integer"))


def quantity_literal(text: str, loc: Location) -> Value:
    """The value of ``100ns``, ``2.5Gbps``, ``5ns/m``, in the canonical unit.

    Whole numbers that stay whole in the canonical unit (``4KiB``, ``2us``)
    are ints; the conversion is exact (decimal), so ``1.1us`` is 1100.0 ns.

    Raises
    ------
    NedError
        If the unit is unknown, or the number is out of range (64-bit ints,
        finite doubles), before or after the conversion.
    """
    m = _QUANTITY_PARTS.match(text)
    if m is None:
        raise NedError(f"'{_clip(text)}' is not a quantity", loc)
    num, unit = m.groups()
    try:
        factor, canon = units.to_canonical(1.0, unit)
    except units.UnitError:
        raise NedError(f"unknown unit '{_clip(unit)}' (units: {', '.join(units.UNITS)}, time/length)", loc) from None
    whole = not any(c in num for c in ".eE")
    if whole:
        _int_text(num, loc, "quantity")
    else:
        _float_text(num, loc, "quantity")
    exact = _DECIMAL.multiply(Decimal(num), Decimal(repr(factor)))
    if whole and exact == exact.to_integral_value():
        if not INT_MIN <= exact <= INT_MAX:
            raise NedError(f"quantity {_clip(text)} is out of range (at most {INT_MAX}{canon}, a 64-bit integer)", loc)
        return Value(int(exact), canon)
    value = float(exact)
    if not math.isfinite(value):
        raise NedError(f"quantity {_clip(text)} is out of range (beyond the largest double in {canon})", loc)
    return Value(value, canon)


def describe_dimension(unit: str) -> str:
    """``'a time (like 1ns)'`` for a unit of time, and so on."""
    return f"{_DIMENSION_NAMES[units.dimension(unit)]} (like 1{unit})"


class Scope:
    """The names an expression can see.

    Parameters
    ----------
    params : callable, optional
        ``params(name)`` gives the value of parameter *name* of the module
        whose expressions these are, or None if it has no such parameter.
    vars : dict, optional
        Loop variables (they hide parameters of the same name).
    index : int, optional
        The value of ``index``.
    this : callable, optional
        ``this(name, loc)`` for ``this.name``.
    sizeof : callable, optional
        ``sizeof(name, loc)`` for ``sizeof(name)``.
    subparam : callable, optional
        ``subparam(module, index, name, loc)`` for ``module[index].name``.
    """

    __slots__ = ("index", "params", "sizeof", "subparam", "this", "vars")

    def __init__(
        self,
        *,
        params: Callable[[str], Value | None] | None = None,
        vars: dict[str, Value] | None = None,
        index: int | None = None,
        this: Callable[[str, Location], Value] | None = None,
        sizeof: Callable[[str, Location], int] | None = None,
        subparam: Callable[[str, int | None, str, Location], Value] | None = None,
    ):
        self.params = params
        self.vars = vars or {}
        self.index = index
        self.this = this
        self.sizeof = sizeof
        self.subparam = subparam

    def replace(self, **changes) -> Scope:
        """This scope with the given fields replaced."""
        fields = dict(params=self.params, vars=self.vars, index=self.index, this=self.this,
                      sizeof=self.sizeof, subparam=self.subparam)
        fields.update(changes)
        return Scope(**fields)

    def with_vars(self, vars: dict[str, Value]) -> Scope:
        """This scope with loop variables *vars* added."""
        return self.replace(vars={**self.vars, **vars})

    def with_index(self, index: int | None) -> Scope:
        """This scope with ``index`` set to *index*."""
        return self.replace(index=index)


EMPTY_SCOPE = Scope()


# ---------------------------------------------------------------- helpers


def _kind(v: Value) -> str:
    t = type(v.value)
    if t is bool:
        return "bool"
    if t is str:
        return "string"
    return "number" if v.unit is None else units.dimension(v.unit)


def _is_number(v: Value) -> bool:
    return type(v.value) in (int, float)


def _num(v: Value, what: str, loc: Location) -> int | float:
    if not _is_number(v):
        raise NedError(f"{what} needs a number, got {show(v)}", loc)
    return v.value


def _whole(x: int | float) -> bool:
    return type(x) is int or x.is_integer()


def _make(x: int | float, unit: str | None, loc: Location) -> Value:
    """Every computed number goes through here: doubles finite, ints 64-bit."""
    if type(x) is float:
        _finite(x, loc)
    elif type(x) is int:
        check_int(x, loc)
    return Value(x, unit)


def _add(a: Value, b: Value, op: str, loc: Location) -> Value:
    if type(a.value) is str and type(b.value) is str and op == "+":
        if len(a.value) + len(b.value) > MAX_STRING_LENGTH:
            raise NedError(
                f"the string would be {len(a.value) + len(b.value)} characters long (at most {MAX_STRING_LENGTH})", loc
            )
        return Value(a.value + b.value)
    if not (_is_number(a) and _is_number(b)) or a.unit != b.unit:
        if op == "+":
            raise NedError(f"cannot add {show(a)} and {show(b)}", loc)
        raise NedError(f"cannot subtract {show(b)} from {show(a)}", loc)
    return _make(a.value + b.value if op == "+" else a.value - b.value, a.unit, loc)


# (unit, unit) -> (result unit, factor) for products and quotients across dimensions
_PRODUCTS = {
    ("m", "ns/m"): ("ns", 1.0),
    ("ns/m", "m"): ("ns", 1.0),
    ("bps", "ns"): ("B", 1.0 / 8e9),
    ("ns", "bps"): ("B", 1.0 / 8e9),
}
_QUOTIENTS = {
    ("ns", "m"): ("ns/m", 1.0),
    ("ns", "ns/m"): ("m", 1.0),
    ("B", "bps"): ("ns", 8e9),
    ("B", "ns"): ("bps", 8e9),
}


def _mul(a: Value, b: Value, op: str, loc: Location) -> Value:
    x = _num(a, f"'{op}'", loc)
    y = _num(b, f"'{op}'", loc)
    if op == "*":
        if a.unit is None or b.unit is None:
            return _make(x * y, a.unit or b.unit, loc)
        if (a.unit, b.unit) in _PRODUCTS:
            unit, f = _PRODUCTS[(a.unit, b.unit)]
            return _make(x * y * f, unit, loc)
        raise NedError(f"cannot multiply {show(a)} by {show(b)}", loc)
    if y == 0:
        raise NedError("division by zero" if op == "/" else "modulo by zero", loc)
    if op == "%":
        if not (_whole(x) and _whole(y)) or a.unit is not None or b.unit is not None:
            raise NedError(f"'%' needs two integers, got {show(a)} and {show(b)}", loc)
        x, y = int(x), int(y)
        r = abs(x) % abs(y)
        return _make(-r if x < 0 else r, None, loc)
    if b.unit is None:
        return _make(x / y, a.unit, loc)
    if a.unit == b.unit:
        return _make(x / y, None, loc)
    if (a.unit, b.unit) in _QUOTIENTS:
        unit, f = _QUOTIENTS[(a.unit, b.unit)]
        return _make(x / y * f, unit, loc)
    raise NedError(f"cannot divide {show(a)} by {show(b)}", loc)


def _pow(a: Value, b: Value, loc: Location) -> Value:
    if not (_is_number(a) and _is_number(b)) or a.unit is not None or b.unit is not None:
        raise NedError(f"'^' needs two numbers, got {show(a)} and {show(b)}", loc)
    x, y = a.value, b.value
    if type(x) is int and type(y) is int and 0 <= y <= 1024:
        if abs(x) > 1 and (abs(x).bit_length() - 1) * y >= 64:  # |x|^y >= 2^64: refuse before computing it
            raise NedError(f"{show(a)} ^ {show(b)} is out of the 64-bit integer range", loc)
        return _make(x**y, None, loc)
    try:
        r = math.pow(x, y)
    except (OverflowError, ValueError):
        raise NedError(f"{show(a)} ^ {show(b)} is out of range (not a finite number)", loc) from None
    return _make(r, None, loc)


def _compare(op: str, a: Value, b: Value, loc: Location) -> bool:
    ka, kb = _kind(a), _kind(b)
    if ka != kb:
        raise NedError(f"cannot compare {show(a)} with {show(b)}", loc)
    x, y = a.value, b.value
    if op == "==":
        return x == y
    if op == "!=":
        return x != y
    if ka == "bool":
        raise NedError(f"cannot order booleans ({show(a)} {op} {show(b)})", loc)
    if op == "<":
        return x < y
    if op == "<=":
        return x <= y
    if op == ">":
        return x > y
    return x >= y


def _bool(v: Value, what: str, loc: Location) -> bool:
    if type(v.value) is not bool:
        raise NedError(f"{what} needs a bool, got {show(v)}", loc)
    return v.value


# ---------------------------------------------------------------- functions


def _f_minmax(name: str, args: list[Value], loc: Location) -> Value:
    if not args:
        raise NedError(f"{name}() needs at least one argument", loc)
    best = args[0]
    for v in args:
        if not _is_number(v) or v.unit != args[0].unit:
            raise NedError(f"{name}() needs numbers of one dimension, got {show(args[0])} and {show(v)}", loc)
        if (v.value < best.value) if name == "min" else (v.value > best.value):
            best = v
    return best


def _one(name: str, args: list[Value], loc: Location) -> Value:
    if len(args) != 1:
        raise NedError(f"{name}() takes one argument, got {len(args)}", loc)
    return args[0]


def _f_abs(args, loc):
    v = _one("abs", args, loc)
    return _make(abs(_num(v, "abs()", loc)), v.unit, loc)


def _f_floor(args, loc):
    v = _one("floor", args, loc)
    return _make(math.floor(_num(v, "floor()", loc)), v.unit, loc)


def _f_ceil(args, loc):
    v = _one("ceil", args, loc)
    return _make(math.ceil(_num(v, "ceil()", loc)), v.unit, loc)


_INT_TEXT = re.compile(r"[-+]?[0-9]+")


def _f_int(args, loc):
    v = _one("int", args, loc)
    x = v.value
    if type(x) is bool:
        return Value(int(x))
    if type(x) is str:
        text = x.strip()
        if not _INT_TEXT.fullmatch(text):
            raise NedError(f"int(): {show(v)} is not an integer", loc)
        n = _int_text(text.lstrip("+-"), loc, "int():")
        return Value(-n if text.startswith("-") else n)
    return _make(int(x), v.unit, loc)


def _f_double(args, loc):
    v = _one("double", args, loc)
    x = v.value
    if type(x) is bool:
        return Value(float(x))
    if type(x) is str:
        try:
            return _make(float(x.strip()), None, loc)
        except ValueError:
            raise NedError(f"double(): {show(v)} is not a number", loc) from None
    return Value(float(x), v.unit)


def _f_string(args, loc):
    v = _one("string", args, loc)
    return v if type(v.value) is str else Value(v.ned())


def _f_bool(args, loc):
    v = _one("bool", args, loc)
    x = v.value
    if type(x) is bool:
        return v
    if type(x) is str:
        if x.strip() in ("true", "false"):
            return Value(x.strip() == "true")
        raise NedError(f"bool(): '{x}' is not true or false", loc)
    return Value(x != 0)


def _f_strlen(args, loc):
    v = _one("strlen", args, loc)
    if type(v.value) is not str:
        raise NedError(f"strlen() needs a string, got {show(v)}", loc)
    return Value(len(v.value))


FUNCTIONS: dict[str, Callable[[list[Value], Location], Value]] = {
    "abs": _f_abs,
    "bool": _f_bool,
    "ceil": _f_ceil,
    "double": _f_double,
    "floor": _f_floor,
    "int": _f_int,
    "max": lambda args, loc: _f_minmax("max", args, loc),
    "min": lambda args, loc: _f_minmax("min", args, loc),
    "string": _f_string,
    "strlen": _f_strlen,
}


# ---------------------------------------------------------------- evaluation


def evaluate(expr: ast.Expr, scope: Scope = EMPTY_SCOPE) -> Value:
    """The value of *expr* in *scope*.

    Raises
    ------
    NedError
        At the offending sub-expression: unknown name, mismatched units or
        types, division by zero, a result that is not finite or beyond 64
        bits.

    Notes
    -----
    Evaluation recurses once per nesting level; the parser refuses
    expressions nested deeper than
    :data:`~ibfabric.ned_like.limits.MAX_EXPRESSION_DEPTH`, so that stays
    far below Python's recursion limit.
    """
    return _eval(expr, scope)


def _eval(e: ast.Expr, scope: Scope) -> Value:
    t = type(e)
    if t is ast.Literal:
        return e.value
    if t is ast.Name:
        v = scope.vars.get(e.name)
        if v is None and scope.params is not None:
            v = scope.params(e.name)
        if v is None:
            raise NedError(f"unknown name '{e.name}'", e.loc)
        return v
    if t is ast.Chain:
        acc = _eval(e.first, scope)
        for op, operand in e.rest:
            b = _eval(operand, scope)
            acc = _add(acc, b, op, operand.loc) if op in "+-" else _mul(acc, b, op, operand.loc)
        return acc
    if t is ast.Compare:
        return Value(_compare(e.op, _eval(e.left, scope), _eval(e.right, scope), e.loc))
    if t is ast.Logic:
        stop = e.op == "||"
        for operand in e.operands:
            if _bool(_eval(operand, scope), f"'{e.op}'", operand.loc) == stop:
                return Value(stop)
        return Value(not stop)
    if t is ast.Cond:
        for cond, value in e.cases:
            if _bool(_eval(cond, scope), "'?:'", cond.loc):
                return _eval(value, scope)
        return _eval(e.default, scope)
    if t is ast.Unary:
        v = _eval(e.operand, scope)
        if e.op == "!":
            return Value(not _bool(v, "'!'", e.loc))
        x = _num(v, f"unary '{e.op}'", e.loc)
        return _make(-x if e.op == "-" else x, v.unit, e.loc)
    if t is ast.Power:
        return _pow(_eval(e.base, scope), _eval(e.exponent, scope), e.loc)
    if t is ast.IndexRef:
        if scope.index is None:
            raise NedError("'index' is only defined inside a submodule vector", e.loc)
        return Value(scope.index)
    if t is ast.Call:
        fn = FUNCTIONS.get(e.func)
        if fn is None:
            raise NedError(f"unknown function '{e.func}' (functions: {', '.join(sorted(FUNCTIONS))})", e.loc)
        args = []
        for a in e.args:  # a loop, not a comprehension: one stack frame per nesting level
            args.append(_eval(a, scope))
        return fn(args, e.loc)
    if t is ast.Sizeof:
        if scope.sizeof is None:
            raise NedError(f"sizeof({e.name}) is not available here", e.loc)
        return Value(scope.sizeof(e.name, e.loc))
    if t is ast.ThisParam:
        if scope.this is None:
            raise NedError(f"'this.{e.name}' is only available in a submodule body", e.loc)
        return scope.this(e.name, e.loc)
    if t is ast.SubParam:
        if scope.subparam is None:
            raise NedError(f"submodule parameters ('{e.module}.{e.name}') are not available here", e.loc)
        index = None if e.index is None else to_int(_eval(e.index, scope), "a submodule index", e.index.loc)
        return scope.subparam(e.module, index, e.name, e.loc)
    raise TypeError(f"not an expression: {e!r}")  # pragma: no cover - all node types are handled


def to_int(v: Value, what: str, loc: Location) -> int:
    """*v* as an int (a whole double is accepted), for sizes, indices and loop bounds."""
    x = v.value
    if type(x) is int and v.unit is None:
        return x
    if type(x) is float and v.unit is None and x.is_integer():
        return check_int(int(x), loc, what)
    raise NedError(f"{what} must be an integer, got {show(v)}", loc)


def to_bool(v: Value, what: str, loc: Location) -> bool:
    """*v* as a bool, for conditions."""
    return _bool(v, what, loc)


def coerce(value: Value, ptype: str, unit: str | None, name: str, loc: Location) -> Value:
    """*value* converted to a parameter of type *ptype* with ``@unit(unit)``.

    ints stay ints (a whole double becomes an int), doubles become floats,
    quantities must have the dimension of *unit* (a bare 0 is accepted as
    zero of any unit; any other bare number is an error).

    Raises
    ------
    NedError
        ``parameter 'routingDelay' expects a time (like 1ns), got 4096B``.
    """
    v = value.value
    what = f"parameter '{name}'"
    if ptype == "bool":
        if type(v) is not bool:
            raise NedError(f"{what} expects a bool, got {show(value)}", loc)
        return value
    if ptype == "string":
        if type(v) is not str:
            raise NedError(f"{what} expects a string, got {show(value)}", loc)
        return value
    if type(v) not in (int, float):
        raise NedError(f"{what} expects {'an int' if ptype == 'int' else 'a double'}, got {show(value)}", loc)
    target = None
    if unit is not None:
        target = units.canonical_unit(unit)
        if value.unit != target and not (value.unit is None and v == 0):
            raise NedError(f"{what} expects {describe_dimension(unit)}, got {show(value)}", loc)
    elif value.unit is not None:
        raise NedError(f"{what} expects a number without a unit, got {show(value)}", loc)
    if ptype == "int":
        if type(v) is float:
            if not v.is_integer():
                raise NedError(f"{what} expects an integer, got {show(value)}", loc)
            v = check_int(int(v), loc, f"{what}: the value")
        return Value(v, target)
    return Value(float(v), target)
