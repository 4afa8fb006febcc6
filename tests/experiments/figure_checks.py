"""Checks of a drawn matplotlib figure that a reader would make: nothing clipped, nothing
too small to read."""

from __future__ import annotations

from typing import Any

from matplotlib.text import Text

#: The smallest text a figure of the docs may have, in points.
MIN_POINTS = 7.5


def inside(fig: Any, artist: Any) -> bool:
    """Whether ``artist``'s drawn extent lies within the figure (after a draw)."""
    box, f = artist.get_window_extent(fig.canvas.get_renderer()), fig.bbox
    return (box.x0 >= f.x0 - 0.5 and box.y0 >= f.y0 - 0.5 and box.x1 <= f.x1 + 0.5
            and box.y1 <= f.y1 + 0.5)


def small_texts(fig: Any) -> list[tuple[str, float]]:
    """The visible texts of ``fig`` below :data:`MIN_POINTS` (text, size)."""
    return [(t.get_text(), t.get_fontsize()) for t in fig.findobj(Text)
            if t.get_text() and t.get_visible() and t.get_fontsize() < MIN_POINTS]
