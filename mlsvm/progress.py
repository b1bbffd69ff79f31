"""A tiny progress line for long CLI runs (CV grids, benchmarks, reproductions).

It draws only when its stream is a terminal (``stream.isatty()``); written to a file, a pipe or
a CI log it prints nothing at all, so redirected output stays clean. No dependency, no thread:
the line is redrawn (``\\r``) by :meth:`Progress.update`, at most every ``min_interval`` seconds
(the first and the last step are always drawn). The library never writes to the terminal by
itself: the CLI creates a ``Progress`` and passes it (or its ``update``) where work is counted.

>>> with Progress(total=len(grid), label="grid") as bar:     # doctest: +SKIP
...     for params in grid:
...         run(params); bar.update()
"""

from __future__ import annotations

import sys
import time

__all__ = ["Progress", "progress", "is_terminal"]


def is_terminal(stream) -> bool:
    """True only for an open stream whose ``isatty()`` says so; never raises.

    Parameters
    ----------
    stream : file-like or None
        The stream to test.
    """
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError, OSError):  # no isatty, or a closed stream
        return False


def _format_seconds(seconds: float) -> str:
    seconds = int(round(seconds))
    minutes, seconds = divmod(seconds, 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{seconds:02d}" if hours else f"{minutes}:{seconds:02d}"


class Progress:
    """Counts ``done`` out of ``total`` steps and shows ``label [#####-----] 5/10 50% 0:03 < 0:03``.

    ``total=None`` (unknown length) shows the count and the elapsed time only. ``stream`` defaults
    to ``sys.stderr``; nothing is written unless it is a terminal. ``clock`` is injectable for tests.

    Parameters
    ----------
    total : int or None
        Number of steps expected (None if unknown).
    label : str
        Text shown before the progress bar.
    stream : file-like or None
        Output stream (e.g. ``sys.stderr``); None writes nothing.
    width : int
        Width of the bar in characters.
    min_interval : float
        Minimal seconds between two redraws.
    clock : callable
        Time source (for tests).
    """

    def __init__(self, total: int | None = None, label: str = "", *, stream=None, width: int = 24,
                 min_interval: float = 0.1, clock=time.monotonic):
        if total is not None and (isinstance(total, bool) or not isinstance(total, int) or total < 0):
            raise ValueError(f"total must be a non-negative int or None; got {total!r}")
        if not isinstance(width, int) or isinstance(width, bool) or width < 1:
            raise ValueError(f"width must be a positive int; got {width!r}")
        if not min_interval >= 0:
            raise ValueError(f"min_interval must be ≥ 0 seconds; got {min_interval!r}")
        self.total, self.label, self.width, self.min_interval = total, label, width, min_interval
        self.stream = sys.stderr if stream is None else stream
        self.enabled = is_terminal(self.stream)
        self.done = 0
        self._clock = clock
        self._start = clock()
        self._last_draw = None
        self._last_length = 0
        self._closed = False

    def update(self, steps: int = 1) -> None:
        """Count ``steps`` more finished steps and redraw if due."""
        if isinstance(steps, bool) or not isinstance(steps, int) or steps < 0:
            raise ValueError(f"steps must be a non-negative int; got {steps!r}")
        self.done += steps
        if not self.enabled or self._closed:
            return
        now = self._clock()
        finished = self.total is not None and self.done >= self.total
        if self._last_draw is None or finished or now - self._last_draw >= self.min_interval:
            self._draw(now)

    def render(self, now: float | None = None) -> str:
        """The progress line (without ``\\r``) for the current count."""
        elapsed = (self._clock() if now is None else now) - self._start
        head = f"{self.label} " if self.label else ""
        if not self.total:
            return f"{head}{self.done} done {_format_seconds(elapsed)}"
        fraction = min(self.done / self.total, 1.0)
        filled = int(fraction * self.width)
        bar = "#" * filled + "-" * (self.width - filled)
        remaining = elapsed * (self.total - self.done) / self.done if 0 < self.done < self.total else 0.0
        return (f"{head}[{bar}] {self.done}/{self.total} {fraction:4.0%} "
                f"{_format_seconds(elapsed)} < {_format_seconds(remaining)}")

    def _draw(self, now: float) -> None:
        line = self.render(now)
        padding = " " * max(0, self._last_length - len(line))  # wipe a longer previous line
        self.stream.write("\r" + line + padding)
        self.stream.flush()
        self._last_draw, self._last_length = now, len(line)

    def close(self) -> None:
        """Draw the final state and end the line (only if anything was drawn)."""
        if self._closed:
            return
        if self.enabled:
            self._draw(self._clock())
            self.stream.write("\n")
            self.stream.flush()
        self._closed = True

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc_info) -> None:
        self.close()


def progress(iterable, total: int | None = None, label: str = "", *, stream=None, **options):
    """Yield from ``iterable``, counting each item on a :class:`Progress` (``total`` defaults to
    ``len(iterable)`` when it has one).

    Parameters
    ----------
    iterable : iterable
        The items to iterate over.
    total : int or None
        Number of steps expected (None if unknown).
    label : str
        Text shown before the progress bar.
    stream : file-like or None
        Output stream (e.g. ``sys.stderr``); None writes nothing.
    **options
        Passed to :class:`Progress`.
    """
    if total is None and hasattr(iterable, "__len__"):
        total = len(iterable)
    bar = Progress(total, label, stream=stream, **options)  # validates now, not at the first item
    return _counted(iterable, bar)


def _counted(iterable, bar: Progress):
    with bar:
        for item in iterable:
            yield item
            bar.update()
