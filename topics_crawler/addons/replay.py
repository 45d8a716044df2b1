"""Record a crawl's responses once, re-run the parsers on them offline later.

    scrapy crawl topics -a tags=llm -s REPLAY_MODE=record   # fetch and store every response
    scrapy crawl topics -a tags=llm -s REPLAY_MODE=replay   # no network: stored responses only

Built on Scrapy's HTTP cache (``DummyPolicy``, filesystem storage, gzip):
``record`` stores every response, error statuses included; ``replay`` serves
only stored ones and ignores the rest (counted as ``httpcache/ignore``), with
throttling off since nothing is downloaded. Responses are keyed by the
canonical Medium URL, so a recording made through one mirror replays through
any other, or against medium.com itself. Cookie and Authorization request
headers are never written. ``REPLAY_DIR`` (default ``.scrapy/replay``) is
where the responses live.
"""

from __future__ import annotations

from pathlib import Path

from scrapy import Request, Spider
from scrapy.extensions.httpcache import FilesystemCacheStorage
from scrapy.http import Response
from scrapy.settings import BaseSettings

from topics_crawler.fingerprint import CANONICAL_URL_META, MIRROR_URL_META

MODES = ("off", "record", "replay")
#: Request headers never written to disk: they may carry a session (MEDIUM_COOKIE).
PRIVATE_HEADERS = (b"Cookie", b"Authorization")
DEFAULT_DIR = ".scrapy/replay"


class RecordReplay:
    """Add-on behind the ``REPLAY_MODE`` and ``REPLAY_DIR`` settings."""

    def update_settings(self, settings: BaseSettings) -> None:
        mode = str(settings.get("REPLAY_MODE") or "off").lower()
        if mode not in MODES:
            raise ValueError(f"REPLAY_MODE must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "off":
            return
        folder = Path(settings.get("REPLAY_DIR") or DEFAULT_DIR).resolve()
        settings.set("HTTPCACHE_ENABLED", True, priority="addon")
        settings.set("HTTPCACHE_DIR", str(folder), priority="addon")
        settings.set("HTTPCACHE_POLICY", "scrapy.extensions.httpcache.DummyPolicy", "addon")
        settings.set("HTTPCACHE_STORAGE", f"{__name__}.CanonicalCacheStorage", "addon")
        settings.set("HTTPCACHE_EXPIRATION_SECS", 0, priority="addon")
        settings.set("HTTPCACHE_IGNORE_HTTP_CODES", [], priority="addon")
        settings.set("HTTPCACHE_IGNORE_MISSING", mode == "replay", priority="addon")
        if mode == "replay":
            settings.set("AUTOTHROTTLE_ENABLED", False, priority="addon")
            settings.set("DOWNLOAD_DELAY", 0, priority="addon")


class CanonicalCacheStorage(FilesystemCacheStorage):
    """Filesystem cache that stores mirrored responses under their canonical URL and
    drops private request headers."""

    def store_response(self, spider: Spider, request: Request, response: Response) -> None:
        if request.meta.get(MIRROR_URL_META) == request.url:
            canonical = request.meta[CANONICAL_URL_META]
            request = request.replace(url=canonical)
            response = response.replace(url=canonical)
        headers = request.headers.copy()
        for name in PRIVATE_HEADERS:
            headers.pop(name, None)
        super().store_response(spider, request.replace(headers=headers), response)
