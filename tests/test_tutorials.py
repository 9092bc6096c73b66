"""The tutorials in docs/tutorials/ run, and their pages show what their scripts do.

Each tutorial is a page ``NN_name.md`` and a script ``NN_name.py`` beside it.  The script runs here
in a temporary directory (which it is given as its output directory), and:

* every ``python``, ``ned`` and ``toml`` block of the page is a verbatim part of the script, in the
  page's order, so the page cannot drift from the code that runs;
* every ``$ ibfabric ...`` command of the page is run by the script (as ``sh("ibfabric ...")``);
* every line of output the page shows (``console`` blocks after a command, ``text`` blocks) is a
  line the script printed (``...`` marks lines left out);
* and each tutorial's outcome is checked for what it claims (below the generic tests).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
TUTORIALS = ROOT / "docs" / "tutorials"
SCRIPTS = sorted(TUTORIALS.glob("[0-9][0-9]_*.py"))
STEMS = [p.stem for p in SCRIPTS]

FENCE = re.compile(r"^(`{3,})([^\n`]*)\n(.*?)^\1\s*$", re.M | re.S)


def blocks(page: Path) -> list[tuple[str, str]]:
    """``(info string, text)`` of every fenced block of a Markdown page, in order."""
    return [(m.group(2).strip(), m.group(3)) for m in FENCE.finditer(page.read_text(encoding="utf-8"))]


_RUNS: dict[str, tuple[subprocess.CompletedProcess, Path, float]] = {}


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """``run(stem)`` -> (completed process, its output directory, wall seconds); each script runs once."""

    def _run(stem: str):
        if stem not in _RUNS:
            cwd = tmp_path_factory.mktemp(stem)
            out = cwd / "out"
            env = dict(os.environ, MPLBACKEND="Agg", PYTHONWARNINGS="ignore")
            t0 = time.perf_counter()
            proc = subprocess.run([sys.executable, str(TUTORIALS / f"{stem}.py"), str(out)], cwd=cwd, env=env,
                                  capture_output=True, text=True, timeout=300)
            _RUNS[stem] = (proc, out, time.perf_counter() - t0)
            assert proc.returncode == 0, f"{stem}.py failed:\n{proc.stderr[-3000:]}"
            assert sorted(p.name for p in cwd.iterdir()) == ["out"], "the script wrote outside its output directory"
        return _RUNS[stem]

    return _run


def test_there_are_five_tutorials_and_an_index():
    assert len(SCRIPTS) == 5, STEMS
    index = (TUTORIALS / "index.md").read_text(encoding="utf-8")
    for stem in STEMS:
        assert (TUTORIALS / f"{stem}.md").exists(), f"{stem}.py has no page"
        assert f"({stem}.md)" in index, f"index.md does not link {stem}.md"


# ------------------------------------------------------------------ pages against scripts


def sources(stem: str) -> dict[str, str]:
    """The script of a tutorial and the files of its package directory ``NN_name/``, if it has one."""
    out = {f"{stem}.py": (TUTORIALS / f"{stem}.py").read_text(encoding="utf-8")}
    if (TUTORIALS / stem).is_dir():
        for p in sorted((TUTORIALS / stem).iterdir()):
            if p.is_file() and p.suffix in (".py", ".toml"):
                out[f"{stem}/{p.name}"] = p.read_text(encoding="utf-8")
    return out


@pytest.mark.parametrize("stem", STEMS)
def test_the_page_shows_the_scripts_code_in_order(stem):
    files = sources(stem)
    at = dict.fromkeys(files, 0)
    shown = 0
    for info, text in blocks(TUTORIALS / f"{stem}.md"):
        if info.split()[:1] in (["python"], ["ned"], ["toml"]):
            hits = [name for name, code in files.items() if code.find(text, at[name]) >= 0]
            assert hits, (f"this {info} block of {stem}.md is not in {', '.join(files)}"
                          f"{' after the previous one' if any(text in c for c in files.values()) else ''}:\n{text}")
            at[hits[0]] = files[hits[0]].find(text, at[hits[0]]) + len(text)
            shown += 1
    assert shown >= 2


def commands_and_output(stem: str) -> tuple[list[str], list[str]]:
    """The ``$ ibfabric`` commands of a page, and the output lines it shows."""
    commands, lines = [], []
    for info, text in blocks(TUTORIALS / f"{stem}.md"):
        if info == "console":
            after_command = False
            for line in text.splitlines():
                if line.startswith("$ "):
                    after_command = line.startswith("$ ibfabric ")
                    if after_command:
                        commands.append(line[2:].split("  #")[0].strip())
                elif after_command:
                    lines.append(line)
        elif info == "text":
            lines.extend(text.splitlines())
    return commands, [ln.strip() for ln in lines if ln.strip() and ln.strip() != "..."]


@pytest.mark.parametrize("stem", STEMS)
def test_the_pages_commands_are_the_scripts(stem):
    script = (TUTORIALS / f"{stem}.py").read_text(encoding="utf-8")
    commands, _ = commands_and_output(stem)
    for command in commands:
        assert re.search(rf"""\bsh\((["']){re.escape(command)}\1""", script), f"{stem}.py does not run: {command}"


@pytest.mark.parametrize("stem", STEMS)
def test_the_output_shown_is_the_output(stem, run):
    proc, _, _ = run(stem)
    printed = {ln.strip() for ln in proc.stdout.splitlines()}
    _, lines = commands_and_output(stem)
    assert lines
    missing = [ln for ln in lines if ln not in printed]
    assert not missing, f"{stem}.md shows lines {stem}.py does not print:\n" + "\n".join(missing[:10])


@pytest.mark.parametrize("page", sorted(TUTORIALS.glob("*.md")), ids=lambda p: p.name)
def test_links_resolve_and_headings_are_in_order(page):
    text = FENCE.sub("", page.read_text(encoding="utf-8"))
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        assert (page.parent / target.split("#")[0]).exists(), f"{page.name}: broken link {target}"
    levels = [len(m.group(1)) for m in re.finditer(r"^(#+) ", text, flags=re.M)]
    assert levels[:1] == [1] and levels.count(1) == 1, f"{page.name}: one '# title' first"
    assert all(b <= a + 1 for a, b in zip(levels, levels[1:])), f"{page.name}: a heading level is skipped"


def test_all_tutorials_run_in_about_a_minute(run):
    total = sum(run(stem)[2] for stem in STEMS)  # about 25 s on an idle 2-core machine
    assert total < 120, {stem: round(_RUNS[stem][2], 1) for stem in STEMS}


# ------------------------------------------------------------------ what each tutorial shows


def test_01_the_composed_pod_behaves_as_the_page_explains(run):
    proc, out, _ = run("01_compose_in_ned")
    assert (out / "pod.ned").read_text().startswith("// pod.ned")
    rows = re.findall(r"^\s+(\d+)\s+(\d+)\s+([\d.]+)\s+([\d.]+) ns$", proc.stdout, flags=re.M)
    assert [(int(r), int(h)) for r, h, _, _ in rows] == [(2, 8), (4, 16), (8, 32)]
    for racks, hosts, hops, _ in rows:
        # 3 of a host's other hosts share its rack (2 links away), the rest are 4 links away
        same = 3 / (int(hosts) - 1)
        assert float(hops) == pytest.approx(2 * same + 4 * (1 - same), abs=0.05)
    latencies = [float(r[3]) for r in rows]
    assert latencies == sorted(latencies)
    summary = json.loads((out / "run8" / "summary.json").read_text())
    assert summary["hosts"] == 32 and summary["switches"] == 10
    assert summary["accepted_load"] == pytest.approx(summary["offered_load"], rel=0.05)
    assert not summary["saturated"] and summary["conservation_ok"] and summary["packets_dropped"] == 0
    # the command line and Python give the same run
    assert f"{summary['latency_ns']['mean']:9.1f} ns" in proc.stdout


def test_02_every_engine_passes_the_route_check_and_lash_saturates(run):
    proc, out, _ = run("02_import_a_cluster")
    assert (out / "cluster.topo").exists()
    assert "acyclic (deadlock-free)" in proc.stdout and "unreachable:          0" in proc.stdout
    assert "ibfabric: error: routing engine 'ftree': not a fat-tree" in proc.stdout
    assert "give it 'numVLs' >= 8" in proc.stdout
    rows = {m[0]: m[1:] for m in re.findall(
        r"^(\w+)\s+(ok|FAILS)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+([\d.]+) ns\s+([\d.]+) ns\s+([\d.]+)\s+([\d.]+)$",
        proc.stdout, flags=re.M)}
    assert list(rows) == ["minhop", "updn", "dnup", "sssp", "dfsssp", "lash"]
    assert all(r[0] == "ok" for r in rows.values()), rows
    assert len({r[1] for r in rows.values()}) == 1  # the same (shortest) mean route length
    busiest = {e: int(r[3]) for e, r in rows.items()}
    assert busiest["sssp"] == min(busiest.values()) and busiest["lash"] == max(busiest.values())
    for engine, r in rows.items():
        offered, accepted = float(r[6]), float(r[7])
        if engine == "lash":  # its busiest link saturates at 10 % load
            assert accepted < 0.85 * offered
            assert float(r[4]) > 5 * float(rows["sssp"][4])
        else:
            assert accepted == pytest.approx(offered, rel=0.05)


def test_03_accepted_load_follows_offered_load_until_saturation(run):
    import csv

    proc, out, _ = run("03_load_sweep")
    table: dict[tuple[str, float], dict[str, float]] = {}
    with open(out / "sweep.csv", newline="") as f:
        for r in csv.DictReader(f):
            assert r["n"] == "1"  # one repetition
            table.setdefault((r["routing"], float(r["load"])), {})[r["statistic"]] = float(r["mean"])
    assert {routing for routing, _ in table} == {"updn", "dr"}
    for routing in ("updn", "dr"):
        points = sorted((load, v) for (rt, load), v in table.items() if rt == routing)
        assert len(points) == 6
        below = [v for load, v in points if load <= 0.5]
        accepted = [v["accepted_load"] for v in below]
        assert accepted == sorted(accepted)  # rises with offered load below saturation ...
        for v in below:  # ... and equals it
            assert v["accepted_load"] == pytest.approx(v["offered_load"], rel=0.05)
            assert not v["saturated"]
        top = points[-1][1]
        assert top["saturated"] == 1 and top["accepted_load"] < 0.85 * top["offered_load"]
        assert top["latency_mean"] > 10 * points[0][1]["latency_mean"]
    for name in ("latency.png", "accepted.png"):
        data = (out / name).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10_000


def test_04_losses_stop_once_the_dynamic_subnet_manager_has_recovered(run):
    proc, out, _ = run("04_scripted_failure")
    static_part, dynamic_part = proc.stdout.split("stopped by the condition: True")
    row = re.compile(r"^\s*(\d+) -\s+(\d+)\s+(\d+)\s+(.*)$", re.M)
    static = [(int(a), int(b), int(n), lost) for a, b, n, lost in row.findall(static_part)]
    dynamic = [(int(a), int(b), int(n), lost) for a, b, n, lost in row.findall(dynamic_part)]
    assert len(static) == len(dynamic) == 14
    # nothing is lost before the failure at 200 us; the static SM loses packets to the end
    assert all(lost == "-" for a, _, _, lost in static + dynamic if a < 200)
    assert all(lost != "-" for a, _, _, lost in static if a >= 200)
    summary = json.loads((out / "dynamic-summary.json").read_text())
    a = summary["assimilations"][0]
    assert a["status"] == "done" and a["trigger"] == "trap"
    assert a["change_ns"] == 200_000
    assert a["change_ns"] < a["detected_ns"] <= a["explored_ns"] <= a["computed_ns"] <= a["active_ns"]
    assert a["phase2"]["distributed_ns"] <= summary["sim_time_ns"]
    # data packets are lost only to the dead port (and the link itself), never to anything else
    data_drops = {k: v for k, v in summary["drops_by_reason"].items() if k != "smp-lost"}
    assert data_drops and set(data_drops) <= {"link-down", "port-down", "no-route"}
    assert sum(a["discarded_until_active"].values()) == sum(data_drops.values())
    # ... and none once the new tables are active, while traffic flows again at its earlier rate
    after = [(s, n, lost) for s, _, n, lost in dynamic if s * 1000 >= a["active_ns"]]
    assert after and all(lost == "-" for _, _, lost in after)
    before = [n for s, _, n, _ in dynamic if s < 200]
    assert min(n for _, n, _ in after) > 0.7 * (sum(before) / len(before))
    assert summary["conservation_ok"]


def test_05_the_plugin_engine_is_deadlock_free_but_longer(run):
    proc, out, _ = run("05_writing_a_plugin")
    rows = {m[0]: m[1:] for m in re.findall(r"^([\w-]+)\s+(ok|CYCLE)\s+([\d.]+)\s+(\d+)\s+(\d+)\s+([\d.]+) ns$",
                                             proc.stdout, flags=re.M)}
    assert rows["spanning-tree"][0] == "ok" and rows["updn"][0] == "ok" and rows["minhop"][0] == "CYCLE"
    assert float(rows["spanning-tree"][1]) > float(rows["updn"][1]) == float(rows["minhop"][1])
    assert int(rows["spanning-tree"][2]) > 0 and int(rows["updn"][2]) == 0
    assert (out / "ibfabric-tree" / "pyproject.toml").exists()
    assert sorted(p.name for p in (TUTORIALS / "05_writing_a_plugin").iterdir()) == ["ibfabric_tree.py", "pyproject.toml"]


def copy_of_the_package(tmp_path: Path) -> Path:
    """The tutorial's plugin package copied to *tmp_path* (importing or building it writes next to it)."""
    import shutil

    return Path(shutil.copytree(TUTORIALS / "05_writing_a_plugin", tmp_path / "ibfabric-tree",
                                ignore=shutil.ignore_patterns("__pycache__", "build", "*.egg-info")))


def test_05_the_packages_entry_point_registers_the_engine(tmp_path):
    """What ibfabric does with an installed plugin: load the entry point's module, register its hooks."""
    import tomllib
    from importlib.metadata import EntryPoint

    from ibfabric.plugins.manager import PluginSet

    package = copy_of_the_package(tmp_path)
    project = tomllib.loads((package / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    (name, value), = project["entry-points"]["ibfabric"].items()
    sys.path.insert(0, str(package))
    try:
        module = EntryPoint(name=name, value=value, group="ibfabric").load()
        engines = PluginSet.load(plugins=[module]).routing_engines
        assert "spanning-tree" in engines
    finally:
        sys.path.remove(str(package))
        sys.modules.pop(value, None)


def _can_build_offline() -> bool:
    """Whether this environment's setuptools can build a wheel by itself (else pip fetches one)."""
    try:
        import setuptools
    except ImportError:
        return False
    if int(setuptools.__version__.split(".")[0]) >= 71:
        return True
    try:
        import wheel  # noqa: F401
    except ImportError:
        return False
    return True


def test_05_the_package_installs_as_the_page_says(tmp_path):
    """The page's install block, run with the package installed into a directory of its own."""
    (shell,) = [text for info, text in blocks(TUTORIALS / "05_writing_a_plugin.md") if info == "sh"]
    lines = [ln.strip() for ln in shell.splitlines() if ln.strip()]
    assert lines[0] == "pip install ./ibfabric-tree"
    site = tmp_path / "site"
    cmd = [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(site),
           str(copy_of_the_package(tmp_path))]
    if _can_build_offline():  # else pip fetches setuptools for an isolated build, as users' pip does
        cmd.insert(4, "--no-build-isolation")
    subprocess.run(cmd, check=True, cwd=tmp_path)
    env = dict(os.environ, PYTHONPATH=str(site))
    outputs = []
    for line in lines[1:]:
        argv = line.split()
        assert argv[0] == "ibfabric"
        outputs.append(subprocess.run([sys.executable, "-m", "ibfabric", *argv[1:]], env=env, check=True,
                                      capture_output=True, text=True, cwd=tmp_path).stdout)
    assert "spanning-tree" in outputs[0] and "ibfabric-tree" in outputs[0]
    assert "acyclic (deadlock-free)" in outputs[1] and "unreachable:          0" in outputs[1]
