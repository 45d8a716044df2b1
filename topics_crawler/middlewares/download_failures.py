"""What a failed download was, as the failure records and stats name it: the reason
(``timeout_error``, ``too_large``, ``waf``…) and the HTTP status, for the spider's errbacks
and the images pipeline alike (``failures.jsonl``: :mod:`topics_crawler.extensions.failures`,
whose ``failure_reason`` turns a reason into the recorded one)."""

from __future__ import annotations

import re

from scrapy.exceptions import DownloadCancelledError, IgnoreRequest
from twisted.python.failure import Failure

from topics_crawler.middlewares.blocked import BlockedPage
from topics_crawler.middlewares.refused import SiteRefused


def download_failure_reason(failure: Failure) -> str:
    """Short snake_case reason for a download failure (``timeout_error``, ``dns_lookup_error``);
    ``too_large`` for a response Scrapy cancelled past ``DOWNLOAD_MAXSIZE`` (the only reason
    its HTTP handlers cancel a download) or whose body grew past it while being
    decompressed (a gzip bomb: ``HttpCompressionMiddleware`` ignores it, the error it
    raises from carries the ``decompressed_size`` it reached)."""
    if isinstance(failure.value, DownloadCancelledError) or _decompressed_too_large(failure.value):
        return "too_large"
    if isinstance(failure.value, BlockedPage | SiteRefused):
        return failure.value.reason  # challenge, signin_wall, waf, refused_by_site
    name = type(failure.value).__name__
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def _decompressed_too_large(error: BaseException | None) -> bool:
    return isinstance(error, IgnoreRequest) and hasattr(error.__cause__, "decompressed_size")


def failure_status(failure: Failure) -> tuple[int | None, str]:
    """``(HTTP status, reason)`` of a failed request: ``http_<status>`` for an HTTP error
    status, else the download error's (or a block's own status and) reason."""
    response = getattr(failure.value, "response", None)
    if response is not None:
        return response.status, f"http_{response.status}"
    return getattr(failure.value, "status", None), download_failure_reason(failure)
