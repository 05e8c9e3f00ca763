"""What the benchmark scripts share when they write their tables.

A script is run as a file (``python benchmarks/<dir>/<script>.py``), so it puts this folder on
``sys.path`` before importing from here.
"""

from __future__ import annotations

import statistics


def spread(values: list[float], fmt: str = ".2f") -> str:
    """``median (min–max)`` of ``values``, each in ``fmt``: a figure over rounds, with its range."""
    low, mid, high = (format(v, fmt) for v in (min(values), statistics.median(values), max(values)))
    return f"{mid} ({low}–{high})"
