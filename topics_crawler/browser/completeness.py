"""Does a plain (server-rendered) page carry the data it should? Pure functions of the page.

:func:`missing_data` names what is missing (``who_to_follow``, ``stories``,
``story`` …) or returns None. Tag pages are parsed (they are few and the answer
needs the parsed sections). Story, author and publication pages first get a
cheap test — the page's embedded state holds the query of its own kind — and
are parsed only when that state is absent (older page generations, script-less
shells); then the item must exist and carry its identifying fields.
"""

from __future__ import annotations

from topics_crawler.items import Author, Publication, Story, TagPage
from topics_crawler.pages import PageKind, parse_page

#: Embedded-state queries that show a page of this kind was server-rendered with its data.
STATE_MARKERS: dict[str, tuple[bytes, ...]] = {
    "story": (b"postResult(", b'"Post:'),
    "author": (b"userResult(",),
    "publication": (b"collectionByDomainOrSlug(",),
}
#: Item field that must be filled for the page to count as carrying its entity.
IDENTIFYING_FIELD = {"story": "title", "author": "name", "publication": "name"}
_ENTITY_PAGES: dict[str, tuple[PageKind, type[Story | Author | Publication]]] = {
    "story": ("story", Story),
    "author": ("author", Author),
    "publication": ("publication", Publication),
}


def missing_data(kind: str, body: bytes, url: str, wanted_stories: int | None = None) -> str | None:
    """What the page at ``url`` lacks (a short snake_case name), or None when complete.

    ``kind`` is the entity the request was made for (the spider's ``entity_kind``);
    ``wanted_stories`` the cards a tag page should list (None: whatever it lists).
    Unknown kinds are never judged incomplete.
    """
    if kind == "tag":
        return _tag_missing(body, url, wanted_stories)
    if kind not in _ENTITY_PAGES:
        return None
    if any(marker in body for marker in STATE_MARKERS[kind]):
        return None
    page_kind, item_type = _ENTITY_PAGES[kind]
    result = parse_page(body, url, kind=page_kind)
    item = next((i for i in result.items if isinstance(i, item_type)), None)
    if item is None or not getattr(item, IDENTIFYING_FIELD[kind]):
        return kind
    return None


def _tag_missing(body: bytes, url: str, wanted_stories: int | None) -> str | None:
    result = parse_page(body, url, kind="tag")
    page = next((i for i in result.items if isinstance(i, TagPage)), None)
    if page is None or not page.sections:
        return "tag_sections"
    if not page.who_to_follow:
        return "who_to_follow"
    listed = len(result.links_of("story"))
    more_exist = page.story_count is None or page.story_count > listed
    if wanted_stories is not None and listed < wanted_stories and more_exist:
        return "stories"
    return None
