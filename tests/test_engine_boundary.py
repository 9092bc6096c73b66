"""We own our code only (DESIGN §3a): ibfabric reads no `_private` attribute of salabim, attrs, numpy,
pluggy or the standard library's modules, assigns no attribute of another package, and swaps no class."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("ibfabric", "components", "plugins", "ned_like", "topologies", "bench", "experiments")
#: names under which ibfabric's code refers to other packages and to salabim's objects
FOREIGN = {"salabim", "attr", "attrs", "numpy", "np", "pluggy", "builtins", "sys", "inspect", "env"}


def sources():
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            yield path


def _root_name(node: ast.AST) -> str | None:
    while isinstance(node, ast.Attribute):
        node = node.value
    if isinstance(node, ast.Call):
        return _root_name(node.func)
    return node.id if isinstance(node, ast.Name) else None


def _findings(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    where = path.relative_to(ROOT) if path.is_relative_to(ROOT) else path.name
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            name = node.attr
            private = name.startswith("_") and not (name.startswith("__") and name.endswith("__"))
            root = _root_name(node.value)
            # self.env._x, sim.env._x, salabim.x._y, np._x ...: a private attribute of something not ours
            chain = ast.unparse(node.value)
            if private and (root in FOREIGN or chain.split(".")[-1] == "env"):
                out.append(f"{where}:{node.lineno}: reads {chain}.{name}")
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                if isinstance(t, ast.Attribute):
                    root = _root_name(t.value)
                    if root in ("salabim", "attr", "attrs", "numpy", "np", "pluggy", "builtins", "sys", "inspect"):
                        out.append(f"{where}:{node.lineno}: assigns {ast.unparse(t)}")
                    if t.attr == "__class__":
                        out.append(f"{where}:{node.lineno}: swaps a class ({ast.unparse(t)} = ...)")
    return out


def test_the_scan_finds_what_it_looks_for(tmp_path):
    bad = tmp_path / "bad.py"
    bad.write_text("x = self.env._now\nsalabim.salabim._f = 1\ntx.__class__ = Other\ny = np.core._multiarray\n"
                   "z = msg._handle\n")
    found = _findings(bad)
    assert len(found) == 5 and not any("msg._handle" in f for f in found), found


@pytest.mark.parametrize("path", list(sources()), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_private_attribute_of_another_package_no_patch_no_class_swap(path):
    assert not _findings(path)
