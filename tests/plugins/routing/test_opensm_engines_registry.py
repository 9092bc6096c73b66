"""ftree, sssp, dfsssp, lash, dnup, dor: registered through their entry points, documented, doctested."""

import doctest
import importlib

import pytest
from routing_cases import random_fabric, rng

from ibfabric.errors import ConfigError
from ibfabric.plugins import PluginSet

#: engine -> (module, function)
ENGINES = {
    "ftree": ("ftree", "compute"),
    "sssp": ("sssp", "compute_sssp"),
    "dfsssp": ("sssp", "compute_dfsssp"),
    "lash": ("lash", "compute"),
    "dnup": ("dnup", "compute"),
    "dor": ("dor", "compute"),
}


@pytest.fixture(scope="module")
def plugins():
    return PluginSet.load()


@pytest.mark.parametrize("name", ENGINES)
def test_registered_through_the_modules_entry_point(plugins, name):
    module, func = ENGINES[name]
    reg = plugins.routing_engines.get(name)
    assert reg.plugin == module and reg.description
    mod = importlib.import_module(f"ibfabric.plugins.routing.{module}")
    assert reg.obj is getattr(mod, func)
    doc = reg.obj.__doc__
    for section in ("Parameters", "Returns", "Raises", "Examples", "Notes", "References"):
        assert f"\n    {section}\n    ---" in doc, f"{name}: no {section} section"


@pytest.mark.parametrize("module", ["ftree", "sssp", "lash", "dnup", "dor", "_layers", "metrics"])
def test_doctests(module):
    mod = importlib.import_module(f"ibfabric.plugins.routing.{module}")
    res = doctest.testmod(mod, optionflags=doctest.ELLIPSIS)
    assert res.failed == 0


@pytest.mark.parametrize("name", ENGINES)
def test_unknown_option_is_a_one_line_config_error(plugins, name):
    with pytest.raises(ConfigError) as exc:
        plugins.routing_engines[name](random_fabric(6, 3, 1, 0), {"bogus": "1"}, rng())
    assert "unknown option 'bogus'" in str(exc.value) and "\n" not in str(exc.value)


@pytest.mark.parametrize("name", ["dfsssp", "lash"])
def test_bad_vls_is_a_config_error(plugins, name):
    with pytest.raises(ConfigError, match="'vls': must be a number of data VLs from 1 to 15"):
        plugins.routing_engines[name](random_fabric(6, 3, 1, 0), {"vls": "16"}, rng())
