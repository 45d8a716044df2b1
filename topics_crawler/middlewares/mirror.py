"""Send medium.com requests to a mirror (``MEDIUM_BASE_URL``), keep canonical URLs everywhere else.

``https://medium.com/<path>`` is fetched from ``<base>/<path>``; any other
Medium host (a ``*.medium.com`` subdomain, a publication's custom domain) from
``<base>/_host/<host>/<path>``. Spiders, parsers and items only ever see the
canonical URL: the response is handed back under it, and ``Location`` headers
that point into the mirror are mapped back too.

The request is rewritten late in the chain (after robots.txt was checked for
the canonical URL; the mirror's own robots.txt is checked too) and rescheduled
with ``dont_filter``; its fingerprint stays the canonical one (see
:mod:`topics_crawler.fingerprint`), so the HTTP cache and dupefilter key on it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self
from urllib.parse import urljoin, urlsplit, urlunsplit

from scrapy import Request, Spider
from scrapy.exceptions import NotConfigured
from scrapy.http import Response

from topics_crawler.fingerprint import CANONICAL_URL_META, MIRROR_URL_META
from topics_crawler.urls import MEDIUM_HOST, MEDIUM_ROOT

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

HOST_PREFIX = "/_host/"
#: Request meta flag set by spiders: this host is a publication's custom domain on Medium.
MEDIUM_CUSTOM_DOMAIN_META = "medium_custom_domain"


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

    def to_canonical(self, url: str) -> str:
        """Canonical URL for a mirror URL (other URLs come back unchanged)."""
        parts = urlsplit(url)
        if parts.netloc != self.netloc or not parts.path.startswith(self.prefix):
            return url
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
            raise NotConfigured("MEDIUM_BASE_URL is medium.com itself")
        return cls(MirrorMap(base))

    def process_request(self, request: Request, spider: Spider) -> Request | None:
        custom_domain = bool(request.meta.get(MEDIUM_CUSTOM_DOMAIN_META))
        mirror_url = self.mirror.to_mirror(request.url, custom_domain)
        if mirror_url is None:
            return None
        meta = {**request.meta, CANONICAL_URL_META: request.url, MIRROR_URL_META: mirror_url}
        return request.replace(url=mirror_url, meta=meta, dont_filter=True)

    def process_response(self, request: Request, response: Response, spider: Spider) -> Response:
        canonical = request.meta.get(CANONICAL_URL_META)
        if not canonical or request.meta.get(MIRROR_URL_META) != request.url:
            return response
        headers = response.headers.copy()
        location = headers.get(b"Location")
        if location:
            absolute = urljoin(response.url, location.decode("latin-1"))
            headers[b"Location"] = self.mirror.to_canonical(absolute).encode("latin-1")
        canonical_url = self.mirror.to_canonical(response.url)
        if canonical_url == response.url:  # fetched outside the mirror
            canonical_url = canonical
        return response.replace(url=canonical_url, headers=headers)
