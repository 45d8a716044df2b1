"""Record a crawl's responses once, re-run the parsers on them offline later.

    scrapy crawl topics -a tags=llm -s REPLAY_MODE=record   # fetch and store every response
    scrapy crawl topics -a tags=llm -s REPLAY_MODE=replay   # no network: stored responses only

Built on Scrapy's HTTP cache (``DummyPolicy``, filesystem storage, gzip):
``record`` fetches and stores every response, error statuses included (a
retry is fetched again, and the last answer is the one kept); ``replay`` serves
only stored ones and ignores the rest (counted as ``httpcache/ignore``), with
throttling off since nothing is downloaded. Responses are keyed by the
canonical Medium URL, so a recording made through one mirror replays through
any other, or against medium.com itself. ``REPLAY_DIR`` (default
``.scrapy/replay``) is where the responses live.

Secrets never reach the disk, whatever the settings' priorities: whenever an
HTTP cache is on (a recording, a replay, or ``HTTPCACHE_ENABLED`` set by hand),
the add-on puts :class:`CanonicalCacheStorage` in front of the configured
storage — at the priority the configured storage was set with, so a project or
command-line ``HTTPCACHE_STORAGE`` becomes the *inner* storage
(``REPLAY_INNER_STORAGE``) instead of bypassing the wrapper. The wrapper drops
``Cookie``, ``Authorization`` and ``Proxy-Authorization`` request headers,
``Set-Cookie`` response headers, and any other header whose value holds one of
the project's secrets (``MEDIUM_COOKIE``, ``MEDIUM_SID``…, see
:mod:`topics_crawler.safety.secrets`) before anything is stored.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from scrapy import Request, Spider
from scrapy.http import Headers, Response
from scrapy.settings import BaseSettings
from scrapy.utils.misc import load_object

from topics_crawler.safety.secrets import redactable, secret_values
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META

MODES = ("off", "record", "replay")
#: Request headers never written to disk: they may carry a session (MEDIUM_COOKIE).
PRIVATE_HEADERS = (b"Cookie", b"Authorization", b"Proxy-Authorization")
#: Response headers never written to disk: Medium refreshes the session through them.
PRIVATE_RESPONSE_HEADERS = (b"Set-Cookie", b"Set-Cookie2")
DEFAULT_DIR = ".scrapy/replay"
DEFAULT_INNER_STORAGE = "scrapy.extensions.httpcache.FilesystemCacheStorage"


class RecordReplay:
    """Add-on behind the ``REPLAY_MODE`` and ``REPLAY_DIR`` settings."""

    def update_settings(self, settings: BaseSettings) -> None:
        mode = str(settings.get("REPLAY_MODE") or "off").lower()
        if mode not in MODES:
            raise ValueError(f"REPLAY_MODE must be one of {', '.join(MODES)}, got {mode!r}")
        if mode == "off":
            if settings.getbool("HTTPCACHE_ENABLED"):
                self.guard_storage(settings)  # a plain HTTP cache: still no secrets in it
            return
        folder = Path(settings.get("REPLAY_DIR") or DEFAULT_DIR).resolve()
        settings.set("HTTPCACHE_ENABLED", True, priority="addon")
        settings.set("HTTPCACHE_DIR", str(folder), priority="addon")
        settings.set("HTTPCACHE_POLICY", "scrapy.extensions.httpcache.DummyPolicy", "addon")
        self.guard_storage(settings)
        settings.set("HTTPCACHE_EXPIRATION_SECS", 0, priority="addon")
        settings.set("HTTPCACHE_IGNORE_HTTP_CODES", [], priority="addon")
        settings.set("HTTPCACHE_IGNORE_MISSING", mode == "replay", priority="addon")
        if mode == "replay":
            settings.set("AUTOTHROTTLE_ENABLED", False, priority="addon")
            settings.set("DOWNLOAD_DELAY", 0, priority="addon")

    @staticmethod
    def guard_storage(settings: BaseSettings) -> None:
        """Make :class:`CanonicalCacheStorage` the cache storage, wrapping whatever
        storage was configured, at that setting's own priority (so it always wins)."""
        wrapper = f"{__name__}.CanonicalCacheStorage"
        configured = settings.get("HTTPCACHE_STORAGE") or DEFAULT_INNER_STORAGE
        if load_object(configured) is not CanonicalCacheStorage:
            settings.set("REPLAY_INNER_STORAGE", configured, priority="addon")
        priority = max(settings.getpriority("HTTPCACHE_STORAGE") or 0, 15)  # 15: addon
        settings.set("HTTPCACHE_STORAGE", wrapper, priority=priority)


def without_private_headers(
    request: Request, response: Response, secrets: Iterable[str] = ()
) -> tuple[Request, Response]:
    """Copies of ``request`` and ``response`` with no session-bearing header: the
    private ones by name, any other whose value holds one of ``secrets``."""
    encoded = [secret.encode("latin-1", "replace") for secret in secrets]

    def cleaned(headers: Headers, private: tuple[bytes, ...]) -> Headers:
        kept = headers.copy()
        for name in private:
            kept.pop(name, None)
        for name in list(kept.keys()):
            if any(s in value for value in kept.getlist(name) for s in encoded):
                kept.pop(name, None)
        return kept

    return (
        request.replace(headers=cleaned(request.headers, PRIVATE_HEADERS)),
        response.replace(headers=cleaned(response.headers, PRIVATE_RESPONSE_HEADERS)),
    )


class CanonicalCacheStorage:
    """Cache storage storing mirrored responses under their canonical URL and no
    private header, in front of the storage named by ``REPLAY_INNER_STORAGE``
    (Scrapy's filesystem storage unless set)."""

    def __init__(self, settings: BaseSettings) -> None:
        inner = settings.get("REPLAY_INNER_STORAGE") or DEFAULT_INNER_STORAGE
        self.inner = load_object(inner)(settings)
        #: Recording fetches every page, retries included (a stored 503 must not answer
        #: its own retry); a replay or a plain cache serves what is stored.
        self.serves = str(settings.get("REPLAY_MODE") or "off").lower() != "record"
        self.secrets = redactable(secret_values(settings))

    def open_spider(self, spider: Spider) -> None:
        self.inner.open_spider(spider)

    def close_spider(self, spider: Spider) -> None:
        self.inner.close_spider(spider)

    def retrieve_response(self, spider: Spider, request: Request) -> Response | None:
        if not self.serves:
            return None
        response: Response | None = self.inner.retrieve_response(spider, request)
        return response

    def store_response(self, spider: Spider, request: Request, response: Response) -> None:
        if request.meta.get(MIRROR_URL_META) == request.url:
            canonical = request.meta[CANONICAL_URL_META]
            request = request.replace(url=canonical)
            response = response.replace(url=canonical)
        self.inner.store_response(spider, *without_private_headers(request, response, self.secrets))
