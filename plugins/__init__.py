"""Plugins: hook specifications, the plugin manager, registries and the built-ins.

Built-in implementations live in submodules (``routing/``, ``arbiters``,
``droppers``, ``traffic``) and are loaded through the ``ibfabric``
entry-point group exactly like third-party plugins.
"""

from .manager import ROLES, PluginSet, hookimpl
from .registry import Registration, Registry, UnknownName

__all__ = ["ROLES", "PluginSet", "Registration", "Registry", "UnknownName", "hookimpl"]
