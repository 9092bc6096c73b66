"""Physical units for parameters: time, data, bandwidth, length, propagation.

Every dimension has one canonical unit in which ibfabric stores values:

=============  =========  ===========================================
dimension      canonical  accepted units
=============  =========  ===========================================
time           ``ns``     ``s``, ``ms``, ``us``, ``ns``, ``ps``
data           ``B``      ``B``, ``KiB``, ``MiB``, ``GiB``, ``KB``, ``MB``, ``GB``
bandwidth      ``bps``    ``bps``, ``Kbps``, ``Mbps``, ``Gbps``, ``Tbps``
length         ``m``      ``m``, ``cm``, ``mm``, ``km``
delay/length   ``ns/m``   any time unit over any length unit, e.g. ``ns/m``
=============  =========  ===========================================

Decimal prefixes mean powers of ten (``KB`` is 1000 bytes, ``Kbps`` is 1000
bit/s); binary prefixes mean powers of two (``KiB`` is 1024 bytes).

Examples
--------
>>> parse_quantity("2.5Gbps")
(2500000000.0, 'bps')
>>> convert(1.5, "us", "ns")
1500.0
>>> format_quantity(100.0, "ns")
'100ns'
"""

from __future__ import annotations

import math
import re

__all__ = [
    "MAX_DURATION_NS",
    "UNITS",
    "UnitError",
    "canonical_unit",
    "convert",
    "dimension",
    "format_quantity",
    "parse_duration",
    "parse_quantity",
    "to_canonical",
]


class UnitError(ValueError):
    """A unit is unknown or does not fit the expected dimension."""


# unit -> (dimension, factor to the canonical unit of that dimension)
UNITS: dict[str, tuple[str, float]] = {
    "s": ("time", 1e9),
    "ms": ("time", 1e6),
    "us": ("time", 1e3),
    "ns": ("time", 1.0),
    "ps": ("time", 1e-3),
    "B": ("data", 1.0),
    "KiB": ("data", 1024.0),
    "MiB": ("data", 1024.0**2),
    "GiB": ("data", 1024.0**3),
    "KB": ("data", 1e3),
    "MB": ("data", 1e6),
    "GB": ("data", 1e9),
    "bps": ("bandwidth", 1.0),
    "Kbps": ("bandwidth", 1e3),
    "Mbps": ("bandwidth", 1e6),
    "Gbps": ("bandwidth", 1e9),
    "Tbps": ("bandwidth", 1e12),
    "m": ("length", 1.0),
    "cm": ("length", 1e-2),
    "mm": ("length", 1e-3),
    "km": ("length", 1e3),
}

_CANONICAL = {
    "time": "ns",
    "data": "B",
    "bandwidth": "bps",
    "length": "m",
    "delay/length": "ns/m",
}

_QUANTITY = re.compile(
    r"^\s*(?P<num>[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*(?P<unit>[A-Za-z]+(?:/[A-Za-z]+)?)?\s*$"
)


def _lookup(unit: str) -> tuple[str, float]:
    if unit in UNITS:
        return UNITS[unit]
    if "/" in unit:
        num, _, den = unit.partition("/")
        if num in UNITS and den in UNITS:
            dn, fn = UNITS[num]
            dd, fd = UNITS[den]
            if dn == "time" and dd == "length":
                return "delay/length", fn / fd
    raise UnitError(f"unknown unit '{unit}'")


def dimension(unit: str) -> str:
    """The dimension of *unit* (``'time'``, ``'data'``, ...).

    Raises
    ------
    UnitError
        If the unit is unknown.
    """
    return _lookup(unit)[0]


def canonical_unit(unit: str) -> str:
    """The canonical unit of the dimension of *unit* (``'us'`` gives ``'ns'``)."""
    return _CANONICAL[_lookup(unit)[0]]


def convert(value: float, from_unit: str, to_unit: str) -> float:
    """Convert *value* from one unit to another of the same dimension.

    Raises
    ------
    UnitError
        If either unit is unknown or the dimensions differ.
    """
    d1, f1 = _lookup(from_unit)
    d2, f2 = _lookup(to_unit)
    if d1 != d2:
        raise UnitError(f"cannot convert {from_unit} ({d1}) to {to_unit} ({d2})")
    return value * f1 / f2


def to_canonical(value: float, unit: str) -> tuple[float, str]:
    """Convert *value* in *unit* to the canonical unit of its dimension."""
    d, f = _lookup(unit)
    return value * f, _CANONICAL[d]


def parse_quantity(text: str, expect: str | None = None) -> tuple[float, str | None]:
    """Parse ``'100ns'``, ``'2.5 Gbps'`` or ``'4'`` into ``(value, canonical unit)``.

    Parameters
    ----------
    text : str
        A number optionally followed by a unit.
    expect : str, optional
        A unit whose dimension the quantity must have; a bare number is then
        read in that unit.

    Returns
    -------
    (float, str or None)
        The value in the canonical unit, and that unit (None for a bare
        number with no *expect*).

    Raises
    ------
    UnitError
        If the text is not a quantity, the unit is unknown, or its dimension
        is not the expected one.
    """
    m = _QUANTITY.match(text)
    if not m:
        raise UnitError(f"'{text}' is not a quantity (expected a number and a unit, e.g. 100ns)")
    num = float(m.group("num"))
    unit = m.group("unit")
    if unit is None:
        if expect is None:
            return num, None
        return to_canonical(num, expect)
    value, canon = to_canonical(num, unit)
    if expect is not None and _lookup(expect)[0] != _lookup(unit)[0]:
        raise UnitError(f"'{text}' is a {_lookup(unit)[0]}, expected a {_lookup(expect)[0]} (like 1{expect})")
    return value, canon


#: The longest duration accepted as a run time or warm-up, in ns (1000 s of simulated time).  Times
#: are floats in ns: near 9e12 ns their resolution is a picosecond, too coarse for the byte times of
#: fast links, and no simulation of a fabric gets anywhere near that far.
MAX_DURATION_NS = 1e12


def parse_duration(value: float | int | str, *, numbers: bool = True) -> float:
    """A duration in ns: finite, not negative, at most :data:`MAX_DURATION_NS`.

    The one rule for durations, wherever they come from (the command line,
    experiment, scenario and configuration files, the Python API): **a
    duration needs a unit**.  A string is a quantity with a time unit
    (``'80ns'``, ``'1.5us'``); a bare number in a string (``'80'``) is an
    error that asks for a unit, except ``'0'``, zero in any unit (as for a
    NED parameter).  A Python number, not a string, is ns: it is what a
    program computed, and unambiguous.

    Parameters
    ----------
    value : float, int or str
        A quantity string such as ``'200us'``, or a number of ns.
    numbers : bool
        Whether a number (int or float) is accepted as ns; False for values
        a user typed in a file or on the command line, where ``80`` is as
        ambiguous as ``'80'``.

    Raises
    ------
    UnitError
        If *value* is not a time, has no unit, or is infinite, negative or
        too long.

    Examples
    --------
    >>> parse_duration("1.5us"), parse_duration(20), parse_duration("0")
    (1500.0, 20.0, 0.0)
    >>> parse_duration("80")
    Traceback (most recent call last):
    ...
    ibfabric.units.UnitError: '80' has no unit: a duration needs one, e.g. "80ns" or "80us"
    """
    if isinstance(value, bool):
        raise UnitError(f"{value!r} is not a duration")
    if isinstance(value, (int, float)):
        if not numbers and value != 0:
            raise UnitError(f"{value!r} has no unit: a duration needs one, e.g. \"{value!r}ns\" or \"{value!r}us\"")
        try:
            ns = float(value)
        except OverflowError:  # an int too large for a float
            ns = math.inf
    elif isinstance(value, str):
        text = value.strip()
        num, unit = parse_quantity(text)
        if unit is None:
            if num != 0:
                raise UnitError(f"'{text}' has no unit: a duration needs one, e.g. \"{text}ns\" or \"{text}us\"")
            ns = 0.0
        elif unit != "ns":
            raise UnitError(f"'{text}' is a {dimension(unit)}, expected a time (like 1ns)")
        else:
            ns = num
    else:
        raise UnitError(f"{value!r} is not a duration: give a string such as \"10us\" (or a number of ns)")
    if math.isnan(ns) or math.isinf(ns):
        raise UnitError("not a finite duration")
    if ns < 0:
        raise UnitError("a duration cannot be negative")
    if ns > MAX_DURATION_NS:
        raise UnitError("longer than 1000s, the longest ibfabric simulates")
    return ns


def format_quantity(value: float, unit: str) -> str:
    """Format *value* (in *unit*) as a NED literal that parses back exactly.

    Integral values print without a decimal point; others use ``repr`` so that
    no precision is lost.

    >>> format_quantity(2.5e9, "bps")
    '2500000000bps'
    >>> format_quantity(0.1, "ns")
    '0.1ns'
    """
    if isinstance(value, bool):
        raise UnitError("a boolean has no unit")
    if isinstance(value, int) or (math.isfinite(value) and float(value).is_integer() and abs(value) < 1e16):
        text = str(int(value))
    else:
        text = repr(float(value))
    return f"{text}{unit}"
