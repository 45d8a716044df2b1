"""Zyte API as the crawl's egress, turned on by one setting: ``ZYTE_API_KEY``.

With the key set (``-s ZYTE_API_KEY=…`` or the environment) and the ``zyte`` extra installed
(``pip install '.[zyte]'``), this add-on turns on scrapy-zyte-api's own add-on
(``scrapy_zyte_api.Addon``): its download handler sends every request to Zyte API
(transparent mode), which fetches the page from its own addresses; the spiders, parsers and
middlewares are unchanged. A page the render policy would send through Chromium is asked of
Zyte API rendered instead (``browserHtml``; a tag page scrolled to the bottom once): the
browser actions of scrapy-playwright do not apply there. The key set without the package
installed stops the crawl before it starts, with one line saying what to install.

Everything else is scrapy-zyte-api's: ``ZYTE_API_URL`` (its endpoint, for a stand-in in
tests), ``ZYTE_API_TRANSPARENT_MODE``, retries, stats (``scrapy-zyte-api/…``).
"""

from __future__ import annotations

import os

from scrapy.settings import BaseSettings

from topics_crawler.errors import CrawlNotStarted, check_or_log

#: The one setting (also read from the environment) that turns Zyte API on.
KEY_SETTING = "ZYTE_API_KEY"


def zyte_api_key(settings: BaseSettings) -> str | None:
    """The Zyte API key, from the settings, else the environment (scrapy-zyte-api's order)."""
    return settings.get(KEY_SETTING) or os.environ.get(KEY_SETTING) or None


class ZyteApiEgress:
    """Add-on (``ADDONS``): scrapy-zyte-api's add-on when ``ZYTE_API_KEY`` is set."""

    @staticmethod
    def preflight(settings: BaseSettings) -> None:
        """The key without the package: the crawl does not start (one line, what to do)."""
        if zyte_api_key(settings) is None:
            return
        try:
            import scrapy_zyte_api  # noqa: F401, PLC0415 - only with a key
        except ImportError as exc:
            raise CrawlNotStarted(
                f"{KEY_SETTING} is set but scrapy-zyte-api is not installed: "
                "pip install '.[zyte]' (or unset the key)"
            ) from exc

    def update_settings(self, settings: BaseSettings) -> None:
        if zyte_api_key(settings) is None:
            return
        check_or_log(self.preflight, settings)
        from scrapy_zyte_api import Addon  # noqa: PLC0415

        Addon().update_settings(settings)
