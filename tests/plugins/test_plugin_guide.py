"""The plugin author's guide shows the demo plugin package's real code, and documents every role and fixture.

docs/plugin-guide.md is read on GitHub and on the site, so its examples are
plain code blocks rather than include directives; these tests keep them
identical to the package that the other plugin tests install and run
(tests/data/demo_plugin), in both directions.
"""

from __future__ import annotations

import ast
import doctest
import inspect
import re
from pathlib import Path

import pytest

from ibfabric.plugins import ROLES, PluginSet

from .conftest import DEMO

ROOT = Path(__file__).resolve().parents[2]
GUIDE = ROOT / "docs" / "plugin-guide.md"
REFERENCE = ROOT / "docs" / "plugins.md"
TESTING = ROOT / "ibfabric" / "testing.py"


def code_blocks(lang: str) -> list[str]:
    """The ```lang fenced blocks of the guide, without their fences."""
    text = GUIDE.read_text(encoding="utf-8")
    return [m.group(1) for m in re.finditer(rf"^```{lang}\n(.*?)\n```$", text, flags=re.M | re.S)]


def package_sources() -> dict[str, str]:
    """Path (relative to the demo package) -> text, for its modules and its tests."""
    files = sorted(DEMO.glob("ibfabric_demo/*.py")) + sorted(DEMO.glob("tests/*.py"))
    return {str(f.relative_to(DEMO)): f.read_text(encoding="utf-8") for f in files}


@pytest.fixture
def demo_module(monkeypatch):
    """The demo package imported from its source tree (no installation needed to read it)."""
    monkeypatch.syspath_prepend(str(DEMO))
    import ibfabric_demo

    return ibfabric_demo


class TestExamplesAreThePackage:
    def test_every_python_block_is_a_piece_of_the_package(self):
        sources = package_sources()
        blocks = code_blocks("python")
        assert len(blocks) >= 10
        for block in blocks:
            where = [path for path, text in sources.items() if block in text]
            assert where, f"this block of docs/plugin-guide.md is in no file of {DEMO}:\n{block[:300]}"

    def test_the_ned_example_is_the_one_the_package_tests(self):
        (block,) = code_blocks("ned")
        assert block in package_sources()["tests/test_demo.py"]

    def test_the_toml_block_is_the_packages_pyproject(self):
        (block,) = code_blocks("toml")
        assert block in (DEMO / "pyproject.toml").read_text(encoding="utf-8")

    def test_every_implementation_the_package_registers_is_shown_in_full(self, demo_module):
        code = "\n".join(code_blocks("python"))
        plugins = PluginSet.load(plugins=[demo_module], entry_points=False)
        shown = []
        for attr in ROLES:
            for reg in getattr(plugins, attr):
                if reg.plugin == demo_module.__name__:
                    source = inspect.getsource(reg.obj)
                    assert source in code, f"{reg.role} '{reg.name}' ({reg.obj.__qualname__}) is not shown in full"
                    shown.append(reg.role)
        # one implementation per role, but multicast routing (the guide points to the built-in ones)
        assert set(shown) == {role for _, role in ROLES.values()} - {"multicast routing engine"}

    def test_the_interactive_example_runs(self, demo_site, monkeypatch):
        monkeypatch.syspath_prepend(str(demo_site))  # the installed package, entry point included
        (block,) = code_blocks("pycon")
        test = doctest.DocTestParser().get_doctest(block, {}, "plugin-guide", str(GUIDE), 0)
        runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
        runner.run(test)
        assert runner.summarize(verbose=False).failed == 0


class TestEverythingIsDocumented:
    def headings(self) -> list[str]:
        return re.findall(r"^## (.+)$", GUIDE.read_text(encoding="utf-8"), flags=re.M)

    @pytest.mark.parametrize("role", sorted(role for _, role in ROLES.values()))
    def test_every_role_has_a_section(self, role):
        plural = role[:-1] + "ies" if role.endswith("y") else role + "s"
        assert plural.lower() in [h.lower() for h in self.headings()] + [
            h.lower() for h in re.findall(r"^### (.+)$", GUIDE.read_text(encoding="utf-8"), flags=re.M)]

    def test_every_fixture_is_documented_and_listed(self):
        tree = ast.parse(TESTING.read_text(encoding="utf-8"))
        fixtures = [f for f in tree.body if isinstance(f, ast.FunctionDef)
                    and any("fixture" in ast.unparse(d) for d in f.decorator_list)]
        assert len(fixtures) >= 8
        guide = GUIDE.read_text(encoding="utf-8")
        for f in fixtures:
            assert ast.get_docstring(f), f"fixture '{f.name}' has no docstring"
            assert re.search(rf"^\| `{f.name}` \|", guide, flags=re.M), f"fixture '{f.name}' is not in the guide's table"

    def test_the_guide_and_the_reference_link_each_other(self):
        assert "](plugins.md)" in GUIDE.read_text(encoding="utf-8")
        assert "](plugin-guide.md)" in REFERENCE.read_text(encoding="utf-8")
