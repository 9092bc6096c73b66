"""Write the small intersphinx inventories of docs/_inventories/.

The documentation is built where there is no network (CI reaches the package
registries only), so intersphinx cannot download the numpy, networkx, pluggy
and Python inventories.  This script writes Sphinx inventories (version 2,
zlib-compressed) that hold the objects our pages and signatures name, each
with its real public URL.  Run it after adding an object::

    python docs/make_inventories.py

An object is listed by every name a signature may render it under: its
public name (``numpy.random.Generator``) and the module where it is defined
(``numpy.random._generator.Generator``), which is what autodoc writes for a
resolved annotation.
"""

from __future__ import annotations

import zlib
from pathlib import Path

OUT = Path(__file__).resolve().parent / "_inventories"

#: project -> (name shown in the inventory, version, {(name, domain:role): uri relative to the base URL}).
#: A uri ending in ``#$`` anchors at the object's own name.
INVENTORIES: dict[str, tuple[str, str, dict[tuple[str, str], str]]] = {
    "numpy": ("NumPy", "2", {
        ("numpy.random.Generator", "py:class"): "reference/random/generator.html#numpy.random.Generator",
        ("numpy.random._generator.Generator", "py:class"): "reference/random/generator.html#numpy.random.Generator",
        ("numpy.random.default_rng", "py:function"): "reference/random/generator.html#numpy.random.default_rng",
        ("numpy.random.Generator.random", "py:method"): "reference/random/generated/numpy.random.Generator.random.html#$",
        ("numpy.random.Generator.integers", "py:method"):
            "reference/random/generated/numpy.random.Generator.integers.html#$",
        ("numpy.random.Generator.choice", "py:method"): "reference/random/generated/numpy.random.Generator.choice.html#$",
        ("numpy.random.Generator.exponential", "py:method"):
            "reference/random/generated/numpy.random.Generator.exponential.html#$",
        ("numpy.ndarray", "py:class"): "reference/generated/numpy.ndarray.html#$",
        ("numpy.float64", "py:class"): "reference/arrays.scalars.html#$",
        ("numpy.int64", "py:class"): "reference/arrays.scalars.html#$",
    }),
    "networkx": ("NetworkX", "3", {
        ("networkx.Graph", "py:class"): "reference/classes/graph.html#networkx.Graph",
        ("networkx.classes.graph.Graph", "py:class"): "reference/classes/graph.html#networkx.Graph",
        ("networkx.DiGraph", "py:class"): "reference/classes/digraph.html#networkx.DiGraph",
        ("networkx.classes.digraph.DiGraph", "py:class"): "reference/classes/digraph.html#networkx.DiGraph",
        ("networkx.MultiGraph", "py:class"): "reference/classes/multigraph.html#networkx.MultiGraph",
        ("networkx.classes.multigraph.MultiGraph", "py:class"):
            "reference/classes/multigraph.html#networkx.MultiGraph",
        ("networkx.all_simple_paths", "py:function"):
            "reference/algorithms/generated/networkx.algorithms.simple_paths.all_simple_paths.html#$",
    }),
    "pluggy": ("pluggy", "1", {
        ("pluggy.PluginManager", "py:class"): "api_reference.html#$",
        ("pluggy._manager.PluginManager", "py:class"): "api_reference.html#pluggy.PluginManager",
        ("pluggy.HookimplMarker", "py:class"): "api_reference.html#$",
        ("pluggy._hooks.HookimplMarker", "py:class"): "api_reference.html#pluggy.HookimplMarker",
        ("pluggy.HookspecMarker", "py:class"): "api_reference.html#$",
        ("pluggy._hooks.HookspecMarker", "py:class"): "api_reference.html#pluggy.HookspecMarker",
        ("pluggy.PluginManager.register", "py:method"): "api_reference.html#$",
        ("pluggy.PluginValidationError", "py:exception"): "api_reference.html#$",
    }),
    "python": ("Python", "3", {
        **{(name, "py:class"): "library/functions.html#$" for name in ("int", "float", "bool", "object", "type")},
        **{(name, "py:class"): "library/stdtypes.html#$"
           for name in ("str", "bytes", "list", "tuple", "dict", "set", "frozenset", "range")},
        ("None", "py:data"): "library/constants.html#$",
        **{(name, "py:exception"): "library/exceptions.html#$"
           for name in ("Exception", "ValueError", "TypeError", "KeyError", "RuntimeError", "OSError",
                        "FileNotFoundError", "Warning", "UserWarning")},
        ("pathlib.Path", "py:class"): "library/pathlib.html#$",
        ("os.PathLike", "py:class"): "library/os.html#$",
        ("argparse.ArgumentParser", "py:class"): "library/argparse.html#$",
        ("argparse.Namespace", "py:class"): "library/argparse.html#$",
        ("random.Random", "py:class"): "library/random.html#$",
        ("fractions.Fraction", "py:class"): "library/fractions.html#$",
        ("enum.IntEnum", "py:class"): "library/enum.html#$",
        ("re.Pattern", "py:class"): "library/re.html#$",
        ("typing.Any", "py:data"): "library/typing.html#$",
        **{(f"collections.abc.{name}", "py:class"): "library/collections.abc.html#$"
           for name in ("Callable", "Iterable", "Iterator", "Mapping", "MutableMapping", "Sequence",
                        "Set", "Hashable")},
        ("collections.Counter", "py:class"): "library/collections.html#$",
        ("collections.deque", "py:class"): "library/collections.html#$",
    }),
}


def inventory(project: str, version: str, objects: dict[tuple[str, str], str]) -> bytes:
    """The bytes of a Sphinx inventory (version 2) listing *objects*."""
    header = (f"# Sphinx inventory version 2\n# Project: {project}\n# Version: {version}\n"
              "# The remainder of this file is compressed using zlib.\n")
    lines = "".join(f"{name} {role} 1 {uri} -\n" for (name, role), uri in sorted(objects.items()))
    return header.encode() + zlib.compress(lines.encode())


def main() -> None:
    """Write one ``<name>.inv`` per project into docs/_inventories/."""
    OUT.mkdir(exist_ok=True)
    for name, (project, version, objects) in INVENTORIES.items():
        (OUT / f"{name}.inv").write_bytes(inventory(project, version, objects))
        print(f"{OUT.name}/{name}.inv: {len(objects)} objects")


if __name__ == "__main__":
    main()
