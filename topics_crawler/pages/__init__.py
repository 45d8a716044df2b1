"""Page parsers: a fetched page (bytes or text + URL) in, items and links out.

Nothing here knows about spiders, requests or settings. :func:`parse_page`
detects the kind of page and never raises: a parser failure becomes an entry
in :attr:`PageResult.errors`, so a broken page is counted and logged, not lost.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace
from datetime import datetime

from topics_crawler.items.layers import pick
from topics_crawler.pages._completeness import browser_signal, missing_data
from topics_crawler.pages._document import Document
from topics_crawler.pages._off_medium import left_medium, left_medium_reason
from topics_crawler.pages._result import (
    FetchAgain,
    FetchAgainReason,
    ListingCursor,
    PageKind,
    PageResult,
    unique_links,
)
from topics_crawler.pages.author import parse_author
from topics_crawler.pages.feed import parse_feed
from topics_crawler.pages.graphql_body import parse_graphql
from topics_crawler.pages.json_payload import parse_json
from topics_crawler.pages.publication import parse_publication
from topics_crawler.pages.story import parse_story
from topics_crawler.pages.tag import parse_tag
from topics_crawler.pages.tag_archive import parse_tag_archive
from topics_crawler.urls import classify_url, parse_tag_archive_url

__all__ = [
    "PARSERS",
    "Document",
    "FetchAgain",
    "FetchAgainReason",
    "ListingCursor",
    "PageKind",
    "PageResult",
    "detect_kind",
    "missing_data",
    "parse_page",
    "pick",
    "unique_links",
]

_JSON_STARTS = ("])}while(1);", "{", "[")
#: Kinds whose page on a custom domain must show Medium's marks (:mod:`._off_medium`).
ENTITY_PAGE_KINDS = frozenset({"story", "author", "publication"})


def detect_kind(doc: Document) -> PageKind:
    """Kind of page from its content first (JSON, feed), then its URL, then its meta tags."""
    head = doc.head(512).lstrip().lstrip("\ufeff")
    if head.startswith(_JSON_STARTS):
        return "json"
    if head.startswith("<?xml") or "<rss" in head[:300]:
        return "feed"
    if parse_tag_archive_url(doc.url) is not None:
        return "tag_archive"
    link = classify_url(doc.url)
    if link is not None:
        return "tag" if link.kind == "tag" else link.kind
    if "/topic/" in doc.url:
        return "tag"
    og_type = doc.meta.get("og:type", "")
    if og_type == "article":
        return "story"
    if og_type == "profile":
        return "author"
    return "unknown"


#: Page kinds whose items come from one payload: their ``data_source`` is its name.
WHOLE_PAGE_SOURCES: dict[PageKind, str] = {
    "feed": "feed",
    "json": "json",
    "graphql": "graphql",
    "tag_archive": "archive",
}
PARSERS: dict[PageKind, Callable[[Document], PageResult]] = {
    "story": parse_story,
    "author": parse_author,
    "publication": parse_publication,
    "tag": parse_tag,
    "tag_archive": parse_tag_archive,
    "feed": parse_feed,
    "json": parse_json,
    "graphql": parse_graphql,
}


def parse_page(
    body: bytes | str,
    url: str,
    *,
    kind: PageKind | None = None,
    scraped_at: datetime | None = None,
    encoding: str | None = None,
) -> PageResult:
    """Parse one page. ``kind`` skips detection. Never raises for bad input."""
    doc = Document(body, url, scraped_at=scraped_at, encoding=encoding)
    page_kind = kind or detect_kind(doc)
    parser = PARSERS.get(page_kind)
    if parser is None:
        return PageResult(kind="unknown", url=url, errors=["unknown page kind"])
    if page_kind in ENTITY_PAGE_KINDS and (host := left_medium(doc)) is not None:
        return PageResult(page_kind, url, errors=[left_medium_reason(host)], off_medium=host)
    try:
        result = parser(doc)
    except Exception as exc:  # a parser bug must not crash the crawl
        errors = [*doc.errors, f"parser crashed: {exc!r}"]
        return PageResult(kind=page_kind, url=url, errors=errors, signals=list(doc.signals))
    whole_page = WHOLE_PAGE_SOURCES.get(page_kind)
    if whole_page is not None:  # every value of these came from the one payload
        result.items = [replace(item, data_source=whole_page) for item in result.items]
    for reason in doc.errors:
        if reason not in result.errors:
            result.errors.append(reason)
    for signal in doc.signals:
        result.add_signal(signal)
    if (needs_browser := browser_signal(result)) is not None:
        result.add_signal(needs_browser)
    return result
