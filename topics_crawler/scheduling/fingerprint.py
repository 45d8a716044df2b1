"""Request fingerprints keyed on the canonical Medium URL.

When ``MEDIUM_BASE_URL`` points at a mirror, the request actually downloaded
has the mirror's URL; its fingerprint must still be that of the canonical
``https://medium.com/...`` URL so the dupefilter, the HTTP cache (record and
replay), ``JOBDIR`` resumes and the shared Redis seen-set do not depend on
where the bytes came from.

A request for an entity page (``meta["entity_key"]``, see :mod:`topics_crawler.items.merge`)
is fingerprinted by the entity's identity key instead: every URL alias of one story,
author or publication is one request, so the spider keeps no set of its own.
"""

from __future__ import annotations

import hashlib
from typing import TYPE_CHECKING, Self

from scrapy import Request
from scrapy.utils.request import fingerprint

from topics_crawler.items.merge import ENTITY_KEY_META

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: Request meta keys of a request sent to a mirror: its canonical URL, and the mirror URL
#: it was rewritten to (a request copied to another URL, e.g. on redirect, drops the link).
CANONICAL_URL_META = "medium_canonical_url"
MIRROR_URL_META = "medium_mirror_url"


class CanonicalUrlFingerprinter:
    """Scrapy's default fingerprint, computed on the canonical URL of mirrored requests;
    an entity request's fingerprint is its entity's."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def fingerprint(self, request: Request) -> bytes:
        entity = request.meta.get(ENTITY_KEY_META)
        if isinstance(entity, str) and request.method == "GET":
            return hashlib.sha1(f"entity {entity}".encode(), usedforsecurity=False).digest()
        canonical = request.meta.get(CANONICAL_URL_META)
        if canonical and request.meta.get(MIRROR_URL_META) == request.url:
            request = request.replace(url=canonical)
        return fingerprint(request)
