"""A test resolver: names from the ``TEST_DNS_MAP`` setting (JSON ``{name: address}``)
resolve to the addresses given, with the project's address check still applied.

    -s TWISTED_DNS_RESOLVER=tests.dns_map.MappedResolver \
    -s 'TEST_DNS_MAP={"medium.com": "127.0.0.1"}'

IP literals resolve to themselves (as with the system resolver); other names not
in the map fail as unresolvable: a test never reaches the real DNS.
"""

from __future__ import annotations

import ipaddress
import json
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Self

from twisted.internet import defer
from twisted.internet.error import DNSLookupError

from topics_crawler.safety.resolver import SafeAddressResolver, mirror_host

if TYPE_CHECKING:
    from scrapy.crawler import Crawler
    from twisted.internet.base import ReactorBase


class MappedResolver(SafeAddressResolver):
    """:class:`SafeAddressResolver` whose raw lookup reads a fixed map."""

    def __init__(
        self,
        reactor: ReactorBase,
        mapping: Mapping[str, str],
        private_allowed: Sequence[str] = (),
    ) -> None:
        super().__init__(reactor, 0, 5.0, private_allowed)
        self.mapping = {name.lower(): address for name, address in mapping.items()}

    @classmethod
    def from_crawler(cls, crawler: Crawler, reactor: ReactorBase) -> Self:
        mapping = json.loads(crawler.settings.get("TEST_DNS_MAP") or "{}")
        mirror = mirror_host(crawler.settings.get("MEDIUM_BASE_URL"))
        return cls(reactor, mapping, [mirror] if mirror else [])

    def lookup(self, name: str, timeout: Sequence[int] = ()) -> defer.Deferred[str]:
        if is_ip_address(name):
            return defer.succeed(name)
        address = self.mapping.get(name.lower().rstrip("."))
        if address is None:
            return defer.fail(DNSLookupError(f"{name} is not in TEST_DNS_MAP"))
        return defer.succeed(address)


def is_ip_address(name: str) -> bool:
    try:
        ipaddress.ip_address(name)
    except ValueError:
        return False
    return True
