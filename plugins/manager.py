"""The plugin manager of a simulation and the registries it fills.

One :class:`PluginSet` per simulation (or CLI command), never a global one::

    plugins = PluginSet.load(plugins=[my_module], block=["traffic"])
    engine = plugins.routing_engines["minhop"]

Loading reads the ``ibfabric`` entry-point group (built-ins included) with
pluggy's ``load_setuptools_entrypoints``, then registers the extra plugin
objects, checks that every hook implementation matches a specification, and
calls every contribution hook once, recording which plugin registered each
name.

An exception raised by a third-party plugin's code, while a simulation is
built or runs, becomes a one-line :class:`PluginError` naming the plugin and
the function that raised (:meth:`PluginSet.blaming`); one raised by
ibfabric's own code keeps its traceback (it is a bug of ibfabric).
"""

from __future__ import annotations

import contextlib
import types
from collections.abc import Iterable, Iterator
from typing import Any

import pluggy

from ibfabric.errors import IbfabricError, PluginError

from . import hookspecs
from .registry import Registry, one_line

__all__ = ["PluginSet", "ROLES", "hookimpl"]

hookimpl = pluggy.HookimplMarker("ibfabric")

#: role attribute -> (hook name, human name of the role)
ROLES: dict[str, tuple[str, str]] = {
    "module_types": ("ibfabric_register_module_types", "module type"),
    "routing_engines": ("ibfabric_register_routing_engines", "routing engine"),
    "multicast_routing_engines": ("ibfabric_register_multicast_routing", "multicast routing engine"),
    "vl_arbiters": ("ibfabric_register_vl_arbiters", "VL arbiter"),
    "packet_droppers": ("ibfabric_register_packet_droppers", "packet dropper"),
    "replication_engines": ("ibfabric_register_replication_engines", "replication engine"),
    "path_selectors": ("ibfabric_register_path_selectors", "path selector"),
    "traffic_patterns": ("ibfabric_register_traffic_patterns", "traffic pattern"),
    "arbitration_policies": ("ibfabric_register_arbitration_policies", "arbitration policy"),
    "workloads": ("ibfabric_register_workloads", "workload"),
}


class PluginSet:
    """A pluggy manager and the registries its plugins filled.

    Attributes ``module_types``, ``routing_engines``, ``multicast_routing_engines``, ``vl_arbiters``,
    ``packet_droppers``, ``replication_engines``, ``path_selectors``,
    ``traffic_patterns``, ``arbitration_policies`` and ``workloads`` are
    :class:`~ibfabric.plugins.registry.Registry` objects.
    """

    module_types: Registry
    routing_engines: Registry
    multicast_routing_engines: Registry
    vl_arbiters: Registry
    packet_droppers: Registry
    replication_engines: Registry
    path_selectors: Registry
    traffic_patterns: Registry
    arbitration_policies: Registry
    workloads: Registry

    def __init__(self, pm: pluggy.PluginManager):
        self.pm = pm
        for attr, (_, role) in ROLES.items():
            setattr(self, attr, Registry(role))

    @classmethod
    def load(
        cls,
        plugins: Iterable[Any] = (),
        block: Iterable[str] = (),
        *,
        entry_points: bool = True,
    ) -> "PluginSet":
        """Build a plugin manager and fill the registries.

        Parameters
        ----------
        plugins : iterable
            Extra plugin objects (modules or instances) for this simulation.
            One that an entry point already loaded (an installed package's
            module) is not registered twice, so a plugin's tests may pass
            its module whether or not the package is installed.
        block : iterable of str
            Names of plugins not to load (entry-point names, e.g.
            ``'traffic'`` to drop the built-in traffic patterns).
        entry_points : bool
            Load the ``ibfabric`` entry-point group (default True).

        Raises
        ------
        PluginError
            If a plugin fails to import, implements an unknown hook, or a
            registration is invalid; the message names the plugin.
        """
        pm = pluggy.PluginManager("ibfabric")
        pm.add_hookspecs(hookspecs)
        for name in block:
            pm.set_blocked(name)
        if entry_points:
            try:
                pm.load_setuptools_entrypoints("ibfabric")
            except Exception as exc:  # an import error inside a third-party plugin
                raise PluginError(
                    f"cannot load ibfabric plugin {_not_loaded(pm, 'ibfabric')}: {type(exc).__name__}: {one_line(exc)}"
                ) from exc
        for i, plugin in enumerate(plugins):
            name = getattr(plugin, "__name__", None) or f"{type(plugin).__name__}-{i}"
            if pm.is_blocked(name) or pm.is_registered(plugin):
                continue  # blocked, or installed and already loaded from its entry point: once is enough
            try:
                pm.register(plugin, name=name)
            except ValueError as exc:
                raise PluginError(f"cannot register plugin '{name}': {exc}") from exc
        try:
            pm.check_pending()
        except pluggy.PluginValidationError as exc:
            raise PluginError(f"plugin '{exc.plugin}' is invalid: {exc}") from exc
        self = cls(pm)
        self._collect()
        return self

    def type_library(self, builtin_only: bool = False):
        """The NED type library: the shipped ``components`` files, and the NED text registered with
        each module type (``ned=...``), each text once, named ``<plugin NAME>``; *builtin_only*:
        the shipped plugins' only."""
        from ibfabric.ned_like import TypeLibrary

        lib = TypeLibrary.default()
        seen: set[str] = set()
        for reg in self.module_types:
            ned = reg.extra.get("ned")
            if ned and ned not in seen and (reg.builtin or not builtin_only):
                seen.add(ned)
                lib.add_source(ned, f"<plugin {reg.plugin}>")
        return lib

    def _collect(self) -> None:
        for attr, (hook_name, _) in ROLES.items():
            registry: Registry = getattr(self, attr)
            caller = getattr(self.pm.hook, hook_name)
            # One call per implementation, so each registration is attributed
            # to the plugin that made it (pluggy calls LIFO; keep load order).
            for impl in reversed(caller.get_hookimpls()):
                pname = impl.plugin_name

                def register(name: str, obj: Any, description: str = "", _p: str = pname, **extra: Any) -> None:
                    registry.add(name, obj, plugin=_p, description=description, **extra)

                try:
                    impl.function(register=register)
                except PluginError:
                    raise
                except Exception as exc:
                    raise PluginError(
                        f"plugin '{pname}' raised in {hook_name}: {type(exc).__name__}: {one_line(exc)}"
                    ) from exc

    @contextlib.contextmanager
    def blaming(self) -> Iterator[None]:
        """Turn an exception raised by a third-party plugin's code inside the block into a
        one-line :class:`PluginError` naming the plugin and the function (see :meth:`blame`).
        ibfabric's own errors, and exceptions no plugin code raised, pass unchanged."""
        try:
            yield
        except IbfabricError:
            raise
        except Exception as exc:
            err = self.blame(exc)
            if err is None:
                raise
            raise err from exc

    def blame(self, exc: BaseException) -> PluginError | None:
        """A PluginError for *exc* if the innermost frame of its traceback that belongs to a
        plugin's module is a third-party plugin's (not ibfabric's own), else None.

        The message names the plugin, the function that raised (the hook or the strategy
        method, such as ``StrictPriority.select``) and what it implements, when that is a
        registered class or function: ``VL arbiter 'strict' (plugin 'demo') raised IndexError
        in StrictPriority.select: list index out of range``.
        """
        owners = self._third_party_modules()
        found = None
        tb = exc.__traceback__
        while tb is not None:
            mod = tb.tb_frame.f_globals.get("__name__") or ""
            owner = owners.get(mod)
            while owner is None and "." in mod:
                mod = mod.rpartition(".")[0]
                owner = owners.get(mod + ".*")
            if owner is not None:
                found = (owner, tb.tb_frame.f_code)
            tb = tb.tb_next
        if found is None:
            return None
        plugin, code = found
        where = getattr(code, "co_qualname", code.co_name)
        what = f"plugin '{plugin}'"
        for attr, (_, role) in ROLES.items():
            for reg in getattr(self, attr):
                qual = getattr(reg.obj, "__qualname__", None)
                if reg.plugin == plugin and qual and (where == qual or where.startswith(qual + ".")):
                    what = f"{role} '{reg.name}' ({what})"
        return PluginError(f"{what} raised {type(exc).__name__} in {where}: {one_line(exc)}")

    def _third_party_modules(self) -> dict[str, str]:
        """Module name -> plugin name for the code of plugins not shipped with ibfabric: each
        plugin's module (``'pkg.*'`` for all of a package's modules) and those of the objects it
        registered."""
        cached = getattr(self, "_owners", None)
        if cached is not None:
            return cached
        owners: dict[str, str] = {}

        def add(mod: str | None, plugin: str) -> None:
            if mod and mod != "ibfabric" and not mod.startswith("ibfabric."):
                owners.setdefault(mod, plugin)

        for name, plugin in self.pm.list_name_plugin():
            if plugin is None:  # blocked
                continue
            if isinstance(plugin, types.ModuleType):
                add(plugin.__name__, name)
                if hasattr(plugin, "__path__"):  # a package: every module in it
                    add(plugin.__name__ + ".*", name)
            else:
                add(type(plugin).__module__, name)
        for attr in ROLES:
            for reg in getattr(self, attr):
                add(getattr(reg.obj, "__module__", None), reg.plugin)
        self._owners = owners
        return owners

    def distribution(self, plugin_name: str) -> str | None:
        """'dist==version' of the package that provides a plugin, if it came from an entry point."""
        for plugin, dist in self.pm.list_plugin_distinfo():
            if self.pm.get_name(plugin) == plugin_name:
                return f"{dist.project_name}=={dist.version}"
        return None


def _not_loaded(pm: pluggy.PluginManager, group: str) -> str:
    """The entry point of *group* that pluggy's loading stopped at (the first one, in the order it
    reads them, neither registered nor blocked), as ``'name' (distribution version)``."""
    import importlib.metadata

    for dist in importlib.metadata.distributions():
        for ep in dist.entry_points:
            if ep.group == group and not pm.has_plugin(ep.name) and not pm.is_blocked(ep.name):
                return f"'{ep.name}' ({dist.metadata['Name']} {dist.version})"
    return "(unknown)"
