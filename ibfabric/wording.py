"""Counted nouns in messages and reports: ``1 run``, ``2 runs``, ``1 switch``, ``3 switches``."""

from __future__ import annotations

__all__ = ["counted"]


def counted(n: int, noun: str, plural: str | None = None) -> str:
    """*n* followed by *noun*, in the plural (``noun + "s"`` unless *plural* is given) unless *n* is 1.

    Examples
    --------
    >>> counted(1, "run"), counted(0, "run"), counted(12, "run")
    ('1 run', '0 runs', '12 runs')
    >>> counted(1, "switch", "switches"), counted(2, "switch", "switches")
    ('1 switch', '2 switches')
    """
    return f"{n} {noun if n == 1 else (plural or noun + 's')}"
