"""The reference pages stay complete: every traffic-pattern option and every summary key is documented."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

import ibfabric
from ibfabric.measure import TRAFFIC_CLASSES
from ibfabric.plugins.manager import PluginSet
from ibfabric.qos_metrics import DELAY_LABELS, JITTER_LABELS

DOCS = Path(__file__).resolve().parents[1] / "docs"


def documented(page: str) -> set[str]:
    """Every `code span` of a page."""
    return set(re.findall(r"`([^`\n]+)`", (DOCS / page).read_text(encoding="utf-8")))


# ------------------------------------------------------------------ traffic patterns


def sections(page: str) -> dict[str, str]:
    """``### `name` `` heading -> the text up to the next heading."""
    text = (DOCS / page).read_text(encoding="utf-8")
    parts = re.split(r"^#{2,3} ", text, flags=re.M)
    out = {}
    for part in parts[1:]:
        head, _, body = part.partition("\n")
        m = re.fullmatch(r"`([^`]+)`", head.strip())
        if m:
            out[m.group(1)] = body
    return out


BUILTIN_PATTERNS = [reg for reg in PluginSet.load().traffic_patterns if reg.builtin]


def test_the_built_in_patterns_are_found():
    assert {reg.name for reg in BUILTIN_PATTERNS} >= {"uniform", "hot-spot", "bit-reversal", "transpose", "shuffle"}


@pytest.mark.parametrize("reg", BUILTIN_PATTERNS, ids=lambda r: r.name)
def test_every_traffic_pattern_and_option_is_documented(reg):
    pages = sections("traffic.md")
    assert reg.name in pages, f"docs/traffic.md has no '### `{reg.name}`' section"
    body = pages[reg.name]
    options = tuple(getattr(reg.obj, "option_names", ()))
    for option in options:
        assert re.search(rf"^\| `{re.escape(option)}` \|[^|]+\|[^|]+\|", body, flags=re.M), (
            f"option '{option}' of traffic pattern '{reg.name}' has no row (meaning, default) in docs/traffic.md")
    if not options:
        assert "Options: none." in body


def test_traffic_page_is_linked():
    assert "docs/traffic.md" in (DOCS.parent / "README.md").read_text(encoding="utf-8")
    assert "traffic.md" in (DOCS / "plugins.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ summary keys

#: Containers whose keys are data (SLs, group names, reasons, port paths...), and the placeholder
#: docs/measurements.md writes for them.
DATA_KEYS = {
    "by_sl": "<sl>", "by_class": "<class>", "drops_by_reason": "<reason>", "multicast.groups": "<group>",
    "qos.per_sl": "<sl>", "qos.admission.per_sl": "<sl>", "qos.admission.rejections": "<reason>",
    "qos.options": "<option>", "subnet_manager.smps_lost_by_reason": "<reason>",
    "assimilations[].discarded": "<reason>", "assimilations[].discarded_until_active": "<reason>",
    "qos.utilisation.host_interfaces.ports": "<port>", "qos.utilisation.switch_ports.ports": "<port>",
    "versions.plugins": "<distribution>", "congestion_control.marking_ports": "<port>", "flows.roles": "<role>",
    "flows.per_flow": "<flow>",
}


def key_paths(obj, path: str = "", out: set | None = None) -> set[str]:
    """The documented form of every key of a summary: dotted paths, ``[]`` for list entries, data keys
    as their placeholder, the keys of latency blocks as ``<latency>.key``, of ``delay_under`` and
    ``jitter`` as ``<bound>`` and ``<interval>`` (listed once on the page)."""
    out = set() if out is None else out
    if isinstance(obj, dict):
        last = path.rsplit(".", 1)[-1]
        for k, v in obj.items():
            if path in DATA_KEYS:
                p = f"{path}.{DATA_KEYS[path]}"
            elif last.endswith("latency_ns"):
                p = f"<latency>.{k}"
            elif last == "delay_under":
                p = "delay_under.<bound>"
                assert k in DELAY_LABELS
            elif last == "jitter":
                p = "jitter.<interval>"
                assert k in JITTER_LABELS
            else:
                p = f"{path}.{k}" if path else k
            out.add(p)
            key_paths(v, p, out)
    elif isinstance(obj, list):
        for v in obj:
            if isinstance(v, dict):
                key_paths(v, f"{path}[]", out)
    return out


def plain():
    return ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.2",
                                                         "**.routing": "updn"}, warmup="5us").run("30us")


def multicast_realtime():
    sim = ibfabric.load("kim2007_15", overrides={
        "**.multicastGroups": "g1: 0 5 senders=*; g2: 3 9 11 14 senders=*", "**.realtimeMulticast": "0.5",
        "**.realtimeLoad": "0.3", "**.outputBufferSize": "0B", "**.traffic": "uniform", "**.load": "0.1",
        "**.controlInterval": "20us"}, warmup="5us")
    return sim.run("100us")


def scenario():
    sim = ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.2",
                                                        "**.routing": "updn"}, warmup="5us")
    sim.fail_link("sw3", "sw8", at="10us")
    return sim.run("30us")


def dynamic_sm():
    sim = ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.1",
                                                        "**.routing": "hybrid", "**.sm.dynamic": "true"},
                        warmup="5us")
    sim.fail_link("sw2", "sw6", at="20us")
    return sim.run("1500us")  # long enough for both phases of the hybrid assimilation


def qos():
    from ibfabric.components.qos.cbr import QosNetwork

    sim = ibfabric.load("irregular16", seed=1, warmup="20us",
                        overrides={"**.numVLs": "10", "**.dataRate": "2.5Gbps", "**.mtu": "256B"})
    q = QosNetwork(sim, policy="alfaro2001")
    q.establish(40, packet_size=256, retries=10)
    q.start_traffic(stop=80e3)
    return sim.run("100us")


def congestion_control():
    sim = ibfabric.load("irregular16", seed=1, warmup="20us", overrides={
        "**.traffic": "hot-spot", "**.trafficOptions": "contributors=6 node=h1_1", "**.load": "0.6",
        "**.sm.congestionControl": "true"})
    return sim.run("60us")


def workload():
    from ibfabric.components.hca.workload import Workload
    from ibfabric.plugins.workloads import BUILTINS, build_schedule

    sim = ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.1",
                                                        "**.routing": "updn"})
    schedule = build_schedule("allreduce-ring", BUILTINS["allreduce-ring"][0], 4, 8192, reps=2)
    Workload(sim, schedule, placement="random", stop=True, ideal=True)
    return sim.run("1ms")


@pytest.fixture(scope="module")
def summaries():
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return {f.__name__: f() for f in (plain, multicast_realtime, scenario, dynamic_sm, qos, congestion_control,
                                          workload)}


def test_the_representative_runs_have_their_sections(summaries):
    assert {"multicast", "realtime"} <= set(summaries["multicast_realtime"])
    assert summaries["scenario"]["scenario"]
    assert summaries["dynamic_sm"]["assimilations"][0]["phase2"] is not None
    assert summaries["qos"]["qos"]["per_sl"]
    assert summaries["congestion_control"]["congestion_control"]["becn_received"] > 0
    assert summaries["congestion_control"]["flows"]["hot_spot"]
    assert summaries["workload"]["workload"]["complete"]


@pytest.mark.parametrize("run", ["plain", "multicast_realtime", "scenario", "dynamic_sm", "qos", "congestion_control",
                                 "workload"])
def test_every_summary_key_is_documented(summaries, run):
    page = documented("measurements.md")
    missing = sorted(p for p in key_paths(summaries[run]) if p not in page)
    assert not missing, f"docs/measurements.md does not document {missing}"


def test_placeholder_values_are_listed():
    page = (DOCS / "measurements.md").read_text(encoding="utf-8")
    for name in (*TRAFFIC_CLASSES, *DELAY_LABELS, *JITTER_LABELS):
        assert f"`{name}`" in page


def test_measurements_page_is_linked():
    assert "docs/measurements.md" in (DOCS.parent / "README.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ module parameters


def shipped_params():
    from ibfabric.docgen import shipped_types

    return [(eff.decl.name, spec.decl) for eff, _, _ in shipped_types()[1] for spec in eff.params.values()]


#: Parameters whose name says they are a physical quantity: times, sizes, rates, lengths.
QUANTITY_NAME = re.compile(r"(delay|size|interval|timeout|time|step|rate|length|mtu|bandwidth)$", re.I)


def test_the_shipped_types_are_found():
    from ibfabric.docgen import shipped_types

    names = {eff.decl.name for eff, _, _ in shipped_types()[1]}
    assert {"Switch", "HCA", "SubnetManager", "Link", "DelayChannel", "DatarateChannel"} <= names
    assert len(shipped_params()) > 80


def test_parameters_page_is_up_to_date():
    from ibfabric.docgen import parameters_page

    committed = (DOCS / "parameters.md").read_text(encoding="utf-8")
    assert committed == parameters_page(), (
        "docs/parameters.md is out of date: python -m ibfabric.docgen parameters > docs/parameters.md")


@pytest.mark.parametrize("owner, decl", shipped_params(), ids=lambda x: getattr(x, "name", x))
def test_every_parameter_is_documented(owner, decl):
    assert decl.doc.strip(), f"parameter '{decl.name}' of {owner} ({decl.loc}) has no doc comment"
    if decl.type in ("int", "double") and QUANTITY_NAME.search(decl.name):
        assert decl.unit, f"parameter '{decl.name}' of {owner} ({decl.loc}) is a physical quantity without @unit"


def test_parameters_page_is_linked():
    assert "docs/parameters.md" in (DOCS.parent / "README.md").read_text(encoding="utf-8")


# ------------------------------------------------------------------ errors and warnings

#: The packages whose modules define ibfabric's exceptions and warnings: those of the API reference
#: (the package-dir mapping of pyproject.toml puts components, plugins, ned_like and topologies outside
#: ibfabric/)
from .test_docs_build import PACKAGES  # noqa: E402


def error_classes() -> list[type]:
    """Every public exception and warning class defined in an ibfabric module."""
    import importlib
    import inspect
    import pkgutil

    found = {}
    for name in PACKAGES:
        pkg = importlib.import_module(name)
        modules = [name] + [m.name for m in pkgutil.walk_packages(pkg.__path__, name + ".")
                            if not m.name.endswith("__main__")]
        for modname in modules:
            mod = importlib.import_module(modname)
            for cname, obj in vars(mod).items():
                if (inspect.isclass(obj) and issubclass(obj, (Exception, Warning)) and obj.__module__ == modname
                        and not cname.startswith("_")):
                    found[f"{modname}.{cname}"] = obj
    return [found[k] for k in sorted(found)]


def error_sections() -> dict[str, str]:
    """``### `Name` `` heading of docs/errors.md -> its text up to the next heading of level 2 or 3."""
    text = (DOCS / "errors.md").read_text(encoding="utf-8")
    out = {}
    for part in re.split(r"^#{2,3} ", text, flags=re.M)[1:]:
        head, _, body = part.partition("\n")
        m = re.fullmatch(r"`(\w+)`", head.strip())
        if m:
            out[m.group(1)] = body
    return out


def test_the_error_classes_are_found():
    names = {c.__name__ for c in error_classes()}
    assert {"ConfigError", "PluginError", "TopologyError", "DeadlockError", "NedError", "UnknownName",
            "ExperimentError", "IbfabricWarning"} <= names


@pytest.mark.parametrize("cls", error_classes(), ids=lambda c: c.__name__)
def test_every_error_and_warning_has_a_section(cls):
    sections = error_sections()
    assert cls.__name__ in sections, f"docs/errors.md has no '### `{cls.__name__}`' section ({cls.__module__})"
    body = sections[cls.__name__]
    assert "```" in body, f"the section of {cls.__name__} in docs/errors.md shows no example"
    assert f"`{cls.__module__}" in body or f"`{cls.__module__.rsplit('.', 1)[0]}" in body, (
        f"the section of {cls.__name__} in docs/errors.md does not say where it is defined")


def test_warning_messages_are_the_real_ones():
    import warnings

    from ibfabric.checks import result_warnings

    page = (DOCS / "errors.md").read_text(encoding="utf-8")
    fixed = result_warnings(None, {"window_ns": 1.0, "saturated": True, "deadlock": None, "conservation_ok": False})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        sim = ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.2",
                                                            "**.routing": "minhop"}, warmup="20us")
        sim.run("10us")
    assert len(fixed) == 2 and len(sim.warnings) == 2  # a routing cycle, and the empty window
    for message in fixed + sim.warnings:
        assert f"ibfabric: warning: {message}\n" in page, f"docs/errors.md does not show {message!r}"


def test_errors_page_is_linked():
    assert "docs/errors.md" in (DOCS.parent / "README.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("text", ["numPorts + 1", "2 * (a + b) - c % 3", "-(x + 1)", "a ? 1 : b ? 2 : 3",
                                  "x > 0 && !(y || z)", "2 ^ (n - 1)", "min(a, 4096B)", "sw[index].lid",
                                  "sizeof(port) + this.n", '"fifo" + string(5ns/m)'])
def test_defaults_are_written_back_as_ned(text):
    from ibfabric.docgen import expr_text
    from ibfabric.ned_like import parse_expression

    assert expr_text(parse_expression(text)) == text


# ------------------------------------------------------------------ progress of a run (issue 35, item 9)


def test_progress_is_documented_where_python_users_look():
    import inspect

    from ibfabric.simulation import Simulation

    page = (DOCS / "api" / "simulation.rst").read_text(encoding="utf-8")
    for method in (Simulation.run, Simulation.run_until):
        for name, p in inspect.signature(method).parameters.items():
            if p.kind is p.KEYWORD_ONLY:  # on the page, or in the docstring autodoc puts there
                text = page + (method.__doc__ or "")
                assert f"{name}=" in text or f"*{name}*" in text or f"``{name}``" in text, \
                    f"{method.__name__}({name}=) is documented neither on simulation.rst nor in its docstring"
    assert "progress=True" in page and "progress(done_ns, span_ns)" in page
    readme = (DOCS.parent / "README.md").read_text(encoding="utf-8")
    python = readme.split("## In Python", 1)[1].split("\n## ", 1)[0]
    assert "progress=True" in python


def test_progress_is_reported_as_the_page_says():
    calls = []
    sim = ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.1"}, warmup="2us")
    with_progress = sim.run("20us", progress=lambda done, span: calls.append((done, span)))
    assert len(calls) == 201 and calls[-1] == (20000.0, 20000.0) and all(s == 20000.0 for _, s in calls)
    assert [d for d, _ in calls] == sorted(d for d, _ in calls)
    plain = ibfabric.load("bermudez2006_fig1", overrides={"**.traffic": "uniform", "**.load": "0.1"},
                          warmup="2us").run("20us")
    keys = ("packets_delivered", "latency_ns", "accepted_load")
    assert {k: with_progress[k] for k in keys} == {k: plain[k] for k in keys}
