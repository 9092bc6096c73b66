"""Congestion-control settings: the architecture's attributes, from parameters or an OpenSM cc file.

IBA 1.2.1 Annex A10 configures congestion control with four attributes,
which OpenSM's congestion control manager sends from the ``cc_*`` keys of
its options file (``opensm.conf``); this module reads both forms into one
frozen :class:`CCSettings`:

======================================  ==========================  ===============================
attribute field (width)                 OpenSM key                  parameter of ``SubnetManager``
======================================  ==========================  ===============================
(on/off)                                ``congestion_control``      ``congestionControl``
SwitchCongestionSetting.Threshold (4)   ``..._sw_cong_setting_      ``ccThreshold`` (0..15)
                                        threshold``
.Marking_Rate (16)                      ``..._marking_rate``        ``ccMarkingGap`` (0..65535)
.Packet_Size (8, credits)               ``..._packet_size``         ``ccPacketSize`` (bytes, in
                                                                    credits 0..255)
.Victim_Mask (256)                      ``..._victim_mask``         ``ccVictimMask`` (hex)
.Credit_Mask (256)                      ``..._credit_mask``         ``ccCreditMask`` (hex)
.CS_Threshold (4)                       ``..._credit_starvation_    ``ccCreditStarvationThreshold``
                                        threshold``                 (0..15)
SwitchPortCongestionSetting             ibfabric's ``cc_sw_port_    ``ccPortSettings``
                                        cong_setting``
(one element per port)                  (OpenSM has none: below)
CACongestionSetting.Port_Control (16)   ``cc_ca_cong_setting_       ``ccPortControl`` (bit 0: 0 per
                                        port_control``              flow/QP, 1 per SL)
CACongestionEntry.CCTI_Timer (16)       ``..._ccti_timer SL V``     ``ccCctiTimer`` (1.024 us units)
.CCTI_Increase (8)                      ``..._ccti_increase SL V``  ``ccCctiIncrease``
.Trigger_Threshold (8)                  ``..._trigger_threshold``   ``ccTriggerThreshold``
.CCTI_Min (8)                           ``..._ccti_min SL V``       ``ccCctiMin``
CongestionControlTable.CCTI_Limit (16)  (the table's length - 1)    ``ccCctiLimit``
CongestionControlTable entries          ``cc_cct shift:mult,...``   ``ccCct``
(shift 2 bits, multiplier 14 bits)
======================================  ==========================  ===============================

Field widths: IBA 1.2.1 Annex A10, tables 515-520 (as quoted on the
OpenFabrics ``general`` list, 2008-06-30); key names and file form:
OpenSM's ``osm_subnet.c`` options table and its ``--create-config`` dump.
OpenSM keys this model has no use for (``cc_key``,
``cc_max_outstanding_mads``, ``cc_sw_cong_setting_control_map``,
``cc_sw_cong_setting_credit_starvation_return_delay``,
``cc_ca_cong_setting_control_map``) are accepted and kept; any other key is
an error naming the valid ones.

**Per-port settings.**  OpenSM's congestion control manager sends a switch
only the Switch Congestion Setting (``osm_congestion_control_setup``: the
switch-wide fields above, to port 0) and has no key for the Switch Port
Congestion Setting; the attribute is one element per port (Valid,
Control_Type, Threshold, Packet_Size, Cong_Parm; libibmad's layout, which
``ibccconfig SwitchPortCongestionSetting`` writes with the arguments in that
order).  This model takes the elements from its own key in the same file,
``cc_sw_port_cong_setting SWITCH PORT VALID CONTROL_TYPE THRESHOLD
PACKET_SIZE CONG_PARM`` (ibccconfig's order; SWITCH a switch's name or path,
shell wildcards allowed, PORT a number or ``*``), or from the parameter
``ccPortSettings`` (the same entries, ``;`` between them).  A valid element
of Control_Type 0 (congestion) gives its port its own Threshold,
Packet_Size and Marking_Rate (Cong_Parm); one of Control_Type 1 (credit
starvation) turns marking on credit starvation on for its port, with its
Threshold as that port's CS_Threshold and its Packet_Size and Cong_Parm as
the size and the gap of that marking.  Later elements for the same port and
type win.
"""

from __future__ import annotations

from fnmatch import fnmatchcase

import attrs

from ibfabric.errors import ConfigError, did_you_mean

__all__ = ["CCSettings", "CAEntry", "PortSetting", "PortRule", "from_params", "read_opensm", "parse_cct", "parse_mask",
           "parse_port_setting", "OPENSM_KEYS", "PORT_KEY"]

#: the unit of CCTI_Timer (IBA A10: the timer counts in 1.024 microsecond units)
TIMER_UNIT_NS = 1024.0

#: OpenSM cc keys this model reads into its settings, and those it accepts without a use
OPENSM_KEYS = (
    "congestion_control", "cc_key", "cc_max_outstanding_mads", "cc_sw_cong_setting_control_map",
    "cc_sw_cong_setting_victim_mask", "cc_sw_cong_setting_credit_mask", "cc_sw_cong_setting_threshold",
    "cc_sw_cong_setting_packet_size", "cc_sw_cong_setting_credit_starvation_threshold",
    "cc_sw_cong_setting_credit_starvation_return_delay", "cc_sw_cong_setting_marking_rate",
    "cc_ca_cong_setting_port_control", "cc_ca_cong_setting_control_map", "cc_ca_cong_setting_ccti_timer",
    "cc_ca_cong_setting_ccti_increase", "cc_ca_cong_setting_trigger_threshold", "cc_ca_cong_setting_ccti_min",
    "cc_cct",
)

#: this model's key for a Switch Port Congestion Setting element (OpenSM has none; module docstring)
PORT_KEY = "cc_sw_port_cong_setting"


def _in(lo: int, hi: int):
    def check(inst, attr, value):
        if not lo <= value <= hi:
            raise ConfigError(f"congestion control '{attr.name}' must be {lo}..{hi} (got {value})")
    return check


@attrs.frozen
class CAEntry:
    """The CA Congestion Setting entry of one SL (IBA A10 table 519)."""

    ccti_timer: int = attrs.field(default=0, validator=_in(0, 0xFFFF))
    ccti_increase: int = attrs.field(default=1, validator=_in(0, 0xFF))
    trigger_threshold: int = attrs.field(default=0, validator=_in(0, 0xFF))
    ccti_min: int = attrs.field(default=0, validator=_in(0, 0xFF))

    @property
    def period(self) -> float:
        """The CCTI timer's period in ns (0: the timer does not run)."""
        return self.ccti_timer * TIMER_UNIT_NS


def _default_cct() -> tuple:
    # a linear table, as the CC literature's experiments use (Gran et al. 2010: the IRD grows by one step
    # per index): entry i delays i x 64 units; 128 entries (IBA: up to 16 blocks of 64; OpenSM ships none)
    return tuple((0, 64 * i) for i in range(128))


@attrs.frozen
class PortSetting:
    """One Switch Port Congestion Setting element (IBA A10; libibmad's fields) and the ports it is for.

    ``switch`` is a shell pattern matched against a switch's name and its path; ``port`` is a port
    number or -1 (every port); ``where`` is the place it was written (for errors).
    """

    switch: str
    port: int
    valid: bool = True
    control_type: int = attrs.field(default=0, validator=_in(0, 1))
    threshold: int = attrs.field(default=8, validator=_in(0, 15))
    packet_size: int = attrs.field(default=0, validator=_in(0, 0xFF))
    cong_parm: int = attrs.field(default=0, validator=_in(0, 0xFFFF))
    where: str = attrs.field(default="", eq=False)

    def matches(self, name: str, path: str, port: int) -> bool:
        """Whether this element is for port *port* of the switch named *name* at *path*."""
        return (self.port < 0 or self.port == port) and (fnmatchcase(name, self.switch)
                                                         or fnmatchcase(path, self.switch))


@attrs.frozen
class PortRule:
    """What one switch output port marks with (the switch-wide settings, its elements applied).

    ``limit`` and ``cs_limit``: the threshold and the credit-starvation threshold on the 0..15 scale;
    ``starve``: whether it marks on credit starvation (its Credit_Mask bit, or a Control_Type 1
    element); ``victim``: its Victim_Mask bit.
    """

    threshold: int
    packet_size: int
    marking_rate: int
    victim: bool
    starve: bool
    cs_threshold: int
    cs_packet_size: int
    cs_marking_rate: int


@attrs.frozen
class CCSettings:
    """Congestion control of one fabric: what the switches mark and how the sources react.

    ``ird_unit`` is the time (ns) of one unit of a CCT entry's delay,
    ``multiplier << shift``; the delay is the gap the source leaves after a
    packet of a throttled flow before the next one of that flow starts.
    """

    enabled: bool = False
    threshold: int = attrs.field(default=8, validator=_in(0, 15))
    marking_rate: int = attrs.field(default=0, validator=_in(0, 0xFFFF))
    packet_size: int = attrs.field(default=0, validator=_in(0, 0xFF))
    victim_mask: int = 0
    credit_mask: int = 0
    cs_threshold: int = attrs.field(default=8, validator=_in(0, 15))
    #: Switch Port Congestion Setting elements, in the order given (later ones win)
    ports: tuple = ()
    port_control: int = attrs.field(default=0, validator=_in(0, 0xFFFF))
    ca: tuple = attrs.field(default=(CAEntry(),) * 16)
    cct: tuple = attrs.field(factory=_default_cct)
    ccti_limit: int = 127
    ird_unit: float = 1.0
    #: keys read from an OpenSM file that this model keeps but does not use
    extra: tuple = ()

    def __attrs_post_init__(self):
        if not self.cct:
            raise ConfigError("congestion control: the CCT ('cc_cct' / 'ccCct') needs at least one entry")
        if not 0 <= self.ccti_limit < len(self.cct):
            raise ConfigError(f"congestion control 'ccti_limit' must be 0..{len(self.cct) - 1} (the CCT has"
                              f" {len(self.cct)} entries; got {self.ccti_limit})")
        for sl, e in enumerate(self.ca):
            if e.ccti_min > self.ccti_limit:
                raise ConfigError(f"congestion control SL {sl}: 'ccti_min' ({e.ccti_min}) is above 'ccti_limit'"
                                  f" ({self.ccti_limit})")
        if self.ird_unit <= 0:
            raise ConfigError(f"congestion control 'ccIrdUnit' must be > 0 (got {self.ird_unit}ns)")

    @property
    def per_sl(self) -> bool:
        """Port_Control bit 0: the CCTI is kept per SL (else per flow, the QP-based mode)."""
        return bool(self.port_control & 1)

    def delays(self) -> list[float]:
        """The inter-packet delay of each CCT index up to the limit, in ns."""
        return [(m << s) * self.ird_unit for s, m in self.cct[: self.ccti_limit + 1]]

    def limit_credits(self, buffer_credits: int, threshold: int | None = None) -> int:
        """The queue (credits) at which a port VL is congested: ``(16 - threshold)/16`` of one input VL
        buffer (threshold 15: a sixteenth, the most aggressive; 1: fifteen sixteenths); 0: never.
        *threshold* defaults to the switch-wide ``threshold``."""
        if threshold is None:
            threshold = self.threshold
        if threshold == 0:
            return 1 << 62
        return max(1, -(-buffer_credits * (16 - threshold) // 16))

    def port_rule(self, name: str, path: str, port: int) -> PortRule:
        """The settings output port *port* of the switch named *name* at *path* marks with: the
        switch-wide ones, then the valid elements of :attr:`ports` for it (later ones win)."""
        cong = (self.threshold, self.packet_size, self.marking_rate)
        starve = bool(self.credit_mask >> port & 1)
        cs = (self.cs_threshold, self.packet_size, self.marking_rate)
        for e in self.ports:
            if e.valid and e.matches(name, path, port):
                if e.control_type == 0:
                    cong = (e.threshold, e.packet_size, e.cong_parm)
                else:
                    starve, cs = True, (e.threshold, e.packet_size, e.cong_parm)
        return PortRule(*cong, self.marks_as_victim(port), starve, *cs)

    def marks_as_victim(self, port: int) -> bool:
        """Victim_Mask: whether *port* marks when it is congested without being the root."""
        return bool(self.victim_mask >> port & 1)


def parse_cct(text: str, where: str = "ccCct") -> tuple:
    """``"shift:multiplier,..."`` as a tuple of ``(shift, multiplier)`` (shift 0..3, multiplier 0..16383).

    >>> parse_cct("0:0, 0:64, 1:64")
    ((0, 0), (0, 64), (1, 64))
    """
    out = []
    for i, item in enumerate(s for s in text.replace(" ", "").split(",") if s):
        shift, sep, mult = item.partition(":")
        try:
            if not sep:
                raise ValueError
            s, m = int(shift, 0), int(mult, 0)
        except ValueError:
            raise ConfigError(f"{where}: CCT entry {i} must be shift:multiplier (got {item!r})") from None
        if not 0 <= s <= 3 or not 0 <= m <= 0x3FFF:
            raise ConfigError(f"{where}: CCT entry {i} ({item}) needs shift 0..3 and multiplier 0..16383")
        out.append((s, m))
    if len(out) > 1024:
        raise ConfigError(f"{where}: a CCT has at most 1024 entries (got {len(out)})")
    return tuple(out)


def parse_port_setting(text: str, where: str) -> PortSetting:
    """``SWITCH PORT VALID CONTROL_TYPE THRESHOLD PACKET_SIZE CONG_PARM`` as a :class:`PortSetting`.

    >>> parse_port_setting("s2 4 1 1 10 0 0", "x").control_type
    1
    """
    parts = text.split()
    if len(parts) != 7:
        raise ConfigError(f"{where}: a port setting is SWITCH PORT VALID CONTROL_TYPE THRESHOLD PACKET_SIZE"
                          f" CONG_PARM (got {text.strip()!r})")
    port = -1 if parts[1] == "*" else _int(parts[1], where)
    if port != -1 and not 0 < port < 255:
        raise ConfigError(f"{where}: a switch port is 1..254 or * (got {parts[1]})")
    valid, ctype, thr, size, parm = (_int(v, where) for v in parts[2:])
    if valid not in (0, 1):
        raise ConfigError(f"{where}: VALID is 0 or 1 (got {valid})")
    try:
        return PortSetting(parts[0], port, bool(valid), ctype, thr, size, parm, where=where)
    except ConfigError as exc:
        raise ConfigError(f"{where}: port setting {exc}") from None


def parse_port_settings(text: str, where: str = "ccPortSettings") -> tuple:
    """The ``;``-separated elements of the ``ccPortSettings`` parameter."""
    return tuple(parse_port_setting(item, f"{where} entry {i + 1}")
                 for i, item in enumerate(x for x in text.split(";") if x.strip()))


def parse_mask(text: str, where: str) -> int:
    """A 256-bit port mask written as OpenSM writes it (``0x...`` hex; bit *n* = port *n*)."""
    text = text.strip()
    if not text:
        return 0
    try:
        v = int(text, 16)
    except ValueError:
        raise ConfigError(f"{where}: a port mask is hexadecimal, bit n for port n (got {text!r})") from None
    if v >> 256:
        raise ConfigError(f"{where}: a port mask has 256 bits (got {text!r})")
    return v


def from_params(p) -> CCSettings:
    """The settings the ``SubnetManager`` parameters *p* give (see the module docstring)."""
    entry = CAEntry(int(p["ccCctiTimer"]), int(p["ccCctiIncrease"]), int(p["ccTriggerThreshold"]),
                    int(p["ccCctiMin"]))
    text = str(p["ccCct"]).strip()
    cct = parse_cct(text) if text else _default_cct()
    limit = int(p["ccCctiLimit"])
    return CCSettings(
        enabled=bool(p["congestionControl"]), threshold=int(p["ccThreshold"]),
        marking_rate=int(p["ccMarkingGap"]), packet_size=-(-int(p["ccPacketSize"]) // 64),
        victim_mask=parse_mask(str(p["ccVictimMask"]), "ccVictimMask"),
        credit_mask=parse_mask(str(p["ccCreditMask"]), "ccCreditMask"),
        cs_threshold=int(p["ccCreditStarvationThreshold"]),
        ports=parse_port_settings(str(p["ccPortSettings"])),
        port_control=int(p["ccPortControl"]), ca=(entry,) * 16, cct=cct,
        ccti_limit=len(cct) - 1 if limit < 0 else limit, ird_unit=float(p["ccIrdUnit"]),
    )


def _int(v: str, where: str) -> int:
    try:
        return int(v, 0)
    except ValueError:
        raise ConfigError(f"{where}: expected an integer (got {v!r})") from None


def read_opensm(path: str, base: CCSettings) -> CCSettings:
    """*base* with the values of the OpenSM-style cc options file *path* (its keys win).

    Lines are ``key value`` (``cc_ca_cong_setting_* SL value`` per SL); ``#``
    starts a comment; keys other than OpenSM's cc keys and this model's
    :data:`PORT_KEY` are errors naming the place (``file:line:col``).
    ``cc_cct`` sets the table and its ``ccti_limit`` (entries - 1), as OpenSM
    does; each :data:`PORT_KEY` line adds a Switch Port Congestion Setting
    element after those of *base*.
    """
    from ibfabric.tomlpos import read_file

    text = read_file(path)
    kw: dict = {}
    ca = [attrs.asdict(e) for e in base.ca]
    extra = []
    ports = list(base.ports)
    for n, raw in enumerate(text.splitlines(), 1):
        line = raw.split("#", 1)[0]
        if not line.strip():
            continue
        col = len(line) - len(line.lstrip()) + 1
        key, _, value = line.strip().partition(" ")
        value = value.strip()
        where = f"{path}:{n}:{col}"
        if key not in OPENSM_KEYS and key != PORT_KEY:
            raise ConfigError(f"{where}: '{key}' is not an OpenSM congestion control key{did_you_mean(key, OPENSM_KEYS + (PORT_KEY,))}")
        if not value:
            raise ConfigError(f"{where}: '{key}' needs a value")
        vwhere = f"{path}:{n}:{col + len(key) + 1}"
        if key == "congestion_control":
            if value.upper() not in ("TRUE", "FALSE"):
                raise ConfigError(f"{vwhere}: 'congestion_control' is TRUE or FALSE (got {value!r})")
            kw["enabled"] = value.upper() == "TRUE"
        elif key.startswith("cc_ca_cong_setting_") and key.endswith(("ccti_timer", "ccti_increase",
                                                                     "trigger_threshold", "ccti_min")):
            parts = value.split()
            if len(parts) != 2:
                raise ConfigError(f"{vwhere}: '{key}' takes an SL and a value (got {value!r})")
            sl, v = _int(parts[0], vwhere), _int(parts[1], vwhere)
            if not 0 <= sl <= 15:
                raise ConfigError(f"{vwhere}: '{key}': SL must be 0..15 (got {sl})")
            ca[sl][key[len("cc_ca_cong_setting_"):]] = v
        elif key == "cc_cct":
            cct = parse_cct(value, vwhere)
            kw["cct"], kw["ccti_limit"] = cct, len(cct) - 1
        elif key in ("cc_sw_cong_setting_victim_mask", "cc_sw_cong_setting_credit_mask"):
            kw[key.rsplit("_", 2)[-2] + "_mask"] = parse_mask(value, vwhere)
        elif key == PORT_KEY:
            ports.append(parse_port_setting(value, vwhere))
        elif key == "cc_sw_cong_setting_credit_starvation_threshold":
            kw["cs_threshold"] = _int(value, vwhere)
        elif key in ("cc_sw_cong_setting_threshold", "cc_sw_cong_setting_packet_size",
                     "cc_sw_cong_setting_marking_rate", "cc_ca_cong_setting_port_control"):
            kw[key.split("setting_", 1)[1]] = _int(value, vwhere)
        else:
            extra.append((key, value))
    try:
        return attrs.evolve(base, ca=tuple(CAEntry(**e) for e in ca), extra=tuple(extra), ports=tuple(ports), **kw)
    except ConfigError as exc:
        raise ConfigError(f"{path}: {exc}") from None
