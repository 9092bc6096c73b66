"""The built-in component types, registered as an ordinary plugin.

Their NED declarations are the ``.ned`` files of this package, which the
type library always loads; so they register with ``ned=None``.
"""

from __future__ import annotations

from ibfabric.kernel import DatarateChannel, DelayChannel
from ibfabric.plugins.manager import hookimpl

from .hca import HCA
from .link import Link
from .subnet_manager import SubnetManager
from .switch import Switch


@hookimpl
def ibfabric_register_module_types(register) -> None:
    """Register Switch, HCA, SubnetManager, Link, DelayChannel and DatarateChannel
    as ``ibfabric.components.<name>``.
    """
    for name, cls in (
        ("Switch", Switch),
        ("HCA", HCA),
        ("SubnetManager", SubnetManager),
        ("Link", Link),
        ("DelayChannel", DelayChannel),
        ("DatarateChannel", DatarateChannel),
    ):
        register(f"ibfabric.components.{name}", cls, ned=None)
