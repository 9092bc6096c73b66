"""The documentation site builds with warnings as errors, and its API reference is complete.

The build is the one CI runs (``sphinx-build -W --keep-going -E -b html``);
the completeness checks read the code and the pages of ``docs/api/`` and do
not need a build: every public module of the documented packages is on an API
page, and every public class, function and method of those modules has a
docstring.
"""

from __future__ import annotations

import argparse
import importlib
import inspect
import pkgutil
import re
import runpy
import subprocess
import sys
import time
import zlib
from pathlib import Path

import pytest

from ibfabric.cli import build_parser
from ibfabric.plugins import hookspecs

DOCS = Path(__file__).resolve().parents[1] / "docs"

#: The packages whose every public module the API reference documents (``ibfabric`` itself: its
#: top-level exports, on docs/api/ibfabric.rst; its modules, on the other pages).
PACKAGES = ["ibfabric", "ibfabric.components", "ibfabric.plugins", "ibfabric.topologies", "ibfabric.ned_like"]

#: Modules documented elsewhere than by an ``automodule``: the command line, whose reference
#: (docs/api/cli.rst) is generated from its argparse parser, every command with its ``--help``.
NOT_AUTOMODULES = ("ibfabric.cli",)


# ------------------------------------------------------------------ the build


@pytest.fixture(scope="module")
def site(tmp_path_factory) -> Path:
    """The site, built as CI builds it: every page read again (-E), any warning an error."""
    out = tmp_path_factory.mktemp("html")
    start = time.perf_counter()
    proc = subprocess.run(
        [sys.executable, "-m", "sphinx", "-W", "--keep-going", "-E", "-q", "-b", "html",
         "-d", str(out / ".doctrees"), str(DOCS), str(out)],
        capture_output=True, text=True)
    elapsed = time.perf_counter() - start
    assert proc.returncode == 0, f"sphinx-build failed ({elapsed:.0f} s):\n{proc.stderr}{proc.stdout}"
    print(f"docs built in {elapsed:.1f} s")
    return out


def test_the_site_builds_with_warnings_as_errors(site):
    assert (site / "index.html").is_file()
    assert (site / "api" / "index.html").is_file()


def test_every_markdown_page_is_on_the_site(site):
    pages = {p.relative_to(DOCS).with_suffix("") for p in DOCS.rglob("*.md") if "_build" not in p.parts}
    assert pages, "no pages"
    for page in pages:
        assert (site / page).with_suffix(".html").is_file(), f"docs/{page}.md is not on the site"


def test_every_command_is_in_the_cli_reference(site):
    page = (site / "api" / "cli.html").read_text(encoding="utf-8")

    def names(parser, prog):
        yield prog
        for action in parser._actions:
            if isinstance(action, argparse._SubParsersAction):
                for name, sub in action.choices.items():
                    yield from names(sub, f"{prog} {name}")

    commands = list(names(build_parser(), "ibfabric"))
    assert len(commands) > 10
    for command in commands:
        assert f"<span class=\"pre\">{command}</span>" in page.replace("</span> <span class=\"pre\">", " "), (
            f"'{command}' has no section in the CLI reference")


def test_every_hook_is_on_the_hook_page(site):
    page = (site / "api" / "hookspecs.html").read_text(encoding="utf-8")
    for name in HOOKS:
        assert f'id="ibfabric.plugins.hookspecs.{name}"' in page, f"hook {name} is not rendered"


def test_links_to_source_files_open_their_api_page(site):
    # docs/plugins.md links to ../plugins/hookspecs.py, which GitHub opens as a file
    page = (site / "plugins.html").read_text(encoding="utf-8")
    assert "api/hookspecs.html#mod-ibfabric-plugins-hookspecs" in page


# ------------------------------------------------------------------ offline: vendored inventories


def test_intersphinx_reads_vendored_inventories_only():
    conf = runpy.run_path(str(DOCS / "conf.py"))
    assert conf["intersphinx_mapping"]
    for name, (url, inventory) in conf["intersphinx_mapping"].items():
        assert url.startswith("https://")
        assert "://" not in str(inventory) and Path(inventory).is_file(), f"{name}: {inventory} is not a local file"


def test_vendored_inventories_are_what_make_inventories_writes():
    make = runpy.run_path(str(DOCS / "make_inventories.py"))
    for name, (project, version, objects) in make["INVENTORIES"].items():
        committed = (DOCS / "_inventories" / f"{name}.inv").read_bytes()
        expected = make["inventory"](project, version, objects)
        head, _, body = committed.partition(b"zlib.\n")
        assert head + b"zlib.\n" == expected[: len(head) + 6], f"{name}.inv: header differs"
        assert zlib.decompress(body) == zlib.decompress(expected[len(head) + 6:]), (
            f"docs/_inventories/{name}.inv is out of date: python docs/make_inventories.py")


# ------------------------------------------------------------------ completeness, without a build

HOOKS = sorted(name for name, obj in vars(hookspecs).items()
               if name.startswith("ibfabric_") and inspect.isfunction(obj))


def api_modules() -> set[str]:
    """Every module an ``automodule`` of docs/api/ documents."""
    found = set()
    for page in (DOCS / "api").glob("*.rst"):
        found |= set(re.findall(r"^\.\. automodule:: (\S+)", page.read_text(encoding="utf-8"), flags=re.M))
    return found


def public_modules() -> list[str]:
    """``ibfabric`` and every module of PACKAGES whose dotted name has no part starting with ``_``.

    Except ``ibfabric.cli`` and its modules (:data:`NOT_AUTOMODULES`): the CLI reference documents them.
    """
    out = ["ibfabric"]
    for name in PACKAGES:
        package = importlib.import_module(name)
        if name not in out:
            out.append(name)
        out += [info.name for info in pkgutil.walk_packages(package.__path__, name + ".")
                if not any(part.startswith("_") for part in info.name.split("."))
                and not any(info.name == cli or info.name.startswith(cli + ".") for cli in NOT_AUTOMODULES)]
    return out


@pytest.mark.parametrize("module", public_modules())
def test_every_public_module_is_in_the_api_reference(module):
    assert module in api_modules(), f"{module} is on no page of docs/api/ (add an automodule)"
    assert inspect.getdoc(importlib.import_module(module)), f"{module} has no docstring"


def test_every_hook_is_on_the_hook_page_source():
    text = (DOCS / "api" / "hookspecs.rst").read_text(encoding="utf-8")
    assert HOOKS
    for name in HOOKS:
        assert f".. autofunction:: {name}\n" in text, f"hook {name} is missing from docs/api/hookspecs.rst"


def public_objects(module_name: str):
    """``(qualified name, object)`` of the public classes, functions and methods of a module.

    Public: named in ``__all__`` where the module has one, else defined in the
    module, and not starting with ``_`` (what autodoc documents).  Methods are
    those a class defines itself; an override inherits the docstring of the
    method it overrides, as autodoc shows it.
    """
    module = importlib.import_module(module_name)
    names = getattr(module, "__all__", None)
    if names is None:
        names = [name for name, obj in vars(module).items()
                 if not name.startswith("_") and getattr(obj, "__module__", None) == module_name]
    for name in names:
        obj = getattr(module, name)
        if not (inspect.isclass(obj) or inspect.isfunction(obj)):
            continue
        yield f"{module_name}.{name}", obj
        if inspect.isclass(obj):
            yield from _methods(f"{module_name}.{name}", obj)


def _methods(qualname: str, cls: type):
    for name, attr in vars(cls).items():
        if name.startswith("_"):
            continue
        if isinstance(attr, (staticmethod, classmethod)):
            yield f"{qualname}.{name}", getattr(cls, name)
        elif inspect.isfunction(attr) or isinstance(attr, property):
            yield f"{qualname}.{name}", attr if isinstance(attr, property) else getattr(cls, name)
        elif inspect.isclass(attr) and attr.__qualname__.startswith(cls.__qualname__ + "."):
            yield f"{qualname}.{name}", attr
            yield from _methods(f"{qualname}.{name}", attr)


def _has_docstring(obj) -> bool:
    if inspect.isclass(obj):
        return bool(obj.__doc__ and obj.__doc__.strip())  # not the docstring of a base class
    return bool(inspect.getdoc(obj))


@pytest.mark.parametrize("module", sorted(api_modules()))
def test_every_public_object_has_a_docstring(module):
    missing = [name for name, obj in public_objects(module) if not _has_docstring(obj)]
    assert not missing, f"no docstring: {', '.join(missing)}"
