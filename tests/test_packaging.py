"""Packaging: one import namespace, every subpackage listed, the console script."""

from __future__ import annotations

import importlib
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def pyproject():
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def test_every_subpackage_is_listed():
    tool = pyproject()["tool"]["setuptools"]
    listed = set(tool["packages"])
    mapping = tool["package-dir"]
    found = set()
    for name, directory in mapping.items():
        base = ROOT / directory
        for init in base.rglob("__init__.py"):
            rel = init.parent.relative_to(base)
            if "__pycache__" in rel.parts:
                continue
            found.add(".".join([name, *rel.parts]) if rel.parts else name)
    assert found <= listed, f"subpackages missing from [tool.setuptools] packages: {sorted(found - listed)}"
    assert listed <= found, f"listed packages that do not exist: {sorted(listed - found)}"


def test_subpackages_import_under_one_namespace():
    for name in ("ibfabric.components", "ibfabric.plugins", "ibfabric.ned_like", "ibfabric.topologies"):
        mod = importlib.import_module(name)
        assert mod.__name__ == name
    for bare in ("components", "plugins", "ned_like", "topologies"):
        assert bare not in pyproject()["tool"]["setuptools"]["packages"]


def test_entry_points_name_importable_plugins():
    eps = pyproject()["project"]["entry-points"]["ibfabric"]
    for name, target in eps.items():
        importlib.import_module(target)


def test_console_script_is_installed():
    # the script of this interpreter's environment, whatever PATH says
    import subprocess
    import sys
    import sysconfig
    from importlib.metadata import entry_points

    assert pyproject()["project"]["scripts"]["ibfabric"] == "ibfabric.cli:main"
    (ep,) = [e for e in entry_points(group="console_scripts") if e.name == "ibfabric"]
    assert ep.value == "ibfabric.cli:main"
    script = Path(sysconfig.get_path("scripts")) / ("ibfabric.exe" if sys.platform == "win32" else "ibfabric")
    assert script.exists()
    proc = subprocess.run([str(script), "--version"], capture_output=True, text=True, env={"PATH": ""})
    assert proc.returncode == 0 and proc.stdout.startswith("ibfabric ")


def test_shipped_data_files_are_package_data():
    data = pyproject()["tool"]["setuptools"]["package-data"]
    assert "*.ned" in data["ibfabric.components"]
    assert "*.ned" in data["ibfabric.topologies"]
    assert "*.lark" in data["ibfabric.ned_like"]
