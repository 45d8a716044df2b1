"""Send Medium requests to a mirror (``MEDIUM_BASE_URL``), keep canonical URLs everywhere else.

``https://medium.com/<path>`` is fetched from ``<base>/<path>``; any other
Medium host (a ``*.medium.com`` subdomain, or a publication's custom domain,
flagged by the spider with ``meta["medium_custom_domain"]``) from
``<base>/_host/<host>/<path>``. Spiders, parsers and items only ever see the
canonical URL: every response from the mirror is handed back under it.

The middleware runs early (before robots.txt): a canonical request is
rescheduled under its mirror URL with ``dont_filter`` (it passed the
dupefilter already, and its fingerprint stays the canonical one, see
:mod:`topics_crawler.scheduling.fingerprint`), so robots.txt, retries, redirects and the
HTTP cache all work on the mirror as on medium.com, and the mirror's own
robots.txt governs what is fetched from it. A request that is already on the
mirror host (a redirect inside the mirror, a retry) gets its canonical URL
worked out from its mirror URL.

Before a crawl starts, ``scrapy crawl`` asks :func:`mirror_not_answering` whether the mirror
accepts a connection at all: a mirror that is down is one line naming it and exit status 1
in well under a second, not 13 s of retries and two tracebacks.
"""

from __future__ import annotations

import socket
import urllib.request
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit, urlunsplit

from scrapy import Request
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from topics_crawler import settings as defaults
from topics_crawler.scheduling.fingerprint import CANONICAL_URL_META, MIRROR_URL_META
from topics_crawler.urls import MEDIUM_CUSTOM_DOMAIN_META, MEDIUM_HOST, MEDIUM_ROOT

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from scrapy.settings import BaseSettings

HOST_PREFIX = "/_host/"


#: Seconds the start-up check waits for the mirror to accept a connection.
MIRROR_CONNECT_TIMEOUT = 5.0


def mirror_not_answering(settings: BaseSettings) -> str | None:
    """Why the mirror (``MEDIUM_BASE_URL``, when it is not medium.com) cannot be crawled, in
    one line, or None: a TCP connection to it is refused, times out or its name is unknown
    (to the system's resolver, which is the crawl's unless ``TWISTED_DNS_RESOLVER`` says
    otherwise).

    Not checked when the crawl would not connect to it directly: replaying recorded
    responses (``REPLAY_MODE=replay``), through a proxy from the environment, or through
    Zyte API (``ZYTE_API_KEY``)."""
    base = str(settings.get("MEDIUM_BASE_URL") or MEDIUM_ROOT).rstrip("/")
    if base == MEDIUM_ROOT or settings.get("REPLAY_MODE") == "replay":
        return None
    if settings.get("ZYTE_API_KEY"):
        return None
    parts = urlsplit(base)
    host = parts.hostname
    if host is None:
        return None  # a malformed URL: the settings check says so
    if parts.scheme in urllib.request.getproxies() and not urllib.request.proxy_bypass(host):
        return None
    port = parts.port or (443 if parts.scheme == "https" else 80)
    try:
        with socket.create_connection((host, port), timeout=MIRROR_CONNECT_TIMEOUT):
            return None
    except ConnectionRefusedError:
        why = "connection refused"
    except TimeoutError:
        why = f"no answer within {MIRROR_CONNECT_TIMEOUT:g} s"
    except socket.gaierror as exc:
        if settings.get("TWISTED_DNS_RESOLVER") != defaults.TWISTED_DNS_RESOLVER:
            return None  # the crawl's own resolver may know the name
        why = f"unknown host ({exc.strerror})"
    except OSError as exc:
        why = (exc.strerror or str(exc)).lower()
    return f"MEDIUM_BASE_URL {base} is not answering: {why}"


class MirrorMap:
    """Two-way mapping between canonical Medium URLs and mirror URLs."""

    def __init__(self, base_url: str) -> None:
        parts = urlsplit(base_url.rstrip("/"))
        if parts.scheme not in ("http", "https") or not parts.netloc:
            raise ValueError(f"MEDIUM_BASE_URL must be an http(s) URL, got {base_url!r}")
        self.scheme = parts.scheme
        self.netloc = parts.netloc
        self.prefix = parts.path.rstrip("/")
        self.base = urlunsplit((self.scheme, self.netloc, self.prefix, "", ""))

    def to_mirror(self, url: str, custom_domain: bool = False) -> str | None:
        """Mirror URL for a canonical Medium URL (``custom_domain``: the host is a Medium
        publication's own domain); None for URLs that stay as they are."""
        parts = urlsplit(url)
        host = (parts.hostname or "").lower()
        if host.startswith("www."):
            host = host[4:]
        if host == MEDIUM_HOST:
            path = parts.path
        elif host.endswith("." + MEDIUM_HOST) or custom_domain:
            path = f"{HOST_PREFIX}{host}{parts.path or '/'}"
        else:
            return None
        return urlunsplit((self.scheme, self.netloc, self.prefix + path, parts.query, ""))

    def is_mirror_url(self, url: str) -> bool:
        """True for URLs served by the mirror (its host, under its path prefix)."""
        parts = urlsplit(url)
        return parts.netloc == self.netloc and parts.path.startswith(self.prefix)

    def to_canonical(self, url: str) -> str:
        """Canonical URL for a mirror URL (other URLs come back unchanged)."""
        if not self.is_mirror_url(url):
            return url
        parts = urlsplit(url)
        path = parts.path[len(self.prefix) :] or "/"
        host_root = MEDIUM_ROOT
        if path.startswith(HOST_PREFIX):
            host, _, rest = path[len(HOST_PREFIX) :].partition("/")
            host_root, path = f"https://{host}", "/" + rest
        return urlunsplit(("https", urlsplit(host_root).netloc, path, parts.query, ""))


class MediumMirrorMiddleware:
    """Downloader middleware behind the ``MEDIUM_BASE_URL`` setting."""

    def __init__(self, mirror: MirrorMap) -> None:
        self.mirror = mirror

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        base = crawler.settings.get("MEDIUM_BASE_URL") or MEDIUM_ROOT
        if base.rstrip("/") == MEDIUM_ROOT:
            raise NotConfigured  # crawling medium.com itself: the normal case
        return cls(MirrorMap(base))

    def process_request(self, request: Request) -> Request | None:
        if self.mirror.is_mirror_url(request.url):
            if request.meta.get(MIRROR_URL_META) != request.url:
                request.meta[MIRROR_URL_META] = request.url
                request.meta[CANONICAL_URL_META] = self.mirror.to_canonical(request.url)
            return None
        custom_domain = bool(request.meta.get(MEDIUM_CUSTOM_DOMAIN_META))
        mirror_url = self.mirror.to_mirror(request.url, custom_domain)
        if mirror_url is None:
            return None
        meta = {**request.meta, CANONICAL_URL_META: request.url, MIRROR_URL_META: mirror_url}
        return request.replace(url=mirror_url, meta=meta, dont_filter=True)

    def process_response(self, request: Request, response: Response) -> Response:
        if request.meta.get(MIRROR_URL_META) != request.url:
            return response  # not fetched through the mirror
        canonical = request.meta[CANONICAL_URL_META]
        return response if response.url == canonical else response.replace(url=canonical)
