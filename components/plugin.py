"""The built-in component types, registered as an ordinary plugin.

Their NED declarations are the ``.ned`` files of this package, which the
type library always loads; so they register with ``ned=None``.
"""

from __future__ import annotations

from ibfabric.kernel import DatarateChannel, DelayChannel
from ibfabric.plugins.manager import hookimpl

from .hca import HCA
from .link import Link
from .sm.subnet_manager import SubnetManager
from .switch import Switch


@hookimpl
def ibfabric_run_finished(simulation, summary) -> None:
    """Add the summary sections of the run's features (:meth:`Simulation.add_summary_section
    <ibfabric.simulation.Simulation.add_summary_section>`), and the warnings they gave."""
    for section in simulation.summary_sections.values():
        summary.update(section())
    summary["warnings"] = list(simulation.warnings)


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
