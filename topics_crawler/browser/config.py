"""Browser settings (``RENDER_*``) read once into :class:`BrowserConfig`.

scrapy-playwright reads its own ``PLAYWRIGHT_*`` settings (launch options,
context and page limits, aborted resources); this is what the render policy
and the browser actions need on top of them.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal

from scrapy.settings import BaseSettings

from topics_crawler import settings as defaults

RenderMode = Literal["auto", "always", "never"]
RENDER_MODES: tuple[RenderMode, ...] = ("auto", "always", "never")
#: scrapy-playwright's context name of a request, and the prefix of a fresh context's name.
CONTEXT_META = "playwright_context"
FRESH_CONTEXT_PREFIX = "fresh-"


@dataclass(frozen=True)
class BrowserConfig:
    """When requests go through Chromium and how long a render may take."""

    mode: RenderMode = defaults.RENDER_MODE
    """``auto``: the browser only where a page needs it; ``always``; ``never``."""
    scroll_idle_tries: int = defaults.RENDER_SCROLL_IDLE_TRIES
    """Tag pages: stop loading more cards after this many rounds that added none."""
    scroll_pause_ms: int = round(defaults.RENDER_SCROLL_PAUSE * 1000)
    """Tag pages: how long one round waits for new cards after a scroll or click."""
    time_budget_ms: int = round(defaults.RENDER_TIME_BUDGET * 1000)
    """Tag pages: the whole load-more loop ends after this long."""
    settle_ms: int = round(defaults.RENDER_SETTLE_TIMEOUT * 1000)
    """Longest wait for a page to go quiet (no network for 500 ms) or leave a challenge."""

    @classmethod
    def from_settings(cls, settings: BaseSettings) -> BrowserConfig:
        """Read and check the ``RENDER_*`` settings; ``ValueError`` names a bad one."""
        mode = str(settings.get("RENDER_MODE") or defaults.RENDER_MODE).strip().lower()
        if mode not in RENDER_MODES:
            raise ValueError(f"RENDER_MODE must be one of {', '.join(RENDER_MODES)}, got {mode!r}")
        config = cls(
            mode=mode,
            scroll_idle_tries=settings.getint(
                "RENDER_SCROLL_IDLE_TRIES", defaults.RENDER_SCROLL_IDLE_TRIES
            ),
            scroll_pause_ms=round(
                settings.getfloat("RENDER_SCROLL_PAUSE", defaults.RENDER_SCROLL_PAUSE) * 1000
            ),
            time_budget_ms=round(
                settings.getfloat("RENDER_TIME_BUDGET", defaults.RENDER_TIME_BUDGET) * 1000
            ),
            settle_ms=round(
                settings.getfloat("RENDER_SETTLE_TIMEOUT", defaults.RENDER_SETTLE_TIMEOUT) * 1000
            ),
        )
        for name, value in (
            ("RENDER_SCROLL_IDLE_TRIES", config.scroll_idle_tries),
            ("RENDER_SCROLL_PAUSE", config.scroll_pause_ms),
            ("RENDER_TIME_BUDGET", config.time_budget_ms),
            ("RENDER_SETTLE_TIMEOUT", config.settle_ms),
        ):
            if value <= 0:
                raise ValueError(f"{name} must be greater than 0, got {settings.get(name)!r}")
        return config
