"""Checks of the public API's arguments: a wrong type is a one-line :class:`~ibfabric.errors.ConfigError` at
the call, not a ``TypeError`` or ``AttributeError`` from deep inside (or later, inside ``run``).

Each function raises ``ConfigError("<what> must be <expected> (got <value>)")``.

>>> check_callable("call_at's function", None)
Traceback (most recent call last):
...
ibfabric.errors.ConfigError: call_at's function must be callable (got None)
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping
from typing import Any

from ibfabric.errors import ConfigError

__all__ = ["check_callable", "check_names", "check_overrides", "check_pattern", "check_simulation", "check_string",
           "check_topology"]


def _show(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def check_callable(what: str, value: Any) -> None:
    """*value* must be callable."""
    if not callable(value):
        raise ConfigError(f"{what} must be callable (got {_show(value)})")


def check_string(what: str, value: Any, *, none: bool = False) -> None:
    """*value* must be a string (or None, with *none*)."""
    if not (isinstance(value, str) or (none and value is None)):
        raise ConfigError(f"{what} must be a string{' or None' if none else ''} (got {_show(value)})")


def check_names(what: str, value: Any) -> None:
    """*value* must be an iterable of names, not a string (``block=["traffic"]``, not ``block="traffic"``)."""
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ConfigError(f"{what} must be a list (got {_show(value)})")
    for v in value:
        check_string(f"every name of {what}", v)


def check_overrides(what: str, value: Any) -> None:
    """*value* must be None, a mapping of pattern to value, or an iterable of ``(pattern, value)`` pairs."""
    if value is None or isinstance(value, Mapping):
        return
    if isinstance(value, (str, bytes)) or not isinstance(value, Iterable):
        raise ConfigError(f"{what} must be a mapping {{pattern: value}} or (pattern, value) pairs (got {_show(value)})")


def check_topology(value: Any) -> None:
    """*value* must be a path, NED text or an elaborated network."""
    from ibfabric.ned_like.model import ElaboratedNetwork

    if not isinstance(value, (str, os.PathLike, ElaboratedNetwork)):
        raise ConfigError(f"the topology must be a file path, a shipped topology's name, NED text or an"
                          f" ElaboratedNetwork (got {_show(value)})")


def check_pattern(what: str, pattern: Any) -> None:
    """*pattern* must be a valid wildcard path pattern (``'**.sw*'``)."""
    from ibfabric.ned_like import PatternError
    from ibfabric.ned_like.patterns import compile_pattern

    check_string(what, pattern)
    try:
        compile_pattern(pattern)
    except PatternError as exc:
        raise ConfigError(f"{what}: bad pattern {pattern!r}: {exc}") from None


def check_simulation(topology: Any, *, overrides: Any, optional_overrides: Any, defaults: Any, network: Any,
                     plugins: Any, block: Any, limits: Any) -> None:
    """The arguments of :class:`~ibfabric.simulation.Simulation` whose type is not checked where they are used."""
    from ibfabric.ned_like import Limits

    check_topology(topology)
    for what, value in (("overrides", overrides), ("optional_overrides", optional_overrides), ("defaults", defaults)):
        check_overrides(what, value)
    check_string("network", network, none=True)
    check_names("block", block)
    if isinstance(plugins, (str, bytes)) or not isinstance(plugins, Iterable):
        raise ConfigError(f"plugins must be a list of plugin objects (got {_show(plugins)})")
    if limits is not None and not isinstance(limits, Limits):
        raise ConfigError(f"limits must be an ibfabric.ned_like.Limits (got {_show(limits)})")
