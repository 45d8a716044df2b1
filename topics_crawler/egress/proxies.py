"""Proxied requests keep the address checks: the proxy may be private, the target may not.

Proxies are Scrapy's own: ``HttpProxyMiddleware`` (750) sets ``meta["proxy"]`` from
``http_proxy`` / ``https_proxy`` (``no_proxy`` honoured), or a request carries its own. A
proxied request is connected to the proxy, which resolves the target's name itself: the
project's resolver (:mod:`topics_crawler.safety.resolver`) would see only the proxy's
address. This middleware (760, after it) keeps both checks where they belong:

* the **proxy's host** is what the operator configured: it may resolve to a private address
  (a proxy on the LAN, on 127.0.0.1), as the mirror may;
* the **target's name** is resolved here first, through the same resolver and its check, so
  a name resolving to a loopback, private or metadata address is refused
  (``safety/refused/private_address_dns``) before the proxy is ever asked. A name this
  machine cannot resolve at all is left to the proxy (``safety/proxy_resolves``): behind a
  proxy, local DNS may know only the proxy; its URL passed the URL checks
  (:mod:`topics_crawler.safety.links`: scheme, port, host, literal addresses) all the same.
"""

from __future__ import annotations

import ipaddress
import logging
from typing import TYPE_CHECKING, Self
from urllib.parse import urlsplit

from scrapy.utils.defer import maybe_deferred_to_future
from twisted.internet.error import DNSLookupError

from topics_crawler.safety.links import UnsafeUrl, mirror_netloc, shorten
from topics_crawler.safety.resolver import PRIVATE_ALLOWED, UnsafeAddress, mirror_host

if TYPE_CHECKING:
    from scrapy import Request
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)


class ProxiedAddressMiddleware:
    """Downloader middleware (see the module docstring)."""

    def __init__(self, crawler: Crawler) -> None:
        self.crawler = crawler
        self.mirror = mirror_host(crawler.settings.get("MEDIUM_BASE_URL"))
        self.mirror_netloc = mirror_netloc(crawler.settings.get("MEDIUM_BASE_URL"))

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls(crawler)

    async def process_request(self, request: Request) -> None:
        proxy = request.meta.get("proxy")
        if not proxy:
            return
        proxy_host = (urlsplit(str(proxy)).hostname or "").lower().rstrip(".")
        if proxy_host:
            PRIVATE_ALLOWED.add(proxy_host)  # the operator named it
        parts = urlsplit(request.url)
        host = (parts.hostname or "").lower().rstrip(".")
        if not host or _is_ip_literal(host) or host == self.mirror:
            return  # literals were judged by the URL checks; the mirror is allowed
        from twisted.internet import reactor  # noqa: PLC0415 - the crawl's installed resolver

        stats = self.crawler.stats
        assert stats is not None
        try:
            await maybe_deferred_to_future(reactor.resolver.getHostByName(host))
        except UnsafeAddress as exc:
            stats.inc_value("safety/refused/private_address_dns")
            logger.warning(
                "Refused private_address_dns URL %s (proxied): %s resolves to %s",
                shorten(request.url),
                host,
                exc.address,
            )
            raise UnsafeUrl(request.url, "private_address_dns") from exc
        except DNSLookupError:
            stats.inc_value("safety/proxy_resolves")  # local DNS does not know it


def _is_ip_literal(host: str) -> bool:
    try:
        ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False
    return True
