"""InfiniBand link widths, speeds and data rates.

The data rate of a link is ``lanes x signalling rate x encoding efficiency``:
8b/10b (0.8) for SDR, DDR and QDR, 64b/66b for FDR10 and later.  HDR and NDR
are given by the per-lane signalling rates that yield their nominal 50 and
100 Gb/s of data per lane.

=======  ==================  ========  ==================
speed    lane signalling     encoding  4x data rate
=======  ==================  ========  ==================
SDR      2.5 Gb/s            8b/10b    8 Gb/s
DDR      5 Gb/s              8b/10b    16 Gb/s
QDR      10 Gb/s             8b/10b    32 Gb/s
FDR10    10.3125 Gb/s        64b/66b   40 Gb/s
FDR      14.0625 Gb/s        64b/66b   54.54 Gb/s
EDR      25.78125 Gb/s       64b/66b   100 Gb/s
HDR      51.5625 Gb/s        64b/66b   200 Gb/s
NDR      103.125 Gb/s        64b/66b   400 Gb/s
=======  ==================  ========  ==================

>>> link_rate("4x", "QDR")
32000000000.0
>>> byte_time("1x", "SDR")   # ns per byte
4.0
"""

from __future__ import annotations

__all__ = ["LANE_SIGNALLING", "ENCODING", "WIDTHS", "link_rate", "signalling_rate", "byte_time", "check_link"]

#: Lane signalling rate (bit/s) of each speed.
LANE_SIGNALLING: dict[str, float] = {
    "SDR": 2.5e9,
    "DDR": 5e9,
    "QDR": 10e9,
    "FDR10": 10.3125e9,
    "FDR": 14.0625e9,
    "EDR": 25.78125e9,
    "HDR": 51.5625e9,
    "NDR": 103.125e9,
}

#: Encoding efficiency of each speed.
ENCODING: dict[str, float] = {s: (0.8 if s in ("SDR", "DDR", "QDR") else 64 / 66) for s in LANE_SIGNALLING}

#: Lanes of each width.
WIDTHS: dict[str, int] = {"1x": 1, "2x": 2, "4x": 4, "8x": 8, "12x": 12}


def check_link(width: str, speed: str) -> None:
    """Raise ValueError with the valid choices if *width* or *speed* is unknown."""
    if width not in WIDTHS:
        raise ValueError(f"'width' must be one of ({', '.join(WIDTHS)}) (got {width!r})")
    if speed not in LANE_SIGNALLING:
        raise ValueError(f"'speed' must be one of ({', '.join(LANE_SIGNALLING)}) (got {speed!r})")


def signalling_rate(width: str, speed: str) -> float:
    """Raw signalling rate in bit/s (what papers call the link rate: 1x SDR = 2.5 Gb/s)."""
    check_link(width, speed)
    return WIDTHS[width] * LANE_SIGNALLING[speed]


def link_rate(width: str, speed: str) -> float:
    """Data rate in bit/s after line encoding."""
    return signalling_rate(width, speed) * ENCODING[speed]


def byte_time(width: str, speed: str) -> float:
    """Serialisation time of one data byte, in ns."""
    return 8e9 / link_rate(width, speed)
