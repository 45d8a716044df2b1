"""What a page parser returns."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from topics_crawler.items import Item
from topics_crawler.urls import MediumLink

PageKind = Literal["story", "author", "publication", "tag", "feed", "json", "graphql", "unknown"]


@dataclass(frozen=True)
class ListingCursor:
    """Where the next page of a listing starts, exactly as the page gives it.

    Not followed by the crawl; kept for a later archive crawl. ``listing`` names
    the listing (``author_stories``), ``owner`` its owner's id (the author id),
    ``cursor`` the page's own paging values — ``{"from": "L1583417617283",
    "limit": 10}`` on 2022 profiles (``homepagePostsConnection.pagingInfo.next``),
    ``{"limit": 10, "to": "1515474889350", "source": "overview", "page": 2}`` on
    2016–2019 ones (``paging.next``) — and ``url`` the stream endpoint when the page
    names one (``paging.path``).
    """

    listing: str
    owner: str | None
    cursor: dict[str, Any]
    url: str | None = None


@dataclass
class PageResult:
    """Items and links found on one page, plus what went wrong.

    ``errors`` are reasons recorded while parsing (broken state JSON, not a
    Medium page, truncated body…); each is counted as ``parse/errors/<kind>``
    and logged with the URL by the spider. ``missing`` names fields that a page
    of this kind should carry but did not.
    """

    kind: PageKind
    url: str
    items: list[Item] = field(default_factory=list)
    links: list[MediumLink] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    cursors: list[ListingCursor] = field(default_factory=list)
    """Paging cursors of the listings on the page (:class:`ListingCursor`), page order."""

    def links_of(self, kind: str) -> list[MediumLink]:
        """Links of one kind (``story``, ``author``, ``publication``, ``tag``), page order."""
        return [link for link in self.links if link.kind == kind]

    def items_of(self, item_type: str) -> list[Item]:
        """Items of one ``item_type`` in the order found."""
        return [item for item in self.items if item.item_type == item_type]


def unique_links(links: Iterable[MediumLink | None]) -> list[MediumLink]:
    """Links without duplicates (by kind and key), first occurrence kept."""
    seen: set[tuple[str, str]] = set()
    out: list[MediumLink] = []
    for link in links:
        if link is None or (link.kind, link.key) in seen:
            continue
        seen.add((link.kind, link.key))
        out.append(link)
    return out
