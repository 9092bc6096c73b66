"""QoS metrics on a hand-made delivery log: delay shares, jitter intervals, delivered traffic, best/worst."""

from __future__ import annotations

import numpy as np
import pytest

from ibfabric.components.qos import Connection
from ibfabric.qos_metrics import DELAY_LABELS, JITTER_LABELS, qos_metrics, utilisation

# IAT = 256 B x 8 / bandwidth: 1000 ns for connection 1 (SL 0), 2000 ns for connection 2 (SL 3)
CONNS = [Connection(1, 0, 1, 0, 2.048e9), Connection(2, 1, 0, 3, 1.024e9)]


def log(rows):
    """rows of (flow, created, delay)."""
    flow, created, delay = (np.array(x, dtype=float) for x in zip(*rows))
    return {"flow": flow.astype(np.int64), "created": created, "delivered_at": created + delay,
            "size": np.full(len(flow), 256, dtype=np.int64), "sl": np.zeros(len(flow), dtype=np.int8)}


LOG = log([
    (1, 0, 10), (1, 1000, 40), (1, 2000, 600), (1, 3000, 100),  # delays 0.01, 0.04, 0.6, 0.1 IAT
    (2, 0, 1500), (2, 2000, 2500),  # 0.75, 1.25 IAT
    (2, 4000, 2000),  # delivered at 6000, after "now": not counted
    (0, 1000, 5),  # not a connection (pattern traffic has flow 0)
    (1, -1000, 5),  # created before the window
])


@pytest.fixture
def m():
    return qos_metrics(LOG, CONNS, window=(0.0, 4000.0), now=5000.0, num_hosts=2, link_rate=2.048e9)


class TestQosMetrics:
    def test_delay_shares(self, m):
        sl0 = m["per_sl"]["0"]["delay_under"]
        assert [sl0[k] for k in DELAY_LABELS] == [0.25, 0.5, 0.75, 0.75, 0.75, 1.0, 1.0]
        sl3 = m["per_sl"]["3"]["delay_under"]
        assert [sl3[k] for k in DELAY_LABELS] == [0, 0, 0, 0, 0, 0.5, 0.5]
        assert m["per_sl"]["0"]["delay_max_iat"] == 0.6
        assert m["per_sl"]["3"]["delay_mean_iat"] == 1.0

    def test_jitter_intervals(self, m):
        # connection 1: +0.03 (centre), +0.56 ((IAT/2, IAT]), -0.5 ([-IAT/2, -IAT/4)); connection 2: +0.5
        j0 = m["per_sl"]["0"]["jitter"]
        assert m["per_sl"]["0"]["jitter_pairs"] == 3
        assert {k: v for k, v in j0.items() if v} == pytest.approx(
            {"[-IAT/8, IAT/8]": 1 / 3, "(IAT/2, IAT]": 1 / 3, "[-IAT/2, -IAT/4)": 1 / 3})
        assert {k: v for k, v in m["per_sl"]["3"]["jitter"].items() if v} == {"(IAT/4, IAT/2]": 1.0}
        assert len(JITTER_LABELS) == 9

    def test_delivered_traffic(self, m):
        # 1024 B of SL 0 in 4000 ns on 2 hosts of 2.048 Gb/s (a cycle is one byte time, 3.90625 ns)
        assert m["cycle_ns"] == 3.90625
        assert m["per_sl"]["0"]["delivered"] == {"bytes_per_cycle_per_host": 0.5, "fraction_of_link": 0.5}
        assert m["per_sl"]["3"]["delivered"] == {"bytes_per_cycle_per_host": 0.25, "fraction_of_link": 0.25}
        assert m["delivered"]["fraction_of_link"] == 0.75
        assert m["requested_fraction_of_link"] == 0.75
        c1, c2 = m["per_connection"]
        assert (c1["packets"], c1["delivered_over_requested"], c1["on_time"]) == (4, 1.0, 0.75)
        assert (c2["packets"], c2["delivered_bps"], c2["delay_max_iat"]) == (2, 1.024e9, 1.25)

    def test_best_and_worst(self, m):
        assert m["per_sl"]["0"]["best"]["id"] == m["per_sl"]["0"]["worst"]["id"] == 1
        assert m["per_sl"]["0"]["worst"]["on_time"] == 0.75  # delay <= IAT/2
        m2 = qos_metrics(LOG, CONNS + [Connection(3, 0, 1, 0, 2.048e9)], window=(0.0, 4000.0), now=5000.0,
                         num_hosts=2, link_rate=2.048e9, deadline=0.05)
        # connection 3 sent nothing: it is no candidate; at IAT/20 connection 1 has 2 of 4 on time
        assert m2["per_sl"]["0"]["worst"]["on_time"] == 0.5
        few = qos_metrics(LOG, CONNS, window=(0.0, 4000.0), now=5000.0, num_hosts=2, link_rate=2.048e9,
                          min_packets=3)
        assert few["per_sl"]["3"]["worst"] is None and few["per_sl"]["0"]["worst"]["id"] == 1

    def test_utilisation(self):
        u = utilisation({"h0.port[1]": 500.0, "h1.port[1]": 0.0, "sw.port[1]": 1000.0}, ["h0.port[1]", "h1.port[1]"],
                        1000.0)
        assert (u["host_interfaces"]["mean"], u["host_interfaces"]["max"]) == (0.25, 0.5)
        assert u["switch_ports"]["ports"] == {"sw.port[1]": 1.0}
