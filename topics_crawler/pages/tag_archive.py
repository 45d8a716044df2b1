"""A tag's archive pages (``/tag/<slug>/archive``, ``…/YYYY``, ``…/YYYY/MM``, ``…/YYYY/MM/DD``).

In 2026 these pages still carry the **legacy** ``window["obvInit"]({...})`` payload — the
model of the 2016–2019 ``?format=json`` streams (``STRUCTURE.md``, "2026") — and nothing else:

* ``references.Post[id]`` (with ``virtuals``), ``references.User[id]``,
  ``references.Collection[id]``; ``streamItems[].postPreview.postId`` lists the page's
  stories in page order;
* ``archiveIndex``: the page's own ``timeBucket`` and the ``yearlyBuckets``,
  ``monthlyBuckets`` and ``dailyBuckets`` around it, each ``{year, month, day, hasStories}``
  with the numbers as strings (``"09"``), which is how the archive is walked (years → months
  → days that have stories);
* ``paging``: ``next`` when the day holds more stories than one page shows (128), addressed
  as ``?page=N``.

What differs from the other legacy pages, and is pinned here: **claps** are
``virtuals.totalClapCount`` — ``virtuals.recommends`` beside it is the retired pre-2017
recommend count (25 against 248 on one story of the real capture), never a clap count here;
``mediumUrl`` is the empty string on every archive post and ``webCanonicalUrl`` (or
``canonicalUrl``) may be off Medium — a cross-post, kept as ``canonical_url`` —, so the story
URL is **rebuilt**: the publication's custom domain, else
``medium.com/<publication slug>/``, else the author's ``medium.com/@user/``, then
``uniqueSlug``; epoch milliseconds come as numbers or strings.

:func:`read_tag_archive` gives a :class:`TagArchivePage` (what the day-archive walker
needs, :mod:`topics_crawler.spiders._day_archive`); :func:`parse_tag_archive` the
:class:`PageResult` every parser gives (:func:`archive_result` of the page): stories (page
order), then their authors and publications, links to each, and the archive index and paging
as :attr:`PageResult.cursors` (``listing`` ``archive_year`` / ``archive_month`` /
``archive_day`` with the bucket as the page gives it, ``archive_page`` for the next page).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from typing import Any, Literal

from topics_crawler.items import Author, Item, Publication, Story
from topics_crawler.items.values import read_count
from topics_crawler.pages._document import Document
from topics_crawler.pages._posts import PREVIEW_IMAGE_URL
from topics_crawler.pages._result import ListingCursor, PageResult, unique_links
from topics_crawler.pages._story_state import legacy_post_story
from topics_crawler.pages.author import legacy_post_url, stream_post_ids
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import (
    MediumLink,
    TagArchiveAddress,
    classify_url,
    cross_post_url,
    parse_tag_archive_url,
)

#: Core fields of an archive page (what the drift alarm watches).
CORE_FIELDS = ("archive_index", "stories")
BucketLevel = Literal["year", "month", "day"]
#: ``archiveIndex`` member → the level of its buckets.
BUCKET_LISTS: dict[str, BucketLevel] = {
    "yearlyBuckets": "year",
    "monthlyBuckets": "month",
    "dailyBuckets": "day",
}
#: ``paging.next`` members a next-page address carries (``source`` and ``ignoredIds`` are
#: the client's; a ``source=`` query is disallowed by Medium's robots.txt).
PAGING_PARAMETERS = ("page", "limit", "to", "from")


@dataclass(frozen=True)
class ArchiveBucket:
    """One bucket of ``archiveIndex``: a year, a month of a year or a day of a month."""

    level: BucketLevel
    year: int
    month: int | None
    day: int | None
    has_stories: bool

    def address(self, tag: str) -> TagArchiveAddress:
        return TagArchiveAddress(tag, self.year, self.month, self.day)


@dataclass
class TagArchivePage:
    """What one archive page says (see the module docstring)."""

    address: TagArchiveAddress | None
    """The page's address from its URL (None: not an archive URL)."""
    tag: str | None = None
    stories: list[Story] = field(default_factory=list)
    authors: list[Author] = field(default_factory=list)
    publications: list[Publication] = field(default_factory=list)
    buckets: list[ArchiveBucket] = field(default_factory=list)
    """Every bucket of ``archiveIndex`` (yearly, monthly, daily), page order."""
    raw_buckets: list[tuple[BucketLevel, dict[str, Any]]] = field(default_factory=list)
    current: ArchiveBucket | None = None
    """``archiveIndex.timeBucket``: which year, month or day the page shows."""
    has_index: bool = False
    next_page: str | None = None
    """The URL of the day's next page (``paging.next``), or None."""
    next_paging: dict[str, Any] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)

    def children(self, level: BucketLevel) -> list[ArchiveBucket]:
        """The buckets of ``level`` that have stories, page order."""
        return [b for b in self.buckets if b.level == level and b.has_stories]


def read_tag_archive(doc: Document) -> TagArchivePage:
    """The archive page in ``doc`` (never raises; problems in ``errors``)."""
    address = parse_tag_archive_url(doc.url)
    page = TagArchivePage(address, address.tag if address else None)
    state = doc.legacy_state
    if state is None:
        page.errors.append("no archive payload (window.obvInit) on the page")
        return page
    tag = state.root.node("tag")
    page.tag = (tag.str("slug") if tag is not None else None) or page.tag
    _read_index(page, state.root.node("archiveIndex"))
    _read_stories(page, state, doc.scraped_at)
    _read_paging(page, state.root.node("paging"), doc.url)
    return page


def parse_tag_archive(doc: Document) -> PageResult:
    """Stories, their authors and publications, links to each, and the index and paging as
    cursors (see the module docstring)."""
    return archive_result(read_tag_archive(doc), doc.url)


def archive_result(page: TagArchivePage, url: str) -> PageResult:
    """The :class:`PageResult` of a read archive page (of a part of it: the day-archive
    walker passes the stories it takes)."""
    result = PageResult(kind="tag_archive", url=url, errors=list(page.errors))
    items: list[Item] = [*page.stories, *page.authors, *page.publications]
    result.items = items
    domains = [p.domain for p in page.publications if p.domain]
    links: list[MediumLink | None] = []
    for item in items:
        link = classify_url(item.url, custom_domains=domains) if item.url else None
        if link is None and isinstance(item, Story):
            result.errors.append(f"story {item.story_id}: no story URL")
        links.append(link)
    result.links = unique_links(links)
    result.cursors = _cursors(page)
    result.missing = _missing(page)
    return result


# --- the index and the paging -------------------------------------------------------------


def _read_index(page: TagArchivePage, index: Node | None) -> None:
    if index is None:
        page.errors.append("archive payload without archiveIndex")
        return
    page.has_index = True
    current = index.node("timeBucket")
    page.current = _bucket(current, None) if current is not None else None
    for member, level in BUCKET_LISTS.items():
        for node in index.nodes(member):
            bucket = _bucket(node, level)
            if bucket is None:
                page.errors.append(f"archiveIndex.{member}: unreadable bucket {node.raw!r}")
                continue
            page.buckets.append(bucket)
            page.raw_buckets.append((level, dict(node.raw)))


def _bucket(node: Node, level: BucketLevel | None) -> ArchiveBucket | None:
    """A bucket from ``{year, month, day, hasStories}`` (numbers as strings or numbers; an
    empty month or day is a coarser bucket); None when its numbers are not a date."""
    numbers = [_number(node.scalar(name)) for name in ("year", "month", "day")]
    year, month, day = numbers
    found: BucketLevel = "day" if day is not None else "month" if month is not None else "year"
    if year is None or (month is None and day is not None) or (level and level != found):
        return None
    try:
        date(year, month or 1, day or 1)  # not 2026-02-30, not a month 13
    except ValueError:
        return None
    return ArchiveBucket(found, year, month, day, node.value("hasStories") is True)


def _number(value: Any) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.strip().isdigit():
        return int(value.strip())
    return None


def _read_paging(page: TagArchivePage, paging: Node | None, url: str) -> None:
    following = paging.node("next") if paging is not None else None
    if following is None or page.address is None:
        return
    values = {k: v for k, v in following.scalars().items() if k in PAGING_PARAMETERS}
    number = _number(values.get("page"))
    if number is None or number <= page.address.page:
        page.errors.append(f"paging.next without a later page: {following.raw!r}")
        return
    page.next_paging = values
    address = page.address
    page.next_page = TagArchiveAddress(
        address.tag, address.year, address.month, address.day, number
    ).url


def _cursors(page: TagArchivePage) -> list[ListingCursor]:
    owner = page.tag
    cursors = [
        ListingCursor(f"archive_{level}", owner, raw, _bucket_url(page, bucket))
        for (level, raw), bucket in zip(page.raw_buckets, page.buckets, strict=True)
    ]
    if page.next_page is not None:
        cursors.append(ListingCursor("archive_page", owner, page.next_paging, page.next_page))
    return cursors


def _bucket_url(page: TagArchivePage, bucket: ArchiveBucket) -> str | None:
    return bucket.address(page.tag).url if page.tag else None


def _missing(page: TagArchivePage) -> list[str]:
    missing = [] if page.has_index else ["archive_index"]
    day = page.address is not None and page.address.level == "day"
    if day and not page.stories and (page.current is None or page.current.has_stories):
        missing.append("stories")
    return missing


# --- stories, authors, publications --------------------------------------------------------


def _read_stories(page: TagArchivePage, state: State, scraped_at: str) -> None:
    authors: dict[str, Author] = {}
    publications: dict[str, Publication] = {}
    for post_id in stream_post_ids(state.root):
        post = state.entity("Post", post_id)
        if post is None:
            page.errors.append(f"stream item {post_id}: no references.Post entry")
            continue
        story = _archive_story(post, state, scraped_at, authors, publications)
        if story is None:
            page.errors.append(f"stream item {post_id}: post without an id")
            continue
        page.stories.append(story)
    page.authors = list(authors.values())
    page.publications = list(publications.values())


def _archive_story(
    post: Node,
    state: State,
    scraped_at: str,
    authors: dict[str, Author],
    publications: dict[str, Publication],
) -> Story | None:
    found = legacy_post_story(post, state, scraped_at)
    if found is None:
        return None
    if found.author is not None and found.author.author_id:
        authors.setdefault(found.author.author_id, found.author)
    if found.publication is not None and found.publication.publication_id:
        publications.setdefault(found.publication.publication_id, found.publication)
    virtuals = post.node("virtuals")
    fields = dict(found.fields)
    fields.pop("state_url", None)  # mediumUrl is empty; the canonical URLs may be another site
    # A cross-post names its original in webCanonicalUrl on the archive (the real page).
    fields["canonical_url"] = fields.get("canonical_url") or cross_post_url(
        post.str("webCanonicalUrl"), fields.get("story_id")
    )
    for body_field in ("text", "text_is_preview", "markdown"):
        fields.pop(body_field, None)  # a listing carries no body
    fields["claps"], fields["claps_raw"] = _claps(virtuals)
    return Story(
        **fields,
        url=legacy_post_url(post, found.author, found.publication),
        image_url=_image_url(virtuals),
        scraped_at=scraped_at,
    )


def _claps(virtuals: Node | None) -> tuple[int | None, str | None]:
    """``virtuals.totalClapCount`` (never ``recommends``: see the module docstring)."""
    return read_count(virtuals.scalar("totalClapCount")) if virtuals is not None else (None, None)


def _image_url(virtuals: Node | None) -> str | None:
    image = virtuals.node("previewImage") if virtuals is not None else None
    image_id = image.str("imageId") if image is not None else None
    if not image_id or not image_id.strip():
        return None
    return PREVIEW_IMAGE_URL.format(image_id=image_id.strip())
