"""The figure of a sweep: axis labels, lines, bands, legends, files, and ``ibfabric plot``."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from ibfabric.cli import main
from ibfabric.collect import aggregate, collect
from ibfabric.errors import ConfigError
from ibfabric.plot import DPI, MARKERS, PANEL_SIZE, default_path, label, make_figure, plot
from tests.ibfabric.test_collect import LATENCY, write_run, write_sweep


@pytest.fixture
def mpl():
    return pytest.importorskip("matplotlib")


@pytest.fixture
def sweep(tmp_path) -> Path:
    return write_sweep(tmp_path / "out")


class TestLabel:
    @pytest.mark.parametrize("stat, text", [
        ("offered_load", "offered load (fraction of link rate)"),
        ("accepted_load", "accepted load (fraction of link rate)"),
        ("best_effort_accepted_load", "best effort accepted load (fraction of link rate)"),
        ("latency_mean", "mean latency (ns)"),
        ("latency_p50", "p50 latency (ns)"),
        ("latency_p99", "p99 latency (ns)"),
        ("latency_max", "max latency (ns)"),
        ("network_latency_p99", "p99 network latency (ns)"),
        ("sl0_latency_mean", "mean sl0 latency (ns)"),
        ("latency_count", "latency count (packets)"),
        ("packets_delivered", "delivered (packets)"),
        ("packets_in_flight", "in flight (packets)"),
        ("sim_time_ns", "sim time (ns)"),
        ("link_utilisation_max", "link utilisation max"),
        ("saturated", "saturated"),
    ])
    def test_label(self, stat, text):
        assert label(stat) == text


def lines_of(ax) -> list:
    return [line for line in ax.get_lines() if not line.get_label().startswith("_")]


class TestMakeFigure:
    def test_hue(self, mpl, sweep):
        fig = make_figure(sweep, "offered_load", "latency_mean", hue="routing", title="Latency")
        (ax,) = fig.axes
        assert ax.get_xlabel() == "offered load (fraction of link rate)"
        assert ax.get_ylabel() == "mean latency (ns)"
        assert ax.get_title() == "Latency"
        lines = lines_of(ax)
        assert [line.get_label() for line in lines] == ["minhop", "updn"]
        legend = ax.get_legend()
        assert legend.get_title().get_text() == "routing"
        assert [t.get_text() for t in legend.get_texts()] == ["minhop", "updn"]
        for line, routing in zip(lines, ("minhop", "updn")):
            assert list(line.get_xdata()) == [0.1, 0.2, 0.3]  # sorted by x
            assert list(line.get_ydata()) == [LATENCY[routing, load] for load in (0.1, 0.2, 0.3)]
        assert len(ax.collections) == 2  # a confidence band per line: 3 repetitions

    def test_unsaturated_lines_stop_at_saturation(self, mpl, sweep):
        # the fixture's runs saturate above 0.25: the 0.3 points are left out
        (ax,) = make_figure(sweep, "offered_load", "latency_mean", hue="routing", unsaturated=True).axes
        assert [list(line.get_xdata()) for line in lines_of(ax)] == [[0.1, 0.2], [0.1, 0.2]]
        (ax,) = make_figure(sweep, "offered_load", "latency_mean", hue="routing").axes
        assert [list(line.get_xdata()) for line in lines_of(ax)] == [[0.1, 0.2, 0.3]] * 2

    def test_band_is_the_confidence_interval(self, mpl, sweep):
        fig = make_figure(sweep, "offered_load", "latency_mean", hue="routing")  # L-1, L, L+1 at every point
        band = fig.axes[0].collections[0]  # minhop's
        ci = {r[2]: r[7:] for r in aggregate(collect(sweep)).rows if r[1] == "minhop" and r[3] == "latency_mean"}
        ys = band.get_paths()[0].vertices[:, 1]
        assert min(ys) == pytest.approx(ci[0.1][0]) and max(ys) == pytest.approx(ci[0.3][1])
        assert ci[0.1][0] > 0

    def test_band_of_a_non_negative_statistic_stops_at_0(self, mpl, sweep):
        # 100, 200, 300 packets at every point: the interval is 200 ± 248, but no run delivered fewer than 0
        ci = [r[7:] for r in aggregate(collect(sweep)).rows if r[1:4] == ("minhop", 0.1, "packets_delivered")][0]
        assert ci[0] < 0
        (ax,) = make_figure(sweep, "offered_load", "packets_delivered").axes
        ys = ax.collections[0].get_paths()[0].vertices[:, 1]
        assert min(ys) == 0.0 and max(ys) == pytest.approx(ci[1])
        # on a log axis it stops at the smallest positive value plotted (the band's top edges are larger)
        (ax,) = make_figure(sweep, "offered_load", "packets_delivered", logy=True).axes
        ys = ax.collections[0].get_paths()[0].vertices[:, 1]
        assert min(ys) == 200.0 == min(lines_of(ax)[0].get_ydata())
        assert min(ys) >= ax.get_ylim()[0] > 0  # not drawn past the bottom of the axis (it went to -48)

    def test_band_of_a_statistic_that_can_be_negative_is_not_clipped(self, mpl, tmp_path):
        out = tmp_path / "out"
        for rep, delta in enumerate((-5.0, 1.0)):
            write_run(out, f"r{rep}", {"load": 0.1}, rep, summary_={"offered_load": 0.1, "delta_ns": delta})
        (ax,) = make_figure(out, "offered_load", "delta_ns").axes
        ys = ax.collections[0].get_paths()[0].vertices[:, 1]
        assert min(ys) < -5.0  # -2 ± 12.7 * 3

    def test_every_line_has_its_own_marker_and_style(self, mpl, tmp_path):
        out = tmp_path / "out"
        for i in range(6):
            for load in (0.1, 0.2):
                write_run(out, f"r{i}-{load}", {"vls": i + 1, "load": load}, 0,
                          summary_={"offered_load": load, "latency_ns": {"mean": 100.0 * (i + 1)}})
        (ax,) = make_figure(out, "offered_load", "latency_mean", hue="vls").axes
        lines = lines_of(ax)
        assert [line.get_marker() for line in lines] == list(MARKERS[:6])
        assert [line.get_linestyle() for line in lines] == ["-", "--", ":", "-.", "-", "--"]
        assert len({(line.get_marker(), line.get_linestyle()) for line in lines}) == 6
        # the same line keeps its marker and style in every subplot
        fig = make_figure(out, "offered_load", "latency_mean", hue="vls", facet="load")
        assert {lines_of(ax)[2].get_marker() for ax in fig.axes if ax.get_visible()} == {MARKERS[2]}

    def test_an_iteration_variable_on_the_x_axis(self, mpl, sweep):
        (ax,) = make_figure(sweep, "load", "latency_mean", hue="routing").axes
        assert ax.get_xlabel() == "load"
        assert [list(line.get_xdata()) for line in lines_of(ax)] == [[0.1, 0.2, 0.3]] * 2
        assert [list(line.get_ydata()) for line in lines_of(ax)] == [
            [LATENCY[r, load] for load in (0.1, 0.2, 0.3)] for r in ("minhop", "updn")]
        assert len(ax.collections) == 2
        with pytest.raises(ConfigError, match=r"^--x 'routing': an iteration variable on the x axis needs numbers,"
                                              r" but 'routing' is minhop, updn: give it as --hue or --facet$"):
            make_figure(sweep, "routing", "latency_mean")

    def test_single_line_no_legend(self, mpl, sweep):
        fig = make_figure(sweep, "accepted_load", "latency_p99")  # both routings' points on one line
        (ax,) = fig.axes
        assert len(lines_of(ax)) == 1 and ax.get_legend() is None and len(lines_of(ax)[0].get_xdata()) == 6
        assert ax.get_xlabel() == "accepted load (fraction of link rate)"
        assert ax.get_ylabel() == "p99 latency (ns)"
        assert list(lines_of(ax)[0].get_xdata()) == sorted(lines_of(ax)[0].get_xdata())

    def test_facet(self, mpl, sweep):
        fig = make_figure(sweep, "offered_load", "latency_mean", hue="routing", facet="load", title="T", logy=True)
        axes = [ax for ax in fig.axes if ax.get_visible()]
        assert [ax.get_title() for ax in axes] == ["load = 0.1", "load = 0.2", "load = 0.3"]
        assert [len(lines_of(ax)) for ax in axes] == [2, 2, 2]
        assert [ax.get_ylabel() for ax in axes] == ["mean latency (ns)", "", ""]
        assert all(ax.get_yscale() == "log" for ax in axes)
        assert fig.get_suptitle() == "T"
        assert [t.get_text() for t in axes[0].get_legend().get_texts()] == ["minhop", "updn"]
        # the same colour for a routing in every subplot
        assert {lines_of(ax)[0].get_color() for ax in axes} == {"C0"}

    def test_facet_grid(self, mpl, tmp_path):
        out = tmp_path / "out"
        for i in range(4):
            write_run(out, f"r{i}", {"vls": i + 1}, 0, summary_={"offered_load": 0.1, "latency_ns": {"mean": 1.0}})
        fig = make_figure(out, "offered_load", "latency_mean", facet="vls")
        assert tuple(fig.get_size_inches()) == (3 * PANEL_SIZE[0], 2 * PANEL_SIZE[1])
        assert [ax.get_visible() for ax in fig.axes] == [True, True, True, True, False, False]

    def test_no_band_without_repetitions(self, mpl, tmp_path):
        out = tmp_path / "out"
        for i, load in enumerate((0.3, 0.1, 0.2)):
            write_run(out, f"r{i}", {"load": load}, 0, summary_={"offered_load": load, "latency_ns": {"mean": i}})
        (ax,) = make_figure(out, "offered_load", "latency_mean").axes
        assert len(ax.collections) == 0 and list(lines_of(ax)[0].get_xdata()) == [0.1, 0.2, 0.3]

    def test_tables_accepted(self, mpl, sweep):
        table = collect(sweep)
        for source in (table, aggregate(table)):
            (ax,) = make_figure(source, "offered_load", "latency_mean", hue="routing").axes
            assert len(lines_of(ax)) == 2

    def test_timing_statistics_can_be_plotted(self, mpl, sweep):
        (ax,) = make_figure(sweep, "offered_load", "events_per_s", hue="routing").axes
        assert [list(line.get_ydata()) for line in lines_of(ax)] == [[2000.0] * 3] * 2

    def test_unknown_names(self, mpl, sweep):
        with pytest.raises(ConfigError) as info:
            make_figure(sweep, "offered_load", "latency_avg")
        assert str(info.value).startswith("unknown statistic 'latency_avg'; did you mean 'latency_mean'?: choose"
                                          " from offered_load, accepted_load, latency_mean, latency_p99")
        with pytest.raises(ConfigError) as info:
            make_figure(sweep, "lod", "latency_mean")
        assert str(info.value) == (
            "unknown statistic or iteration variable 'lod'; did you mean 'load'?: choose from offered_load,"
            " accepted_load, latency_mean, latency_p99, saturated, wall_s, events_per_s, packets_delivered; or an"
            " iteration variable with numbers: routing, load")
        with pytest.raises(ConfigError, match=r"^--y 'load' is an iteration variable; y is a statistic: choose from"
                                              r" offered_load, "):
            make_figure(sweep, "offered_load", "load")
        with pytest.raises(ConfigError, match=r"^unknown iteration variable 'vl': choose from routing, load$"):
            make_figure(sweep, "offered_load", "latency_mean", hue="vl")
        with pytest.raises(ConfigError, match=r"^unknown iteration variable 'rooting'; did you mean 'routing'\?:"
                                              r" choose from routing, load$"):
            make_figure(sweep, "offered_load", "latency_mean", hue="rooting")
        with pytest.raises(ConfigError, match="^unknown iteration variable 'x': choose from routing, load$"):
            make_figure(sweep, "offered_load", "latency_mean", facet="x")

    def test_without_matplotlib(self, sweep, monkeypatch):
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        with pytest.raises(ConfigError, match=r"^plotting needs matplotlib: pip install 'ibfabric\[plot\]'$"):
            plot(sweep, "offered_load", "latency_mean")


class TestPlotFiles:
    def test_png_default_path_and_size(self, mpl, sweep):
        import matplotlib.image

        path = plot(sweep, "offered_load", "latency_mean", hue="routing")
        assert path == sweep / "plot-latency_mean-vs-offered_load.png" == default_path(sweep, "offered_load",
                                                                                          "latency_mean")
        assert path.stat().st_size > 0
        assert matplotlib.image.imread(path).shape == (PANEL_SIZE[1] * DPI, PANEL_SIZE[0] * DPI, 4)
        assert not [p for p in sweep.iterdir() if p.name.startswith(".")]  # no temporary file left

    def test_png_facets_size(self, mpl, sweep, tmp_path):
        import matplotlib.image

        path = plot(sweep, "offered_load", "latency_mean", facet="routing", path=tmp_path / "f" / "fig.png")
        assert path == tmp_path / "f" / "fig.png"
        assert matplotlib.image.imread(path).shape == (PANEL_SIZE[1] * DPI, 2 * PANEL_SIZE[0] * DPI, 4)

    @pytest.mark.parametrize("ext, magic", [("svg", b"<?xml"), ("pdf", b"%PDF")])
    def test_vector_formats(self, mpl, sweep, tmp_path, ext, magic):
        path = plot(sweep, "accepted_load", "latency_p99", hue="routing", path=tmp_path / f"fig.{ext}")
        data = path.read_bytes()
        assert data.startswith(magic) and len(data) > 1000
        again = plot(sweep, "accepted_load", "latency_p99", hue="routing", path=tmp_path / f"fig.{ext}")
        assert again.read_bytes() == data  # no dates: one figure, one file
        assert sorted(p.name for p in tmp_path.iterdir()) == ["fig." + ext, "out"]

    def test_unknown_format(self, mpl, sweep, tmp_path):
        with pytest.raises(ConfigError, match=r"fig.jpg: unknown figure format '.jpg': use .png, .svg, .pdf$"):
            plot(sweep, "offered_load", "latency_mean", path=tmp_path / "fig.jpg")
        assert not (tmp_path / "fig.jpg").exists()

    def test_table_default_path_is_cwd(self, mpl, sweep, tmp_path, monkeypatch):
        monkeypatch.chdir(tmp_path)
        path = plot(collect(sweep), "offered_load", "latency_mean")
        assert path == Path("plot-latency_mean-vs-offered_load.png") and (tmp_path / path).stat().st_size > 0


def run(capsys, *argv):
    code = main(list(argv))
    out = capsys.readouterr()
    return code, out.out, out.err


class TestPlotCommand:
    def test_plot(self, mpl, capsys, sweep, tmp_path):
        code, out, err = run(capsys, "plot", str(sweep), "--x", "offered_load", "--y", "latency_mean", "--hue",
                             "routing", "--facet", "load", "--title", "Latency", "--logy", "-o",
                             str(tmp_path / "fig.svg"))
        assert code == 0, err
        assert out == f"figure written to {tmp_path / 'fig.svg'}\n"
        assert err.splitlines() == [f"ibfabric: warning: {sweep / 'runs' / 'junk'}: no run.json, ignored",
                                    "ibfabric: warning: 1 of 19 runs failed and are left out"]
        assert (tmp_path / "fig.svg").read_bytes().startswith(b"<?xml")

    def test_default_output(self, mpl, capsys, sweep):
        code, out, _ = run(capsys, "plot", str(sweep), "--x", "accepted_load", "--y", "latency_p99")
        assert code == 0
        assert (sweep / "plot-latency_p99-vs-accepted_load.png").stat().st_size > 0
        assert out == f"figure written to {sweep / 'plot-latency_p99-vs-accepted_load.png'}\n"

    def test_x_may_be_an_iteration_variable(self, mpl, capsys, sweep, tmp_path):
        code, out, err = run(capsys, "plot", str(sweep), "--x", "load", "--y", "latency_mean", "--hue", "routing",
                             "-o", str(tmp_path / "fig.png"))
        assert code == 0 and out == f"figure written to {tmp_path / 'fig.png'}\n"

    def test_errors(self, mpl, capsys, sweep, tmp_path):
        code, _, err = run(capsys, "plot", str(sweep), "--x", "laod", "--y", "latency_mean")
        assert code == 2 and err.splitlines()[-1].startswith(
            "ibfabric: error: unknown statistic or iteration variable 'laod'; did you mean 'load'?: choose"
            " from offered_load,")
        code, _, err = run(capsys, "plot", str(sweep), "--x", "offered_load", "--y", "latency_mean", "--hue", "vl")
        assert (code, err.splitlines()[-1]) == (
            2, "ibfabric: error: unknown iteration variable 'vl': choose from routing, load")
        code, _, err = run(capsys, "plot", str(tmp_path / "none"), "--x", "offered_load", "--y", "latency_mean")
        assert (code, err) == (2, f"ibfabric: error: {tmp_path / 'none'}: not a sweep output directory (no runs/)\n")
        code, _, err = run(capsys, "plot", str(sweep), "--x", "offered_load", "--y", "latency_mean", "-o", "f.gif")
        assert (code, err) == (2, "ibfabric: error: f.gif: unknown figure format '.gif': use .png, .svg, .pdf\n")

    def test_without_matplotlib(self, capsys, sweep, monkeypatch):
        monkeypatch.setitem(sys.modules, "matplotlib", None)
        code, _, err = run(capsys, "plot", str(sweep), "--x", "offered_load", "--y", "latency_mean")
        assert (code, err) == (2, "ibfabric: error: plotting needs matplotlib: pip install 'ibfabric[plot]'\n")
