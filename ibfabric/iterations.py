"""The values of an experiment's iteration variables, and the seeds of its repetitions.

A variable of ``[iterations]`` is a list of values, a range ``'a..b step s'``
or one value (:func:`parse_values`); repetition *r* of a run draws its random
numbers from the seed :func:`derive_seed` gives it.  :mod:`ibfabric.experiment`
expands an experiment file into runs with them.
"""

from __future__ import annotations

import decimal
import functools
import math
import re
from typing import Any

import numpy as np

from ibfabric.runspec import ExperimentError

__all__ = ["derive_seed", "parse_values"]

#: Most values one range may give.
MAX_VALUES = 100_000

_NUM = r"[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?"
_RANGE = re.compile(rf"\s*({_NUM})\s*\.\.\s*({_NUM})(?:\s*step\s*({_NUM}))?\s*")
_LOOKS_LIKE_RANGE = re.compile(r"\s*[-+]?[0-9.]*[0-9](?:[eE][-+]?[0-9]+)?\s*\.\.")
_INT = re.compile(r"[-+]?\d+")
_SCALARS = (str, int, float, bool)


def parse_values(value: Any, where: str = "") -> list:
    """The values of one iteration variable, from its TOML value.

    Parameters
    ----------
    value : list, str, int, float or bool
        A list of scalars; a range string ``'a..b step s'`` (``'a..b'``:
        step 1), inclusive of *b* when it lands on it (within 1e-9 of a
        step); or a scalar, which is one value.
    where : str
        ``file:line:col`` put in front of error messages.

    Returns
    -------
    list
        Ranges are computed in decimal, so ``'0.1..0.3 step 0.1'`` gives
        ``[0.1, 0.2, 0.3]``; ints when *a*, *b* and *s* are written as
        integers, floats otherwise.

    Raises
    ------
    ExperimentError
        For an empty list or range, a step that is not positive, more than
        100,000 values, or a value that is not a string, number or boolean.

    Examples
    --------
    >>> parse_values("0.7..1 step 0.1"), parse_values("1..3"), parse_values(["a", 2])
    ([0.7, 0.8, 0.9, 1.0], [1, 2, 3], ['a', 2])
    """
    fail = lambda msg: ExperimentError(f"{where}: {msg}" if where else msg)  # noqa: E731
    if isinstance(value, list):
        if not value:
            raise fail("empty list of values")
        bad = next((v for v in value if not isinstance(v, _SCALARS)), None)
        if bad is not None:
            raise fail(f"a list of values holds strings, numbers or booleans (got {_kind(bad)})")
        return list(value)
    if isinstance(value, str) and _LOOKS_LIKE_RANGE.match(value):
        return _range(value, fail)
    if not isinstance(value, _SCALARS):
        raise fail(f"expected a list, a range 'a..b step s' or a single value (got {_kind(value)})")
    return [value]


def _range(text: str, fail) -> list:
    m = _RANGE.fullmatch(text)
    if m is None:
        raise fail(f"bad range {text!r}: expected 'a..b' or 'a..b step s'")
    a_s, b_s, s_s = m.group(1), m.group(2), m.group(3) or "1"
    integral = all(_INT.fullmatch(x) for x in (a_s, b_s, s_s))
    try:
        with decimal.localcontext() as ctx:
            ctx.prec = 40
            a, b, s = decimal.Decimal(a_s), decimal.Decimal(b_s), decimal.Decimal(s_s)
            if s <= 0:
                raise fail(f"bad range {text!r}: the step must be positive")
            if b < a:
                raise fail(f"bad range {text!r}: empty ({b_s} < {a_s})")
            steps = (b - a) / s + decimal.Decimal("1e-9")
            if steps >= MAX_VALUES:
                raise fail(f"bad range {text!r}: more than {MAX_VALUES} values")
            count = int(steps.to_integral_value(decimal.ROUND_FLOOR)) + 1
            exact = [a + k * s for k in range(count)]
    except decimal.DecimalException:
        raise fail(f"bad range {text!r}: numbers out of range") from None
    if integral:
        return [int(v) for v in exact]
    values = [float(v) for v in exact]
    if not all(math.isfinite(v) for v in values):
        raise fail(f"bad range {text!r}: numbers out of range")
    return values


def derive_seed(base: int, repetition: int) -> int:
    """The seed of repetition *repetition* of an experiment with base seed *base*.

    Depends on ``(base, repetition)`` only, as OMNeT++'s ``seedset =
    ${repetition}``: the same repetition of two configurations draws the
    same random numbers (common random numbers), and different repetitions
    are independent streams of :class:`numpy.random.SeedSequence`.

    >>> derive_seed(1, 0) == derive_seed(1, 0) != derive_seed(1, 1)
    True
    """
    for what, v in (("base seed", base), ("repetition", repetition)):
        if not _is_count(v):
            raise ExperimentError(f"the {what} must be a non-negative integer (got {v!r})")
    return _seed(int(base), int(repetition))


def _is_count(v: Any) -> bool:
    """A non-negative integer (Python's or NumPy's), not a boolean."""
    return isinstance(v, (int, np.integer)) and not isinstance(v, bool) and v >= 0


@functools.lru_cache(maxsize=1024)
def _seed(base: int, repetition: int) -> int:
    return int(np.random.SeedSequence([base, repetition]).generate_state(1, dtype=np.uint32)[0])


def _kind(v: Any) -> str:
    names = {bool: "a boolean", int: "an integer", float: "a float", str: "a string", list: "a list", dict: "a table"}
    return names.get(type(v), type(v).__name__)
