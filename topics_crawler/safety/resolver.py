"""A DNS resolver that refuses names resolving to addresses a crawler must never connect to.

Installed with ``TWISTED_DNS_RESOLVER`` (Scrapy's public hook for the resolver
its downloader connects through), so the check sees the address actually
connected to — for every request, redirects included, after the URL checks of
:mod:`topics_crawler.safety.links` (which cover literal addresses,
schemes and ports). A name resolving to a loopback, private, link-local
(cloud metadata: 169.254.169.254), carrier-grade NAT, reserved, multicast or
unspecified address fails the download with :class:`UnsafeAddress` (failure
``safety/refused/private_address_dns``, never retried), whatever the name —
``medium.com`` included. Twisted reports any failed lookup to the connecting
code as a plain "DNS lookup failed", so the refused names are also kept in
:data:`REFUSED` for :class:`~topics_crawler.safety.links.RefusedAddressMiddleware`,
which turns those failures into refusals before the retry middleware sees them.

The exceptions are what the operator configured: the host of ``MEDIUM_BASE_URL``
when it is not medium.com (the local site of the tests, an archive on the
LAN), and the host of a proxy requests go through (:data:`PRIVATE_ALLOWED`), may resolve
to a private address. Only those exact names; any other name mapped to the same address
is refused.

Results are cached like Scrapy's default resolver (``DNSCACHE_ENABLED``,
``DNSCACHE_SIZE``, ``DNS_TIMEOUT``); the check runs on every lookup, cached or not.
"""

from __future__ import annotations

import ipaddress
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from scrapy.resolver import CachingThreadedResolver
from twisted.internet.error import DNSLookupError

from topics_crawler.urls import MEDIUM_ROOT

if TYPE_CHECKING:
    from collections.abc import Iterable, Sequence

    from scrapy.crawler import Crawler
    from twisted.internet.base import ReactorBase
    from twisted.internet.defer import Deferred


#: Names this process refused, with the address they resolved to (the resolver is
#: process-wide, installed on the reactor, like Scrapy's DNS cache).
REFUSED: dict[str, str] = {}
#: Names the operator configured that may resolve to a private address besides the mirror:
#: the proxies requests go through (:mod:`topics_crawler.egress.proxies` adds them).
PRIVATE_ALLOWED: set[str] = set()


class UnsafeAddress(DNSLookupError):
    """A host name resolved to an address the crawler must not connect to."""

    def __init__(self, name: str, address: str) -> None:
        super().__init__(f"refused {name}: it resolves to {address}, not a public address")
        self.name = name
        self.address = address


def is_public_address(address: str) -> bool:
    """True for a global unicast IP address (IPv4-mapped IPv6 judged by its IPv4)."""
    try:
        ip = ipaddress.ip_address(address.strip("[]"))
    except ValueError:
        return False
    if isinstance(ip, ipaddress.IPv6Address) and ip.ipv4_mapped is not None:
        ip = ip.ipv4_mapped
    return ip.is_global and not ip.is_multicast


def mirror_host(base_url: str | None) -> str | None:
    """The host name of ``MEDIUM_BASE_URL`` when it is a mirror, not medium.com itself."""
    if not base_url or base_url.rstrip("/") == MEDIUM_ROOT:
        return None
    try:
        host = urlsplit(base_url).hostname
    except ValueError:
        return None
    return host.lower().rstrip(".") if host else None


class SafeAddressResolver(CachingThreadedResolver):
    """Scrapy's caching resolver plus the address check (``TWISTED_DNS_RESOLVER``)."""

    def __init__(
        self,
        reactor: ReactorBase,
        cache_size: int,
        timeout: float,
        private_allowed: Iterable[str] = (),
    ) -> None:
        super().__init__(reactor, cache_size, timeout)
        self.private_allowed = frozenset(name.lower().rstrip(".") for name in private_allowed)

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> Self:
        settings = crawler.settings
        cache_size = settings.getint("DNSCACHE_SIZE") if settings.getbool("DNSCACHE_ENABLED") else 0
        mirror = mirror_host(settings.get("MEDIUM_BASE_URL"))
        return cls(
            reactor, cache_size, settings.getfloat("DNS_TIMEOUT"), [mirror] if mirror else []
        )

    def getHostByName(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        deferred = self.lookup(name, timeout)
        deferred.addCallback(self.check, name)
        return deferred

    def lookup(self, name: str, timeout: Sequence[int] = ()) -> Deferred[str]:
        """The raw (cached) lookup; test resolvers replace this and keep the check."""
        return super().getHostByName(name, timeout)

    def check(self, address: str, name: str) -> str:
        """``address`` when ``name`` may be connected to at it; else :class:`UnsafeAddress`."""
        key = name.lower().rstrip(".")
        if is_public_address(address) or key in self.private_allowed or key in PRIVATE_ALLOWED:
            return address
        REFUSED[name.lower().rstrip(".")] = address
        raise UnsafeAddress(name, address)
