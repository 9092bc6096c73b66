"""The exceptions ibfabric raises for user mistakes and model failures.

Every one of them carries a message meant to be printed as is, on one line;
the CLI prints ``str(error)`` and exits with status 2 (or 1 for a deadlock).
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable

__all__ = [
    "ConfigError",
    "DeadlockError",
    "IbfabricError",
    "PluginError",
    "TopologyError",
    "closest",
    "did_you_mean",
    "utf8_error_at",
]


class IbfabricError(Exception):
    """Base class of the errors ibfabric reports to users."""


class ConfigError(IbfabricError):
    """A parameter, option or command-line value is invalid."""


class PluginError(IbfabricError):
    """A plugin could not be loaded, registered a bad implementation, or raised."""


class TopologyError(IbfabricError):
    """A topology file or network is malformed (message starts with file:line:col where known)."""


class DeadlockError(IbfabricError):
    """The network deadlocked: a cycle of buffers each waiting for the next.

    ``cycle`` lists the waiting buffers as ``'module.port[p] VLv'`` strings and
    ``time`` is the simulation time (ns) of detection.
    """

    def __init__(self, message: str, cycle: list[str] | None = None, time: float | None = None):
        super().__init__(message)
        self.cycle = cycle or []
        self.time = time


def utf8_error_at(data: bytes, exc: UnicodeDecodeError) -> tuple[int, int, int]:
    """``(line, column, byte)`` of the first byte of *data* that is not UTF-8 (1-based, as in messages)."""
    head = data[: exc.start]
    line = head.count(b"\n") + 1
    column = len(head[head.rfind(b"\n") + 1 :].decode("utf-8", "replace")) + 1
    return line, column, data[exc.start]


def closest(name: object, choices: Iterable[str]) -> str | None:
    """The choice *name* was most likely meant to be (difflib, ignoring case), or None.

    >>> closest("Hca", ["HCA", "Switch"]), closest("numVls", ["numVLs", "mtu"]), closest("x", ["mtu"])
    ('HCA', 'numVLs', None)
    """
    if not isinstance(name, str) or not name:
        return None
    by_lower: dict[str, str] = {}
    for c in choices:
        if isinstance(c, str) and c != name:
            by_lower.setdefault(c.lower(), c)
    close = difflib.get_close_matches(name.lower(), list(by_lower), n=1)
    return by_lower[close[0]] if close else None


def did_you_mean(name: object, choices: Iterable[str], *, written: str = "{}") -> str:
    """``"; did you mean 'X'?"`` for the closest of *choices* to *name* (:func:`closest`), or ``""``.

    Every "unknown X" error of ibfabric ends its first part with it, before
    any list of the valid choices: ``unknown routing engine 'upnd'; did you
    mean 'updn'? (valid: ...)``.  *written* shows the suggestion as the
    user would write it (``"**.{}=2"``).

    >>> "unknown routing engine 'upnd'" + did_you_mean("upnd", ["updn", "minhop"])
    "unknown routing engine 'upnd'; did you mean 'updn'?"
    """
    match = closest(name, choices)
    return f"; did you mean '{written.format(match)}'?" if match is not None else ""
