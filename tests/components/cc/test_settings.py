"""Congestion-control settings: the SubnetManager's parameters, OpenSM's cc file and their errors."""

from __future__ import annotations

import pytest

from ibfabric.components.cc.settings import CCSettings, parse_cct, read_opensm
from ibfabric.errors import ConfigError
from ibfabric.simulation import Simulation
from ibfabric.testing import CHAIN_NED

OPENSM = """\
# written as opensm --create-config writes its cc section
congestion_control TRUE
cc_key 0x0000000000000000
cc_max_outstanding_mads 500
cc_sw_cong_setting_control_map 0x1f
cc_sw_cong_setting_victim_mask 0x0000000000000000000000000000000000000000000000000000000000000012
cc_sw_cong_setting_credit_mask 0x0
cc_sw_cong_setting_threshold 0x0a
cc_sw_cong_setting_packet_size 8
cc_sw_cong_setting_marking_rate 0x000f
cc_ca_cong_setting_port_control 0x0001
cc_ca_cong_setting_ccti_timer 0 150
cc_ca_cong_setting_ccti_increase 0 2
cc_ca_cong_setting_trigger_threshold 0 3
cc_ca_cong_setting_ccti_min 0 1
cc_ca_cong_setting_ccti_increase 5 7
cc_cct 0:0,0:10,1:10,2:10
cc_sw_cong_setting_credit_starvation_threshold 0x3
# this model's key (OpenSM sends no Switch Port Congestion Setting): switch port valid type threshold size parm
cc_sw_port_cong_setting sw* 2 1 1 12 2 7
cc_sw_port_cong_setting * * 1 0 5 0 0
"""


def test_an_opensm_file_gives_the_architectures_fields(tmp_path):
    f = tmp_path / "opensm-cc.conf"
    f.write_text(OPENSM)
    s = read_opensm(str(f), CCSettings())
    assert s.enabled and s.threshold == 10 and s.packet_size == 8 and s.marking_rate == 15
    assert s.marks_as_victim(1) and s.marks_as_victim(4) and not s.marks_as_victim(2)
    assert s.per_sl
    assert (s.ca[0].ccti_timer, s.ca[0].ccti_increase, s.ca[0].trigger_threshold, s.ca[0].ccti_min) == (150, 2, 3, 1)
    assert s.ca[5].ccti_increase == 7 and s.ca[1].ccti_increase == 1  # per SL; others keep the base
    assert s.ccti_limit == 3 and s.delays() == [0.0, 10.0, 20.0, 40.0]
    assert ("cc_key", "0x0000000000000000") in s.extra
    assert s.cs_threshold == 3 and len(s.ports) == 2 and s.ports[0].where.endswith("opensm-cc.conf:20:25")
    r = s.port_rule("sw[0]", "chain.sw[0]", 2)  # the second element (every port) sets the congestion fields
    assert (r.threshold, r.packet_size, r.marking_rate, r.victim) == (5, 0, 0, False)
    assert (r.starve, r.cs_threshold, r.cs_packet_size, r.cs_marking_rate) == (True, 12, 2, 7)
    r = s.port_rule("s2", "net.s2", 4)  # the first is for sw* only; no Credit_Mask bit; a Victim_Mask bit
    assert not r.starve and r.cs_threshold == 3 and r.threshold == 5 and r.victim


def test_the_file_turns_congestion_control_on_in_a_run(tmp_path):
    f = tmp_path / "cc.conf"
    f.write_text(OPENSM)
    sim = Simulation(CHAIN_NED, overrides={"**.sm.ccConfig": str(f)}, seed=1)
    cc = sim.module("chain.sm").cc
    assert cc is not None and cc.settings.threshold == 10
    assert Simulation(CHAIN_NED, seed=1).module("chain.sm").cc is None  # off by default


@pytest.mark.parametrize("line, match", [
    ("cc_sw_cong_setting_treshold 3", r":1:1: 'cc_sw_cong_setting_treshold' is not an OpenSM congestion control"
                                      r" key; did you mean 'cc_sw_cong_setting_threshold'"),
    ("congestion_control maybe", r":1:20: 'congestion_control' is TRUE or FALSE"),
    ("  cc_cct 0:0,4:1", r":1:10: CCT entry 1 \(4:1\) needs shift 0..3"),
    ("cc_ca_cong_setting_ccti_timer 16 3", r":1:31: 'cc_ca_cong_setting_ccti_timer': SL must be 0..15"),
    ("cc_sw_cong_setting_threshold 0x1f", r"'threshold' must be 0..15 \(got 31\)"),
    ("cc_sw_cong_setting_marking_rate", r":1:1: 'cc_sw_cong_setting_marking_rate' needs a value"),
    ("cc_sw_port_cong_setting s1 4 1 0 8", r":1:25: a port setting is SWITCH PORT VALID CONTROL_TYPE"),
    ("cc_sw_port_cong_setting s1 4 1 2 8 0 0", r":1:25: port setting congestion control 'control_type' must be 0..1"),
    ("cc_sw_port_cong_setting s1 0 1 0 8 0 0", r":1:25: a switch port is 1..254 or \* \(got 0\)"),
])
def test_bad_lines_name_their_place(tmp_path, line, match):
    f = tmp_path / "bad.conf"
    f.write_text(line + "\n")
    with pytest.raises(ConfigError, match=match):
        read_opensm(str(f), CCSettings())


def test_a_port_setting_for_no_switch_is_an_error_at_its_place(tmp_path):
    f = tmp_path / "cc.conf"
    f.write_text("congestion_control TRUE\n  cc_sw_port_cong_setting s9 1 1 0 8 0 0\n")
    with pytest.raises(ConfigError, match=r"cc.conf:2:27: no switch matching 's9' has port 1"):
        Simulation(CHAIN_NED, overrides={"**.sm.ccConfig": str(f)}, seed=1)
    with pytest.raises(ConfigError, match=r"ccPortSettings entry 2: no switch matching '\*' has port 200"):
        Simulation(CHAIN_NED, overrides={"**.sm.congestionControl": "true",
                                         "**.sm.ccPortSettings": "* 1 1 0 8 0 0; * 200 1 0 8 0 0"}, seed=1)


def test_parameters_are_checked():
    with pytest.raises(ConfigError, match=r"'threshold' must be 0..15 \(got 16\)"):
        Simulation(CHAIN_NED, overrides={"**.sm.congestionControl": "true", "**.sm.ccThreshold": "16"}, seed=1)
    with pytest.raises(ConfigError, match=r"'ccti_limit' must be 0..2 \(the CCT has 3 entries; got 5\)"):
        Simulation(CHAIN_NED, overrides={"**.sm.ccCct": "0:0,0:1,0:2", "**.sm.ccCctiLimit": "5"}, seed=1)
    with pytest.raises(ConfigError, match="shift:multiplier"):
        parse_cct("0:0,3")
    assert parse_cct("") == ()
