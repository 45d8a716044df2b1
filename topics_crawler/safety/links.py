"""Refuse requests the crawler has no business making: other hosts, private addresses, odd schemes.

Runs first among the downloader middlewares (before robots.txt, so a hostile
host is not even asked for its robots.txt, and long before the mirror at
950), on every request — including those built by the redirect middleware, so
a Medium URL that redirects to ``http://10.0.0.1/`` is never followed.

Allowed: ``http``/``https`` URLs up to ``MAX_URL_LENGTH`` characters, on the
default ports (80, 443) or one listed in ``LINK_SAFETY_ALLOWED_PORTS``, on
medium.com and its subdomains, on publication custom domains the spider
flagged (``meta["medium_custom_domain"]`` on a request that is not a redirect),
on hosts listed in ``LINK_SAFETY_ALLOWED_HOSTS``, and on the exact
``host:port`` of ``MEDIUM_BASE_URL`` (which may be loopback, as in tests).
Everything else raises :class:`UnsafeUrl` (the failure reason ``unsafe_url``),
counted as ``safety/refused/<reason>`` and logged with the URL.

Host *names* are checked once more after DNS resolution, by
:class:`topics_crawler.safety.resolver.SafeAddressResolver`: a name that resolves to a
private address fails, and :class:`RefusedAddressMiddleware` (just above the retry middleware)
fails the request as :class:`UnsafeUrl` (``safety/refused/private_address_dns``). The mirror's exact
``host:port`` is the one allowance for a private address — it is what the
operator configured (the tests crawl a local site on 127.0.0.1 through it);
the same address on any other port, or under any other name, is refused.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import TYPE_CHECKING, Literal, Self
from urllib.parse import urlsplit

from scrapy import Request
from scrapy.exceptions import CannotResolveHostError, IgnoreRequest
from twisted.internet.error import DNSLookupError

from topics_crawler.safety.resolver import REFUSED
from topics_crawler.urls import (
    MAX_URL_LENGTH,
    MEDIUM_CUSTOM_DOMAIN_META,
    MEDIUM_ROOT,
    is_medium_domain,
)

if TYPE_CHECKING:
    from collections.abc import Iterable

    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

RefusalReason = Literal[
    "scheme", "too_long", "bad_url", "private_address", "other_host", "port", "private_address_dns"
]
DEFAULT_PORTS = frozenset({80, 443})
_LOCAL_NAMES = ("localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback")
_LOCAL_SUFFIXES = (".localhost", ".local", ".internal", ".localdomain")


class UnsafeUrl(IgnoreRequest):
    """A request refused by :class:`LinkSafetyMiddleware`."""

    def __init__(self, url: str, reason: RefusalReason) -> None:
        super().__init__(f"refused {reason} URL {shorten(url)}")
        self.url = url
        self.reason = reason


def shorten(url: str, limit: int = 200) -> str:
    """``url`` cut to ``limit`` characters for logs (absurd URLs must not flood them)."""
    return url if len(url) <= limit else f"{url[:limit]}…({len(url)} chars)"


def is_private_host(host: str) -> bool:
    """True for loopback, private, link-local, reserved or unspecified IPs and local names."""
    host = host.lower().rstrip(".").strip("[]")
    if host in _LOCAL_NAMES or host.endswith(_LOCAL_SUFFIXES):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return _is_numeric_ipv4_alias(host)
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    return not address.is_global or address.is_multicast


def _is_numeric_ipv4_alias(host: str) -> bool:
    """``2130706433``, ``0x7f000001`` or ``127.1``: forms that resolvers read as an IPv4."""
    parts = host.split(".")
    if not all(part and (part.isdigit() or part.startswith("0x")) for part in parts):
        return False
    return len(parts) <= 4


class UrlPolicy:
    """Which URLs may be requested (pure: no stats, no logging)."""

    def __init__(
        self,
        allowed_hosts: Iterable[str] = (),
        allowed_netlocs: Iterable[str] = (),
        allowed_ports: Iterable[int] = (),
    ):
        self.allowed_hosts = {h.lower().removeprefix("www.") for h in allowed_hosts}
        self.allowed_netlocs = {n.lower() for n in allowed_netlocs}
        self.allowed_ports = DEFAULT_PORTS | set(allowed_ports)

    def refusal(self, url: str, custom_domain: bool = False) -> RefusalReason | None:
        """Why ``url`` must not be requested, or None when it may be.

        ``custom_domain``: the spider vouched for this host as a publication's own domain.
        """
        if len(url) > MAX_URL_LENGTH:
            return "too_long"
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower().rstrip(".")
            port = parts.port
            netloc = f"{host}:{port}" if port else host
        except ValueError:
            return "bad_url"
        if parts.scheme not in ("http", "https"):
            return "scheme"
        if not host:
            return "bad_url"
        if netloc in self.allowed_netlocs:
            return None
        if is_private_host(host):
            return "private_address"
        if port is not None and port not in self.allowed_ports:
            return "port"
        bare = host.removeprefix("www.")
        if is_medium_domain(bare) or bare in self.allowed_hosts or custom_domain:
            return None
        return "other_host"

    def allow_host(self, host: str) -> None:
        """Trust ``host`` from now on (a custom domain the spider vouched for)."""
        self.allowed_hosts.add(host.lower().removeprefix("www."))


def mirror_netloc(base_url: str | None) -> str | None:
    """``host:port`` of ``MEDIUM_BASE_URL`` when it is not medium.com itself."""
    if not base_url or base_url.rstrip("/") == MEDIUM_ROOT:
        return None
    parts = urlsplit(base_url)
    host = (parts.hostname or "").lower()
    if not host:
        return None
    return f"{host}:{parts.port}" if parts.port else host


class LinkSafetyMiddleware:
    """Downloader middleware enforcing :class:`UrlPolicy` on every request."""

    def __init__(self, crawler: Crawler, policy: UrlPolicy) -> None:
        self.crawler = crawler
        self.policy = policy

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        settings = crawler.settings
        mirror = mirror_netloc(settings.get("MEDIUM_BASE_URL"))
        policy = UrlPolicy(
            allowed_hosts=settings.getlist("LINK_SAFETY_ALLOWED_HOSTS"),
            allowed_netlocs=[mirror] if mirror else [],
            allowed_ports=[int(port) for port in settings.getlist("LINK_SAFETY_ALLOWED_PORTS")],
        )
        return cls(crawler, policy)

    def process_request(self, request: Request) -> None:
        redirected = bool(request.meta.get("redirect_urls"))
        vouched = bool(request.meta.get(MEDIUM_CUSTOM_DOMAIN_META)) and not redirected
        reason = self.policy.refusal(request.url, custom_domain=vouched)
        if reason is None:
            if vouched:
                self.policy.allow_host(urlsplit(request.url).hostname or "")
            return
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value(f"safety/refused/{reason}")
        origin = ""
        if redirected:
            origin = f" (redirected from {shorten(request.meta['redirect_urls'][0])})"
        logger.warning("Refused %s URL %s%s", reason, shorten(request.url), origin)
        raise UnsafeUrl(request.url, reason)


class RefusedAddressMiddleware:
    """Turns a failed lookup of a name the resolver refused into an :class:`UnsafeUrl`.

    Placed just above the retry middleware (whose exceptions to retry include failed
    DNS lookups), so a refused name is counted, logged and failed once, not retried.
    """

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    def process_exception(self, request: Request, exception: Exception) -> None:
        try:
            host = (urlsplit(request.url).hostname or "").lower().rstrip(".")
        except ValueError:
            return
        address = REFUSED.get(host)
        if address is None or not isinstance(exception, CannotResolveHostError | DNSLookupError):
            return
        assert self.crawler.stats is not None
        self.crawler.stats.inc_value("safety/refused/private_address_dns")
        logger.warning(
            "Refused private_address_dns URL %s: %s resolves to %s",
            shorten(request.url),
            host,
            address,
        )
        raise UnsafeUrl(request.url, "private_address_dns")
