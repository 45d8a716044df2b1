"""What a page parser returns."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any, Literal

from topics_crawler.items import Item
from topics_crawler.urls import MediumLink

PageKind = Literal["story", "author", "publication", "tag", "feed", "json", "graphql", "unknown"]
#: Why a page should be fetched again: its state JSON was cut (``broken_state``: plain
#: HTTP once more), plain HTTP lacked what the page should show (``needs_browser``), or
#: the answer was a challenge / sign-in wall (``blocked``).
FetchAgainReason = Literal["broken_state", "needs_browser", "blocked"]


@dataclass(frozen=True, slots=True)
class FetchAgain:
    """A typed signal on a :class:`PageResult`: this page should be fetched again.

    Set where the condition is detected (the document for broken state, the
    completeness check for what only the browser shows); turned into a request in
    one place, spider-side (:mod:`topics_crawler.spiders._refetch`), the way
    scrapy-poet's ``Retry`` is. No decision reads :attr:`PageResult.errors` text.
    ``what`` is a short snake_case name (``apollo_state``, ``who_to_follow``,
    ``challenge`` …) used in stats and in the request's ``render_reason``.
    """

    reason: FetchAgainReason
    what: str
    detail: str = ""


@dataclass(frozen=True)
class ListingCursor:
    """Where the next page of a listing starts, exactly as the page gives it.

    Followed by ``-a author_stories`` crawls (``spiders/_author_archive.py``). ``listing`` names
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
    of this kind should carry but did not. ``signals`` say whether (and why) the
    page should be fetched again (:class:`FetchAgain`).
    """

    kind: PageKind
    url: str
    items: list[Item] = field(default_factory=list)
    links: list[MediumLink] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    cursors: list[ListingCursor] = field(default_factory=list)
    """Paging cursors of the listings on the page (:class:`ListingCursor`), page order."""
    signals: list[FetchAgain] = field(default_factory=list)
    off_medium: str | None = None
    """The host, when the page was not Medium's at all: a custom domain that left Medium
    (:mod:`topics_crawler.pages._off_medium`); the page gives nothing."""

    def signal(self, reason: FetchAgainReason) -> FetchAgain | None:
        """The first signal of ``reason``, or None."""
        return next((s for s in self.signals if s.reason == reason), None)

    def add_signal(self, signal: FetchAgain) -> None:
        """Record ``signal`` once."""
        if signal not in self.signals:
            self.signals.append(signal)

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
