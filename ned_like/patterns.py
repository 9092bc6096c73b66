"""Wildcard patterns over parameter paths, and parameter overrides by pattern.

A pattern is matched against a whole dotted path such as
``fig1.sw[3].routingDelay``:

=================  ==========================================================
``*``              any characters except ``.`` (also none)
``**``             any characters including ``.`` (also none)
``?``              one character except ``.``
``[*]``            any vector index: ``[0]``, ``[17]``
``[3..7]``         an index from 3 to 7, both included (``[..7]``, ``[3..]``)
``{3..7}``         a number from 3 to 7, both included, anywhere in a name
``[3]``            the literal index 3 (any other character matches itself)
=================  ==========================================================

Examples
--------
>>> match("**.routingDelay", "fig1.sw[3].routingDelay")
True
>>> match("*.routingDelay", "fig1.sw[3].routingDelay")
False
>>> match("fig1.sw[2..4].lid", "fig1.sw[3].lid")
True
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Mapping

from ibfabric.ned_like.errors import NedError
from ibfabric.ned_like.model import Location

__all__ = ["OverrideSet", "PatternError", "compile_pattern", "is_literal", "match"]

_NUM = r"(?:0|[1-9][0-9]*)"


class PatternError(ValueError):
    """A pattern is malformed; ``position`` is the 0-based offset of the problem."""

    def __init__(self, message: str, position: int):
        super().__init__(message)
        self.position = position


def _digits_between(lo: str, hi: str) -> str:
    """A regex for the digit strings of one length from *lo* to *hi* (same length)."""
    if not lo:
        return ""
    if lo == hi:
        return re.escape(lo)
    if lo[0] == hi[0]:
        return lo[0] + "(?:" + _digits_between(lo[1:], hi[1:]) + ")"
    n = len(lo) - 1
    parts = []
    # lo[0] followed by anything >= lo[1:]
    if n == 0:
        return f"[{lo[0]}-{hi[0]}]"
    parts.append(lo[0] + "(?:" + _digits_between(lo[1:], "9" * n) + ")")
    if int(hi[0]) - int(lo[0]) > 1:
        parts.append(f"[{int(lo[0]) + 1}-{int(hi[0]) - 1}][0-9]{{{n}}}")
    parts.append(hi[0] + "(?:" + _digits_between("0" * n, hi[1:]) + ")")
    return "(?:" + "|".join(parts) + ")"


def range_regex(lo: int | None, hi: int | None) -> str:
    """A regex matching exactly the decimal numbers (no leading zeros) in ``[lo, hi]``.

    Either bound may be None (open).  The regex matches no number at all if
    ``lo > hi``.
    """
    lo = 0 if lo is None else lo
    if hi is not None and lo > hi:
        return "(?!)"
    parts = []
    if hi is None:
        # Every number with more digits than lo, and those of lo's length >= lo.
        width = len(str(lo))
        parts.append(f"[1-9][0-9]{{{width},}}")
        top = 10**width - 1
    else:
        top = hi
    cur = lo
    while cur <= top:
        width = len(str(cur))
        end = min(top, 10**width - 1)
        parts.append(_digits_between(str(cur), str(end)))
        cur = end + 1
    return "(?:" + "|".join(parts) + ")"


_MAX_DIGITS = 18  # indices in patterns: vectors are far smaller than 10**18


def _index(text: str, position: int) -> int:
    """The value of an index or bound written in a pattern (ASCII digits, at most 18 of them)."""
    if not (text.isascii() and text.isdigit()):
        raise PatternError(f"'{text}' is not a number", position)
    if len(text.lstrip("0")) > _MAX_DIGITS:
        raise PatternError(f"'{text[:24]}...' is too large for an index", position)
    return int(text)


def _bound(text: str, position: int) -> int | None:
    text = text.strip()
    if text == "":
        return None
    return _index(text, position)


@functools.lru_cache(maxsize=4096)
def _translate(pattern: str) -> tuple[str, bool]:
    out: list[str] = []
    literal = True
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*":
            literal = False
            if pattern.startswith("**", i):
                out.append(".*")
                i += 2
            else:
                out.append(r"[^.]*")
                i += 1
        elif c == "?":
            literal = False
            out.append(r"[^.]")
            i += 1
        elif c == "[":
            j = pattern.find("]", i)
            if j < 0:
                raise PatternError("'[' without ']'", i)
            inner = pattern[i + 1 : j].strip()
            if inner == "*":
                literal = False
                out.append(r"\[" + _NUM + r"\]")
            elif ".." in inner:
                literal = False
                a, _, b = inner.partition("..")
                out.append(r"\[" + range_regex(_bound(a, i + 1), _bound(b, i + 1)) + r"\]")
            elif inner.isascii() and inner.isdigit():
                out.append(r"\[" + str(_index(inner, i + 1)) + r"\]")
            else:
                raise PatternError(f"'[{inner}]' is not an index pattern (use [3], [*] or [3..7])", i)
            i = j + 1
        elif c == "{":
            j = pattern.find("}", i)
            if j < 0:
                raise PatternError("'{' without '}'", i)
            inner = pattern[i + 1 : j]
            if ".." not in inner:
                raise PatternError(f"'{{{inner}}}' is not a range (use {{3..7}})", i)
            literal = False
            a, _, b = inner.partition("..")
            out.append(r"(?<![0-9])" + range_regex(_bound(a, i + 1), _bound(b, i + 1)) + r"(?![0-9])")
            i = j + 1
        elif c in "]}":
            raise PatternError(f"'{c}' without its opening bracket", i)
        else:
            out.append(re.escape(c))
            i += 1
    if not pattern:
        raise PatternError("empty pattern", 0)
    return "".join(out), literal


@functools.lru_cache(maxsize=4096)
def compile_pattern(pattern: str) -> re.Pattern:
    """The compiled regex of *pattern* (use its ``fullmatch``).

    Raises
    ------
    PatternError
        If the pattern is malformed (``[abc]``, an unclosed bracket).
    """
    return re.compile(_translate(pattern)[0])


def is_literal(pattern: str) -> bool:
    """Whether *pattern* has no wildcard, so that it matches only itself."""
    return _translate(pattern)[1]


def match(pattern: str, path: str) -> bool:
    """Whether *pattern* matches the whole of *path* (see the module docstring).

    Raises
    ------
    PatternError
        If the pattern is malformed.
    """
    return compile_pattern(pattern).fullmatch(path) is not None


class OverrideSet:
    """Parameter overrides by wildcard path, as in an OMNeT++ ``.ini`` file.

    Parameters
    ----------
    items : mapping or iterable of (pattern, value text)
        In priority order: the first pattern that matches a parameter path
        gives its value.  Values are NED expressions or literals (``100ns``,
        ``4``, ``"minhop"``, ``true``); for a string parameter a text that is
        not a string expression is taken literally (``round-robin``).
    defaults : mapping or iterable of (pattern, value text), optional
        The weakest level: consulted only for a parameter that neither an
        override nor an assignment in the NED source sets, before the type's
        own default (what a command line's default values become, so that a
        value written in the file wins over them).  They may match nothing.

    Raises
    ------
    NedError
        If a pattern is malformed (the file of the error is ``<override PATTERN>``).

    Examples
    --------
    >>> o = OverrideSet({"**.sw[*].lid": "7", "**.lid": "1"})
    >>> o.lookup("net.sw[2].lid"), o.lookup("net.hca.lid")
    ('7', '1')
    >>> o.unused()
    []
    """

    def __init__(
        self,
        items: Mapping[str, str] | Iterable[tuple[str, str]] = (),
        *,
        defaults: Mapping[str, str] | Iterable[tuple[str, str]] = (),
    ):
        pairs = list(items.items()) if isinstance(items, Mapping) else [tuple(p) for p in items]
        self._items: list[tuple[str, str]] = []
        self._regexes: list[re.Pattern] = []
        for pattern, value in pairs:
            pattern = str(pattern).strip()
            try:
                regex = compile_pattern(pattern)
            except PatternError as e:
                raise NedError(
                    f"invalid pattern '{pattern}': {e}", Location(f"<override {pattern}>", 1, e.position + 1)
                ) from None
            self._items.append((pattern, str(value)))
            self._regexes.append(regex)
        self._used = [False] * len(self._items)
        self.defaults = OverrideSet(defaults) if defaults else None

    def __len__(self) -> int:
        return len(self._items)

    def __iter__(self):
        return iter(self._items)

    def __repr__(self) -> str:
        return f"OverrideSet({self._items!r})"

    def find(self, param_path: str) -> tuple[str, str] | None:
        """The first ``(pattern, value text)`` matching *param_path*, marking it used."""
        for i, regex in enumerate(self._regexes):
            if regex.fullmatch(param_path):
                self._used[i] = True
                return self._items[i]
        return None

    def find_default(self, param_path: str) -> tuple[str, str] | None:
        """The first of the *defaults* matching *param_path*, marking it used (None if none)."""
        return None if self.defaults is None else self.defaults.find(param_path)

    def lookup(self, param_path: str) -> str | None:
        """The value text of the first pattern matching *param_path* (None if none).

        The matching pattern is marked used.
        """
        found = self.find(param_path)
        return None if found is None else found[1]

    def used(self) -> list[tuple[str, str]]:
        """The ``(pattern, value text)`` items that have matched a parameter path, in order
        (then the defaults that gave a value)."""
        out = [item for item, used in zip(self._items, self._used) if used]
        return out + self.defaults.used() if self.defaults is not None else out

    def unused(self) -> list[str]:
        """The patterns (not defaults) that have matched no parameter path so far, in order."""
        return [p for (p, _), used in zip(self._items, self._used) if not used]
