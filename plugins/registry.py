"""Typed registries of named implementations, one per plugin role."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import attrs

from ibfabric.errors import PluginError

__all__ = ["Registration", "Registry", "UnknownName", "one_line"]


class UnknownName(PluginError):
    """A name that no plugin registered for a role."""


@attrs.frozen
class Registration:
    """One registered implementation: its name, the object, and who registered it."""

    name: str
    obj: Any
    plugin: str
    description: str = ""
    extra: dict = attrs.field(factory=dict, eq=False)
    role: str = ""

    def create(self, *args: Any, where: str = "", **kwargs: Any) -> Any:
        """Call the registered factory; an exception from plugin code becomes a
        one-line PluginError naming the implementation and its plugin
        (ibfabric's own errors pass through with *where* in front)."""
        from ibfabric.errors import IbfabricError

        try:
            return self.obj(*args, **kwargs)
        except IbfabricError as exc:
            if where:
                raise type(exc)(f"{where}: {exc}") from None
            raise
        except Exception as exc:
            at = f"{where}: " if where else ""
            raise PluginError(
                f"{at}{self.role or 'plugin'} '{self.name}' (plugin '{self.plugin}') raised {type(exc).__name__}:"
                f" {one_line(exc)}"
            ) from exc

    @property
    def builtin(self) -> bool:
        """Whether the implementation is ibfabric's own (its code is in the ``ibfabric`` package)."""
        mod = getattr(self.obj, "__module__", None) or ""
        return mod == "ibfabric" or mod.startswith("ibfabric.")


class Registry:
    """Name -> implementation for one role ("routing engine", "VL arbiter", ...).

    >>> r = Registry("routing engine")
    >>> r.add("minhop", len, plugin="builtin")
    >>> r["minhop"]
    <built-in function len>
    >>> r["fast"]
    Traceback (most recent call last):
    ...
    ibfabric.plugins.registry.UnknownName: unknown routing engine 'fast' (valid: minhop)
    """

    def __init__(self, role: str):
        self.role = role
        self._items: dict[str, Registration] = {}

    def add(self, name: str, obj: Any, *, plugin: str, description: str = "", **extra: Any) -> None:
        """Register *obj* as *name*, contributed by *plugin*.

        Parameters
        ----------
        name : str
            The name users choose it by (``--routing minhop``).
        obj : object
            The implementation (a factory, a class...; what it must be depends on the role).
        plugin : str
            The name of the plugin registering it.
        description : str
            One line for ``ibfabric plugins``.
        **extra
            Role-specific data kept in :attr:`Registration.extra`.

        Raises
        ------
        PluginError
            If *name* is not a non-empty string or is registered already.
        """
        if not isinstance(name, str) or not name:
            raise PluginError(f"plugin '{plugin}' registered a {self.role} with an invalid name {name!r}")
        if name in self._items:
            other = self._items[name].plugin
            raise PluginError(f"{self.role} '{name}' is registered twice (by '{other}' and by '{plugin}')")
        self._items[name] = Registration(name, obj, plugin, description, dict(extra), self.role)

    def __getitem__(self, name: str) -> Any:
        return self.get(name).obj

    def get(self, name: str) -> Registration:
        """The registration of *name*.

        Raises
        ------
        UnknownName
            If nothing is registered as *name*; the message lists the valid names.
        """
        try:
            return self._items[name]
        except KeyError:
            from ibfabric.errors import did_you_mean

            valid = ", ".join(sorted(self._items)) or "none registered"
            raise UnknownName(f"unknown {self.role} '{name}'{did_you_mean(name, self._items)} (valid: {valid})") from None

    def __contains__(self, name: object) -> bool:
        return name in self._items

    def __iter__(self) -> Iterator[Registration]:
        return iter(sorted(self._items.values(), key=lambda r: r.name))

    def __len__(self) -> int:
        return len(self._items)

    def names(self) -> list[str]:
        """The registered names, sorted."""
        return sorted(self._items)


def one_line(exc: BaseException) -> str:
    """The message of *exc* on one line (its lines joined with '; '; the type's name if empty)."""
    return "; ".join(line.strip() for line in str(exc).splitlines() if line.strip()) or type(exc).__name__
