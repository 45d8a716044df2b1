"""Does a parsed page carry the data it should? Pure functions of a :class:`PageResult`.

:func:`missing_data` names what a page lacks (``tag_sections``, ``who_to_follow``,
``stories``, ``story`` …) or returns None; :func:`browser_signal` turns what a
page lacks on its own (everything but a number of cards, which depends on the
crawl's ``max_stories``) into the result's ``needs_browser`` signal. Nothing is
parsed twice: the check reads the result the page parser already produced.
"""

from __future__ import annotations

from topics_crawler.items import Author, Publication, Story, TagPage
from topics_crawler.pages._result import FetchAgain, PageResult

#: Item type and field that must be filled for a page to count as carrying its entity.
IDENTIFYING: dict[str, tuple[type[Story | Author | Publication], str]] = {
    "story": (Story, "title"),
    "author": (Author, "name"),
    "publication": (Publication, "name"),
}


def missing_data(result: PageResult, wanted_stories: int | None = None) -> str | None:
    """What the page lacks (a short snake_case name), or None when complete.

    ``wanted_stories`` is how many cards a tag page should list (None: whatever it
    lists). Kinds other than tag, story, author and publication are never incomplete.
    """
    if result.kind == "tag":
        return _tag_missing(result, wanted_stories)
    if result.kind not in IDENTIFYING:
        return None
    item_type, field_name = IDENTIFYING[result.kind]
    item = next((i for i in result.items if isinstance(i, item_type)), None)
    if item is None or not getattr(item, field_name):
        return result.kind
    return None


def browser_signal(result: PageResult) -> FetchAgain | None:
    """The ``needs_browser`` signal for what the page lacks on its own, or None."""
    what = missing_data(result)
    return FetchAgain("needs_browser", what) if what is not None else None


def _tag_missing(result: PageResult, wanted_stories: int | None) -> str | None:
    page = next((i for i in result.items if isinstance(i, TagPage)), None)
    if page is None or not page.sections:
        return "tag_sections"
    if not page.who_to_follow and not page.top_writers:  # 2022 pages list writers in state
        return "who_to_follow"
    listed = len(result.links_of("story"))
    more_exist = page.story_count is None or page.story_count > listed
    if wanted_stories is not None and listed < wanted_stories and more_exist:
        return "stories"
    return None
