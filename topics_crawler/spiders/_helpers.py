"""What the spider's callbacks share: entity keys, failure reasons, response encodings, the
paging state requests carry."""

from __future__ import annotations

import re
from typing import Any, Protocol, Self, TypeVar

from scrapy.exceptions import DownloadCancelledError
from scrapy.http import Response
from twisted.python.failure import Failure

from topics_crawler.items import Author, Item, Publication, Story, TagEdge, TagPage
from topics_crawler.middlewares.blocked import BlockedPage
from topics_crawler.middlewares.refused import SiteRefused
from topics_crawler.urls import is_medium_domain


class CarriedState(Protocol):
    """Paging state a request carries in its meta (a tag's listing, a walk, an archive, a
    thread): picklable, and copied whenever it is read or sent on."""

    def copy(self) -> Self: ...


State = TypeVar("State", bound=CarriedState)


def carried_state(meta: dict[str, Any], key: str, kind: type[State]) -> State | None:
    """A copy of the ``kind`` state a request carries under ``key`` (None: not such a
    request), so reading an answer never changes the state another request holds."""
    state = meta.get(key)
    return state.copy() if isinstance(state, kind) else None


def item_key(item: Item) -> tuple[str, str]:
    """``(link kind, key)`` under which links to this entity are recognised."""
    if isinstance(item, Story):
        return "story", item.story_id or ""
    if isinstance(item, Author):
        return "author", (item.username or "").lower()
    if isinstance(item, Publication):
        if item.domain and not is_medium_domain(item.domain.lower()):
            return "publication", item.domain.lower()
        return "publication", (item.slug or "").lower()
    if isinstance(item, TagPage):
        return "tag_page", item.tag or ""
    if isinstance(item, TagEdge):
        return "tag_edge", item.edge_id or ""
    return "response", item.response_id or ""


def failure_reason(failure: Failure) -> str:
    """Short snake_case reason for a download failure (``timeout_error``, ``dns_lookup_error``);
    ``too_large`` for a response Scrapy cancelled past ``DOWNLOAD_MAXSIZE`` (the only reason
    its HTTP handlers cancel a download); a block or refusal by its own reason."""
    if isinstance(failure.value, DownloadCancelledError):
        return "too_large"
    if isinstance(failure.value, BlockedPage | SiteRefused):
        return failure.value.reason  # challenge, signin_wall, waf, refused_by_site
    name = type(failure.value).__name__
    return re.sub(r"(?<!^)(?=[A-Z])", "_", name).lower()


def failure_status(failure: Failure) -> tuple[int | None, str]:
    """``(HTTP status, reason)`` of a failed request: ``http_<status>`` for an HTTP error
    status, else the download error's (or a block's own status and) reason."""
    response = getattr(failure.value, "response", None)
    if response is not None:
        return response.status, f"http_{response.status}"
    return getattr(failure.value, "status", None), failure_reason(failure)


def response_encoding(response: Response) -> str | None:
    """The encoding Scrapy detected for a text response (None for binary ones)."""
    return getattr(response, "encoding", None)
