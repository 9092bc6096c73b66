"""Limits that keep bad or hostile input from exhausting time, memory or the stack.

Two kinds, both described in ``docs/ned-language.md`` (section *Limits*):

* **Resource limits** (:class:`Limits`): how big an elaborated network may
  get.  They are checked *before* the big thing is built (a submodule vector
  is refused before its first element exists), so a typo such as
  ``sw[1000000]`` fails in milliseconds, not after gigabytes.  The defaults
  build a 32-ary 3-tree (32,768 hosts, 3,072 switches, 265,216 gates) with
  room to spare; raise them with environment variables (the CLI) or
  ``limits=Limits(...)`` (:func:`~ibfabric.ned_like.elaborate`,
  :func:`~ibfabric.topologies.load_network`, :class:`~ibfabric.simulation.Simulation`).
* **Structural limits** (constants): nesting depths and number ranges.  They
  keep every recursive step of the language far below Python's recursion
  limit, whatever the input, and are not meant to be raised.

Examples
--------
>>> Limits().max_modules
100000
>>> Limits.from_env({"IBFABRIC_MAX_MODULES": "500000"}).max_modules
500000
"""

from __future__ import annotations

import os
from collections.abc import Mapping

import attrs

from ibfabric.errors import ConfigError
from ibfabric.ned_like import ast
from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.model import Location, Value

__all__ = [
    "INT_MAX",
    "INT_MIN",
    "Limits",
    "MAX_CONNECTION_NESTING",
    "MAX_EXPRESSION_DEPTH",
    "MAX_MODULE_DEPTH",
    "MAX_STRING_LENGTH",
    "check_nesting",
]

#: Integers are 64-bit signed: literals, results of arithmetic and int parameters.
INT_MAX = 2**63 - 1
INT_MIN = -(2**63)

#: Nesting of one expression: parentheses, unary operators, ``^``, calls, ``?:``
#: in a condition (flat chains such as ``a + b + c`` or ``x ? 1 : y ? 2 : 3``
#: count once).
MAX_EXPRESSION_DEPTH = 100

#: Nesting of connection blocks: each ``for`` variable and each ``if`` is a level.
MAX_CONNECTION_NESTING = 50

#: Nesting of modules: the network is level 1, its submodules level 2, ...
MAX_MODULE_DEPTH = 50

#: Longest string that ``+`` may build (literals themselves are not limited).
MAX_STRING_LENGTH = 16 * 2**20


def _positive(instance, attribute, value) -> None:
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ConfigError(f"'{attribute.name}' must be a positive integer (got {value!r})")


_ENV = {
    "max_modules": "IBFABRIC_MAX_MODULES",
    "max_gates": "IBFABRIC_MAX_GATES",
    "max_vector_size": "IBFABRIC_MAX_VECTOR_SIZE",
    "max_loop_iterations": "IBFABRIC_MAX_LOOP_ITERATIONS",
}


@attrs.frozen
class Limits:
    """Resource limits of one elaboration.

    Parameters
    ----------
    max_modules : int, default 100,000
        Module instances in the network (compound modules and the network
        included).
    max_gates : int, default 2,000,000
        Gates in the network: a scalar gate counts 1, a gate vector its size
        (``inout port[numPorts + 1]`` of a 36-port switch counts 37).
    max_vector_size : int, default 1,000,000
        Elements of one submodule or gate vector.
    max_loop_iterations : int, default 2,000,000
        Values taken by all ``for`` loop variables of the network together
        (nested loops multiply).

    Raises
    ------
    ConfigError
        If a limit is not a positive integer.
    """

    max_modules: int = attrs.field(default=100_000, validator=_positive)
    max_gates: int = attrs.field(default=2_000_000, validator=_positive)
    max_vector_size: int = attrs.field(default=1_000_000, validator=_positive)
    max_loop_iterations: int = attrs.field(default=2_000_000, validator=_positive)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """The defaults, changed by ``IBFABRIC_MAX_MODULES``, ``IBFABRIC_MAX_GATES``,
        ``IBFABRIC_MAX_VECTOR_SIZE`` and ``IBFABRIC_MAX_LOOP_ITERATIONS``.

        Raises
        ------
        ConfigError
            If a variable is set to something other than a positive integer.
        """
        environ = os.environ if environ is None else environ
        values = {}
        for field, var in _ENV.items():
            text = environ.get(var)
            if text is None or not text.strip():
                continue
            text = text.strip().replace("_", "").replace(",", "")
            if not text.isascii() or not text.isdigit() or len(text) > 18 or int(text) < 1:
                raise ConfigError(f"{var} must be a positive integer (got {environ[var]!r})")
            values[field] = int(text)
        return cls(**values)

    @staticmethod
    def how_to_raise(field: str) -> str:
        """``'raise it with IBFABRIC_MAX_MODULES=N or limits=Limits(max_modules=N)'``."""
        return f"raise it with {_ENV[field]}=N or limits=Limits({field}=N)"


# ---------------------------------------------------------------- nesting of parsed source

_EXPRESSIONS = (
    ast.Literal, ast.Name, ast.IndexRef, ast.ThisParam, ast.SubParam, ast.Sizeof, ast.Call, ast.Unary,
    ast.Chain, ast.Power, ast.Compare, ast.Logic, ast.Cond,
)
_LEAVES = (str, int, float, bool, type(None), Location, Value)
_FIELDS: dict[type, tuple[str, ...]] = {}


def _fields(t: type) -> tuple[str, ...]:
    names = _FIELDS.get(t)
    if names is None:
        names = _FIELDS[t] = tuple(f.name for f in attrs.fields(t) if not f.name.endswith("loc"))
    return names


def check_nesting(node) -> None:
    """Refuse parsed source nested beyond :data:`MAX_EXPRESSION_DEPTH` or :data:`MAX_CONNECTION_NESTING`.

    The walk is iterative, so any input can be checked; after it, every
    recursive step of evaluation and elaboration is bounded.

    Parameters
    ----------
    node : ast node, NedFile or tuple of them

    Raises
    ------
    NedError
        At the first construct beyond a limit.
    """
    stack = [(node, 0, 0)]
    while stack:
        n, expr_depth, conn_depth = stack.pop()
        t = type(n)
        if t is tuple or t is list:
            stack.extend((x, expr_depth, conn_depth) for x in n)
            continue
        if isinstance(n, _LEAVES):
            continue
        if t in _EXPRESSIONS:
            expr_depth += 1
            if expr_depth > MAX_EXPRESSION_DEPTH:
                raise NedError(f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep", n.loc)
        elif t is ast.ConnLoop or t is ast.ConnIf:
            conn_depth += len(n.vars) if t is ast.ConnLoop else 1
            if conn_depth > MAX_CONNECTION_NESTING:
                raise NedError(
                    f"connections nested more than {MAX_CONNECTION_NESTING} levels deep"
                    " (each 'for' variable and each 'if' is a level)",
                    n.loc,
                )
        for name in _fields(t):
            stack.append((getattr(n, name), expr_depth, conn_depth))
