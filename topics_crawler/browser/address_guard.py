"""The address check for what Chromium fetches: it resolves names itself, past Scrapy's resolver.

:class:`BrowserAddressGuard` wraps ``PLAYWRIGHT_ABORT_REQUEST`` (scrapy-playwright
calls it for every request a rendered page makes: the navigation, its redirects,
scripts, XHRs): of what that predicate lets through, it aborts a request to a
port other than 80/443 (``LINK_SAFETY_ALLOWED_PORTS`` adds some), to a literal
private address, or to a host name that resolves to one — with the same exception as everywhere: the
mirror's exact ``host:port`` (``MEDIUM_BASE_URL``). Each refusal is counted
(``safety/refused/browser``) and logged with its URL. Which *hosts* a page may
load from is not limited (Medium's pages load from several CDNs); the URL of the
page itself passed :mod:`topics_crawler.safety.links` before the
browser got it.

Chromium resolves the name again when it connects, so a name whose address
changes between the two lookups (DNS rebinding) is not caught here; requests
over plain HTTP go through :mod:`topics_crawler.safety.resolver`, which has no such gap.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import socket
from collections.abc import Awaitable, Callable, Iterable
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from topics_crawler.safety.links import DEFAULT_PORTS, mirror_netloc
from topics_crawler.safety.resolver import is_public_address

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

logger = logging.getLogger(__name__)

Resolve = Callable[[str], Awaitable[list[str]]]
#: Schemes that never reach the network.
LOCAL_SCHEMES = frozenset({"data", "blob", "about"})


async def system_resolve(host: str) -> list[str]:
    """Every address the system resolver gives for ``host``."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, None, type=socket.SOCK_STREAM)
    return [str(info[4][0]) for info in infos]


class BrowserAddressGuard:
    """Async ``PLAYWRIGHT_ABORT_REQUEST`` predicate: ``inner``, then the address check."""

    def __init__(
        self,
        inner: Callable[[Any], Any] | None,
        mirror: str | None = None,
        allowed_ports: Iterable[int] = (),
        resolve: Resolve = system_resolve,
        crawler: Crawler | None = None,
    ) -> None:
        self.inner = inner
        self.mirror = mirror
        self.allowed_ports = DEFAULT_PORTS | set(allowed_ports)
        self.resolve = resolve
        self.crawler = crawler
        self._verdicts: dict[str, bool] = {}
        """Host name → whether every address it resolved to is public."""

    @classmethod
    def from_crawler(
        cls, crawler: Crawler, inner: Callable[[Any], Any] | None
    ) -> BrowserAddressGuard:
        settings = crawler.settings
        ports = [int(port) for port in settings.getlist("LINK_SAFETY_ALLOWED_PORTS")]
        mirror = mirror_netloc(settings.get("MEDIUM_BASE_URL"))
        return cls(inner, mirror, ports, crawler=crawler)

    async def __call__(self, request: Any) -> bool:
        if self.inner is not None:  # first: what it aborts anyway needs no DNS lookup
            verdict = self.inner(request)
            if await verdict if asyncio.iscoroutine(verdict) else verdict:
                return True
        reason = await self.refusal(str(request.url))
        if reason is not None:
            self._refused(str(request.url), reason)
            return True
        return False

    async def refusal(self, url: str) -> str | None:
        """Why the browser must not fetch ``url``, or None."""
        try:
            parts = urlsplit(url)
            host = (parts.hostname or "").lower().rstrip(".")
            port = parts.port
        except ValueError:
            return "bad URL"
        if parts.scheme in LOCAL_SCHEMES:
            return None
        if parts.scheme not in ("http", "https", "ws", "wss") or not host:
            return f"scheme {parts.scheme!r}"
        if self.mirror is not None and (f"{host}:{port}" if port else host) == self.mirror:
            return None
        if port is not None and port not in self.allowed_ports:
            return f"port {port}"
        try:
            ipaddress.ip_address(host.strip("[]"))
        except ValueError:
            pass
        else:
            return None if is_public_address(host) else f"private address {host}"
        if not await self._public(host):
            return f"{host} resolves to a private address"
        return None

    async def _public(self, host: str) -> bool:
        if host not in self._verdicts:
            try:
                addresses = await self.resolve(host)
            except OSError:
                return True  # unresolvable: Chromium will fail to connect by itself
            self._verdicts[host] = bool(addresses) and all(map(is_public_address, addresses))
        return self._verdicts[host]

    def _refused(self, url: str, reason: str) -> None:
        if self.crawler is not None and self.crawler.stats is not None:
            self.crawler.stats.inc_value("safety/refused/browser")
        logger.warning("Browser request refused (%s): %s", reason, url[:200])
