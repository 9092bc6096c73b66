from __future__ import annotations

import math

import numpy as np
import pytest

from ibfabric.errors import ConfigError
from ibfabric.signals import Recorder, SignalBus


class _Mod:
    def __init__(self, path):
        self.path = path


def test_recorder_scalars_histogram_and_vector():
    clock = [0.0]
    bus = SignalBus(lambda: clock[0])
    rec = Recorder("lat", ("count", "mean", "max", "histogram", "vector"), histogram_edges=[10, 20, 30])
    a, b = _Mod("n.a"), _Mod("n.b")
    bus.subscribe("lat", rec, source=a)
    for t, v in ((1.0, 5), (2.0, 15), (3.0, 15), (4.0, 35)):
        clock[0] = t
        bus.emit(a, "lat", v)
    bus.emit(b, "lat", 99)  # not subscribed for b
    assert rec.scalars() == [("n.a", "lat:count", 4.0), ("n.a", "lat:mean", 17.5), ("n.a", "lat:max", 35.0)]
    st = rec.per_module["n.a"]
    assert st.hist.tolist() == [1, 2, 0, 1]  # underflow, [10,20), [20,30), overflow
    t, v = st.vector()
    assert t.tolist() == [1.0, 2.0, 3.0, 4.0] and v.tolist() == [5, 15, 15, 35]
    assert "n.b" not in rec.per_module


def test_statistics_without_values_and_unknown_names():
    rec = Recorder("x", ("mean", "stddev"))
    rec(_Mod("m"), "x", 3.0, 0.0)
    (_, _, mean), (_, _, sd) = rec.scalars()
    assert mean == 3.0 and math.isnan(sd)
    with pytest.raises(ConfigError, match="records no vector"):
        rec.per_module["m"].vector()
    with pytest.raises(ConfigError, match="unknown statistic 'median'"):
        Recorder("x", ("median",))


def test_default_histogram_edges_cover_ns_to_ms():
    rec = Recorder("x", ("histogram",))
    assert rec.edges[0] == 1.0 and rec.edges[-1] == pytest.approx(1e7) and len(np.asarray(rec.edges)) == 29
