"""Request fingerprints keyed on the canonical Medium URL.

When ``MEDIUM_BASE_URL`` points at a mirror, the request actually downloaded
has the mirror's URL; its fingerprint must still be that of the canonical
``https://medium.com/...`` URL so the dupefilter, the HTTP cache (record and
replay), ``JOBDIR`` resumes and the shared Redis seen-set do not depend on
where the bytes came from.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Self

from scrapy import Request
from scrapy.utils.request import fingerprint

if TYPE_CHECKING:
    from scrapy.crawler import Crawler

#: Request meta keys of a request sent to a mirror: its canonical URL, and the mirror URL
#: it was rewritten to (a request copied to another URL, e.g. on redirect, drops the link).
CANONICAL_URL_META = "medium_canonical_url"
MIRROR_URL_META = "medium_mirror_url"


class CanonicalUrlFingerprinter:
    """Scrapy's default fingerprint, computed on the canonical URL of mirrored requests."""

    @classmethod
    def from_crawler(cls, crawler: Crawler) -> Self:
        return cls()

    def fingerprint(self, request: Request) -> bytes:
        canonical = request.meta.get(CANONICAL_URL_META)
        if canonical and request.meta.get(MIRROR_URL_META) == request.url:
            request = request.replace(url=canonical)
        return fingerprint(request)
