"""scrapy-playwright's download handler, with Playwright started by the first browser request.

The stock handler starts the Playwright driver (a Node.js process) when the
engine starts, whether or not any request will be rendered — about a second
and tens of MB per crawl. In ``auto`` mode most crawls render a page or two
and many none, so this handler starts Playwright (and, as before, Chromium)
only when a request with ``meta["playwright"]`` arrives. Everything else —
plain requests, page and context limits, closing — is scrapy-playwright's.

Every request Chromium makes passes ``PLAYWRIGHT_ABORT_REQUEST``, then
:class:`~topics_crawler.browser.address_guard.BrowserAddressGuard` (no private
addresses, no odd ports).

A request rendered in a **fresh context** (``meta["playwright_context"]`` starting with
``fresh-``: a managed challenge's retry, see :mod:`topics_crawler.middlewares.render_policy`)
has that context closed as soon as its page is done, on error paths too: it holds one of
``PLAYWRIGHT_MAX_CONTEXTS`` (the crawl's own context, and one fresh at a time) and nothing
of it is used again.

The names it needs that are not public API are the handler's engine-start receiver,
``_maybe_launch_in_thread`` (scrapy-playwright 0.0.48 with Scrapy >= 2.14): it is
disconnected from ``engine_started`` and awaited on the first browser request instead;
and ``context_wrappers`` (its contexts by name), to close a fresh one.
tests/test_packaging.py fails when another scrapy-playwright release is installed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from scrapy import signals
from scrapy.http import Request, Response
from scrapy.utils.misc import load_object
from scrapy_playwright.handler import ScrapyPlaywrightDownloadHandler

from topics_crawler.browser.address_guard import BrowserAddressGuard
from topics_crawler.browser.config import CONTEXT_META, FRESH_CONTEXT_PREFIX

if TYPE_CHECKING:
    from scrapy.crawler import Crawler


class LazyPlaywrightDownloadHandler(ScrapyPlaywrightDownloadHandler):
    """Download handler for ``http``/``https`` (``DOWNLOAD_HANDLERS``)."""

    def __init__(self, crawler: Crawler) -> None:
        super().__init__(crawler)
        crawler.signals.disconnect(self._maybe_launch_in_thread, signals.engine_started)
        self.playwright_start_lock = asyncio.Lock()
        self.playwright_started = False
        configured = crawler.settings.get("PLAYWRIGHT_ABORT_REQUEST")
        inner = load_object(configured) if configured else None
        self.abort_request = BrowserAddressGuard.from_crawler(crawler, inner)

    async def download_request(self, request: Request) -> Response:
        if not request.meta.get("playwright"):
            return await super().download_request(request)
        async with self.playwright_start_lock:
            if not self.playwright_started:
                await self._maybe_launch_in_thread()
                self.playwright_started = True
        try:
            return await super().download_request(request)
        finally:
            name = request.meta.get(CONTEXT_META)
            if isinstance(name, str) and name.startswith(FRESH_CONTEXT_PREFIX):
                await self.close_context(name)

    async def close_context(self, name: str) -> None:
        """Close the browser context ``name`` (its close callback frees its slot)."""
        wrapper = self.context_wrappers.get(name)
        if wrapper is not None:
            await wrapper.context.close()
