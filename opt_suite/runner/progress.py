"""A live progress line on stderr: cells done / total, the current phase, elapsed time and ETA.

The ETA prices what is left: with each cell's price (``runner/cost_model.py``, from the committed
calibration), it is the elapsed time x (price of the cells left / price of the cells computed),
so a few long cells ahead (an expert's training, a discovery) are not read as the pace of many
short ones behind; without prices, elapsed / cells computed x cells left.

On a terminal the line is redrawn in place; otherwise (CI logs, files) a plain line is printed at
most every ``interval`` seconds and whenever the phase changes, so logs stay short.
"""

from __future__ import annotations

import math
import sys
import time
from collections.abc import Iterable, Mapping
from typing import TextIO

__all__ = ["Progress", "eta_from_prices", "format_duration"]


def format_duration(seconds: float) -> str:
    """``75`` -> ``1m15s``; ``3700`` -> ``1h01m``."""
    seconds = max(0, int(round(seconds)))
    if seconds < 60:
        return f"{seconds}s"
    if seconds < 3600:
        return f"{seconds // 60}m{seconds % 60:02d}s"
    return f"{seconds // 3600}h{seconds % 3600 // 60:02d}m"


def eta_from_prices(elapsed: float, price_done: float, price_left: float) -> float | None:
    """Seconds left: the elapsed time scaled by the price of what is left over what is done.

    None before any priced work is done (there is no pace yet).
    """
    if price_done <= 0 or not math.isfinite(price_done) or not math.isfinite(price_left):
        return None
    return elapsed * price_left / price_done


class Progress:
    """Tracks and draws the progress of one run.

    Args:
      total: cells planned.
      reused: cells already done before this run started (counted as done, excluded from ETA).
      stream: where to draw (stderr by default).
      interval: seconds between plain lines when ``stream`` is not a terminal.
      enabled: draw nothing when false (``--quiet``).
      prices: each planned cell's price in seconds (any scale: only ratios count), by cell id;
        None, or a price that is not finite: the ETA counts cells instead.
    """

    def __init__(
        self,
        total: int,
        reused: int = 0,
        stream: TextIO | None = None,
        interval: float = 10.0,
        enabled: bool = True,
        prices: Mapping[str, float] | None = None,
    ) -> None:
        self.total = total
        self.reused = reused
        self.done = reused
        self.failed = 0
        self.stream = stream or sys.stderr
        self.interval = interval
        self.enabled = enabled
        self.tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self.start = time.monotonic()
        self._last_line = 0.0
        self._last_phase = ""
        self._width = 0
        usable = prices is not None and all(math.isfinite(v) for v in prices.values())
        self._prices = dict(prices) if usable and prices is not None else None
        self._price_done = 0.0
        self._price_left = sum(self._prices.values()) if self._prices is not None else 0.0

    def reuse(self, cell_ids: Iterable[str]) -> None:
        """Count ``cell_ids`` as done before this run: not part of its pace, nor left."""
        ids = list(cell_ids)
        self.done = self.reused = len(ids)
        if self._prices is not None:
            self._price_left -= sum(self._prices.get(c, 0.0) for c in ids)

    def finished(self, cell_id: str) -> None:
        """A cell is done (computed here, or by another runner sharing the directory)."""
        self.done += 1
        self._paced(cell_id)

    def failed_cell(self, cell_id: str) -> None:
        """A cell failed: it is no longer left, and its time counts towards the pace."""
        self.failed += 1
        self._paced(cell_id)

    def _paced(self, cell_id: str) -> None:
        # A cell no longer running: its price moves from what is left to the pace.
        if self._prices is not None:
            price = self._prices.get(cell_id, 0.0)
            self._price_done += price
            self._price_left -= price

    def eta(self) -> float | None:
        """Seconds left, from the pace of the work computed so far (None before the first)."""
        computed = self.done + self.failed - self.reused
        remaining = self.total - self.done - self.failed
        if computed <= 0:
            return None
        elapsed = time.monotonic() - self.start
        if self._prices is not None and self._price_done > 0:
            priced = eta_from_prices(elapsed, self._price_done, max(0.0, self._price_left))
            if priced is not None:
                return priced
        return elapsed / computed * remaining

    def line(self, phase: str, detail: str = "") -> str:
        """The progress text for ``phase`` (e.g. ``discovery``) and ``detail`` (``2 running``)."""
        eta = self.eta()
        parts = [
            f"[{self.done}/{self.total} cells]",
            f"{phase} ({detail})" if detail else phase,
            f"elapsed {format_duration(time.monotonic() - self.start)}",
            f"ETA {format_duration(eta) if eta is not None else '?'}",
        ]
        if self.failed:
            parts.insert(1, f"{self.failed} failed")
        return " | ".join(parts)

    def update(self, phase: str, detail: str = "", force: bool = False) -> None:
        """Redraw (terminal) or print a line if due (phase changed, interval passed, ``force``)."""
        if not self.enabled:
            return
        now = time.monotonic()
        text = self.line(phase, detail)
        if self.tty:
            pad = max(0, self._width - len(text))
            self.stream.write("\r" + text + " " * pad)
            self._width = len(text)
        elif force or phase != self._last_phase or now - self._last_line >= self.interval:
            self.stream.write(text + "\n")
            self._last_line = now
        self._last_phase = phase
        self.stream.flush()

    def message(self, text: str) -> None:
        """Print a line (e.g. a failed cell) without garbling the live line."""
        if self.tty and self._width:
            self.stream.write("\r" + " " * self._width + "\r")
            self._width = 0
        self.stream.write(text + "\n")
        self.stream.flush()

    def close(self) -> None:
        """End the live line."""
        if self.enabled and self.tty and self._width:
            self.stream.write("\n")
            self.stream.flush()
            self._width = 0
