"""What the plugin tests share: the demo plugin package, pip-installed once per session."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

#: A third-party plugin package with one implementation per role (docs/plugin-guide.md shows its code).
DEMO = Path(__file__).parent.parent / "data" / "demo_plugin"


def _can_build_offline() -> bool:
    """Whether this environment's setuptools can build a wheel by itself (else pip fetches one)."""
    try:
        import setuptools
    except ImportError:
        return False
    major = int(setuptools.__version__.split(".")[0])
    if major >= 71:
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return major >= 61


@pytest.fixture(scope="session")
def demo_site(tmp_path_factory):
    """The demo plugin package pip-installed into a directory of its own."""
    target = tmp_path_factory.mktemp("site")
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(DEMO)]
    if _can_build_offline():
        cmd.insert(4, "--no-build-isolation")
    proc = subprocess.run(cmd, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return target


#: A third-party plugin that registers, for every role, one name sorting before every built-in one and
#: one sorting after: a test that hard-codes the list of registered names (instead of asserting the
#: built-ins are among them) fails with it installed.
EXTRA_PLUGIN = '''
"""Extra names for every role (ibfabric's tests: the registries are not ibfabric's alone)."""

from ibfabric import Module, hookimpl

NED = "package {};\\nsimple Extra\\n{{\\n}}\\n"


class Extra(Module):
    pass


def _unused(*args, **kwargs):
    raise AssertionError("ibfabric's own tests never use the extra plugin's names")


def _registrar():
    @hookimpl
    def register_both(register):
        register("aaa-extra", _unused, description="sorts first")
        register("zzz-extra", _unused, description="sorts last")

    return register_both


@hookimpl
def ibfabric_register_module_types(register):
    register("aaa.Extra", Extra, ned=NED.format("aaa"))
    register("zzz.Extra", Extra, ned=NED.format("zzz"))


ibfabric_register_routing_engines = _registrar()
ibfabric_register_multicast_routing = _registrar()
ibfabric_register_vl_arbiters = _registrar()
ibfabric_register_packet_droppers = _registrar()
ibfabric_register_replication_engines = _registrar()
ibfabric_register_path_selectors = _registrar()
ibfabric_register_traffic_patterns = _registrar()
ibfabric_register_arbitration_policies = _registrar()
ibfabric_register_workloads = _registrar()
'''


@pytest.fixture(scope="session")
def extra_site(tmp_path_factory):
    """A directory that, on ``PYTHONPATH``, installs :data:`EXTRA_PLUGIN` as the distribution
    ``ibfabric-extra-names`` with the entry point ``extra-names`` (no pip: a module and its dist-info)."""
    site = tmp_path_factory.mktemp("extra_site")
    (site / "ibfabric_extra_names.py").write_text(EXTRA_PLUGIN, encoding="utf-8")
    info = site / "ibfabric_extra_names-1.0.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: ibfabric-extra-names\nVersion: 1.0\n",
                                   encoding="utf-8")
    (info / "entry_points.txt").write_text("[ibfabric]\nextra-names = ibfabric_extra_names\n", encoding="utf-8")
    (info / "RECORD").write_text("", encoding="utf-8")
    return site
