"""A tag's archive on the local site, as Medium serves it in 2026 (``STRUCTURE.md``, "2026").

``/tag/<slug>/archive``, ``…/YYYY``, ``…/YYYY/MM`` and ``…/YYYY/MM/DD`` serve the legacy
``window["obvInit"]({...})`` payload and nothing else, built from the site's own content (a
story is in a tag's archive when it carries the tag, on the UTC day it was published — the
stories the GraphQL archive feed lists too):

* ``references.Post[id]`` with ``virtuals`` (``totalClapCount``, the retired ``recommends`` —
  here the voters, smaller than the claps as on the real page —, ``responsesCreatedCount``,
  ``readingTime``, ``wordCount``, ``tags``, ``previewImage``, ``subtitle``), ``mediumUrl`` and
  ``webCanonicalUrl`` empty, epoch milliseconds as strings; ``references.User`` and
  ``references.Collection`` for their authors and publications;
* ``streamItems[].postPreview.postId`` in page order: a day's stories, most clapped first
  (ties by id); the root, a year and a month show their :data:`TOP_STORIES` most clapped;
* ``archiveIndex``: ``timeBucket`` (the page's own), ``yearlyBuckets`` (the years that have
  stories), ``monthlyBuckets`` (the twelve months of the page's year) and ``dailyBuckets``
  (the days of the page's month), each ``{year, month, day, hasStories}`` with the numbers
  as zero-padded strings, empty strings for the levels a bucket does not have;
* ``paging``: a day holds :attr:`SiteContent.archive_page_size` stories a page (128, as
  measured on Medium) and ``?page=N`` serves the next ones (``paging.next {page, limit}``);
* a day without stories redirects to its month (302);
* the page carries Cloudflare's ``challenge-platform`` precursor script, as every normal page
  of 2026 does at status 200 (it is not a challenge).
"""

from __future__ import annotations

import calendar
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import datetime
from html import escape
from typing import Any
from urllib.parse import parse_qs, urlsplit

from topics_crawler.site.entities import MEDIUM_ROOT, SiteStory, SiteTag, utc
from topics_crawler.site.markup import epoch_ms
from topics_crawler.site.model import SiteContent

#: Stories the root, a year or a month page shows (their most clapped).
TOP_STORIES = 10


@dataclass(frozen=True)
class ArchivePath:
    """An archive address of the site: the tag, the date parts given, the page."""

    tag: str
    year: int | None = None
    month: int | None = None
    day: int | None = None
    page: int = 1

    @property
    def path(self) -> str:
        parts = [f"{self.year:04d}"] if self.year else []
        parts += [f"{self.month:02d}"] if self.month else []
        parts += [f"{self.day:02d}"] if self.day else []
        return "/".join([f"/tag/{self.tag}/archive", *parts])

    def covers(self, moment: datetime) -> bool:
        wanted = (self.year, self.month, self.day)
        return all(w is None or w == got for w, got in zip(wanted, _ymd(moment), strict=True))


def parse_archive_path(raw_path: str) -> ArchivePath | None:
    """The archive address of ``raw_path`` (``/tag/python/archive/2026/09/10?page=2``), or
    None when the path is not an archive path; raises ValueError for a bad date or page."""
    parts = urlsplit(raw_path)
    segments = [s for s in parts.path.split("/") if s]
    if len(segments) < 3 or segments[0] != "tag" or segments[2] != "archive":
        return None
    numbers = segments[3:]
    if len(numbers) > 3 or not all(n.isdigit() for n in numbers):
        raise ValueError("not a date")
    values = [int(n) for n in numbers] + [0] * (3 - len(numbers))
    year, month, day = values
    if numbers and not 1970 <= year <= 9999:
        raise ValueError("not a year")
    if len(numbers) > 1 and not 1 <= month <= 12:
        raise ValueError("not a month")
    if len(numbers) > 2 and not 1 <= day <= calendar.monthrange(year, month)[1]:
        raise ValueError("not a day")
    page_values = parse_qs(parts.query).get("page", ["1"])
    if not page_values[0].isdigit() or int(page_values[0]) < 1:
        raise ValueError("not a page")
    return ArchivePath(segments[1], year or None, month or None, day or None, int(page_values[0]))


@dataclass
class ArchiveAnswer:
    """What the site answers: a page (``html``) or a redirect (``location``), or 404."""

    status: int
    html: str = ""
    location: str = ""


def archive_answer(content: SiteContent, address: ArchivePath) -> ArchiveAnswer:
    """The response to an archive address (see the module docstring)."""
    tag = content.tags.get(address.tag)
    if tag is None:
        return ArchiveAnswer(404)
    every = tagged(content, tag.slug)  # once a request: an archive can be large
    stories = [s for s in every if address.covers(s.published_at)]
    if address.day is not None and not stories:
        month = ArchivePath(address.tag, address.year, address.month)
        return ArchiveAnswer(302, location=month.path)
    if address.day is not None:
        stories = _ranked(stories)
        size = content.archive_page_size
        pages = -(-len(stories) // size)
        if address.page > pages:
            return ArchiveAnswer(404)
        shown = stories[(address.page - 1) * size : address.page * size]
        paging = _paging(address, pages, size)
    else:
        if address.page != 1:
            return ArchiveAnswer(404)
        shown, paging = _ranked(stories)[:TOP_STORIES], {}
    payload = archive_payload(content, tag, address, shown, paging=paging, every=every)
    return ArchiveAnswer(200, html=archive_page(tag, payload))


def tagged(content: SiteContent, tag: str) -> list[SiteStory]:
    """Every story carrying ``tag`` (the archive's stories), oldest first."""
    stories = [s for s in content.stories.values() if any(t.slug == tag for t in s.tags)]
    return sorted(stories, key=lambda s: (s.published_at, s.id))


def story_days(content: SiteContent, tag: str) -> list[tuple[int, int, int]]:
    """The UTC days that hold stories of ``tag``, oldest first."""
    return _days(tagged(content, tag))


def _days(stories: list[SiteStory]) -> list[tuple[int, int, int]]:
    return sorted({_ymd(s.published_at) for s in stories})


def _ranked(stories: list[SiteStory]) -> list[SiteStory]:
    return sorted(stories, key=lambda s: (-s.claps, s.id))


def _ymd(moment: datetime) -> tuple[int, int, int]:
    return moment.year, moment.month, moment.day


def _paging(address: ArchivePath, pages: int, size: int) -> dict[str, Any]:
    paging: dict[str, Any] = {"path": MEDIUM_ROOT + address.path}
    if address.page < pages:
        paging["next"] = {"page": address.page + 1, "limit": size}
    if address.page > 1:
        paging["previous"] = {"page": address.page - 1, "limit": size}
    return paging


# --- the payload --------------------------------------------------------------------------


def archive_payload(
    content: SiteContent,
    tag: SiteTag,
    address: ArchivePath,
    stories: list[SiteStory],
    *,
    paging: dict[str, Any],
    every: list[SiteStory],
) -> dict[str, Any]:
    """``{references, paging, tag, archiveIndex, streamItems}`` of one archive page (``every``:
    the tag's stories, the index's)."""
    now = epoch_ms(content.clock())
    return {
        "references": _references(content, stories),
        "paging": paging,
        "tag": _tag(tag, len(every)),
        "archiveIndex": _index(set(_days(every)), address),
        "streamItems": [
            {"createdAt": now, "postPreview": {"postId": s.id}, "randomId": s.id[::-1],
             "itemType": "postPreview", "type": "StreamItem"}
            for s in stories
        ],
    }  # fmt: skip


def _references(content: SiteContent, stories: list[SiteStory]) -> dict[str, Any]:
    posts = {s.id: _post(content, s) for s in stories}
    users = {}
    collections = {}
    for story in stories:
        author = content.authors[story.author]
        users[author.id] = {
            "userId": author.id, "name": author.name, "username": author.username,
            "createdAt": epoch_ms(utc(2019, 1, 1)), "imageId": author.image_id,
            "twitterScreenName": "", "mediumMemberAt": 1_600_000_000_000 if author.is_member else 0,
            "isMembershipTrialEligible": not author.is_member, "type": "User",
        }  # fmt: skip
        publication = content.publication_of(story)
        if publication is not None:
            collection: dict[str, Any] = {
                "id": publication.id, "name": publication.name, "slug": publication.slug,
                "tags": [], "creatorId": author.id,
                "metadata": {"followerCount": publication.followers, "activeAt": epoch_ms(
                    story.published_at)},
                "subscriberCount": publication.followers,
                "tagline": publication.description[:60], "type": "Collection",
            }  # fmt: skip
            if publication.domain:
                collection["domain"] = publication.domain
            collections[publication.id] = collection
    return {"Post": posts, "User": users, "Collection": collections}


def _post(content: SiteContent, story: SiteStory) -> dict[str, Any]:
    author = content.authors[story.author]
    publication = content.publication_of(story)
    return {
        "id": story.id, "versionId": story.id[::-1], "creatorId": author.id,
        "homeCollectionId": publication.id if publication else "",
        "title": story.title, "detectedLanguage": story.language,
        "createdAt": str(epoch_ms(story.published_at) - 3_600_000),
        "updatedAt": str(epoch_ms(story.last_update)),
        "firstPublishedAt": str(epoch_ms(story.published_at)),
        "latestPublishedAt": str(epoch_ms(story.last_update)),
        "virtuals": {
            "statusForCollection": "APPROVED" if publication else "",
            "previewImage": {"imageId": story.image_id, "filter": "", "originalWidth": 1400,
                             "originalHeight": 800, "strategy": "resample"},
            "wordCount": story.word_count,
            "imageCount": 1,
            "readingTime": story.reading_time,
            "subtitle": story.subtitle,
            "recommends": story.voters,  # the retired recommend count: never the claps
            "tags": [{"slug": t.slug, "name": t.name, "postCount": _post_count(content, t.slug),
                      "type": "Tag"} for t in story.tags],
            "socialRecommendsCount": 0,
            "responsesCreatedCount": story.responses,
            "isLockedPreviewOnly": False,
            "totalClapCount": story.claps,
        },
        "slug": story.slug,
        "visibility": 2 if story.member_only else 0,
        "uniqueSlug": story.unique_slug,
        "canonicalUrl": "", "webCanonicalUrl": "", "mediumUrl": "",
        "isSubscriptionLocked": story.member_only,
        "lockedPostSource": 1 if story.member_only else 0,
        "inResponseToPostId": "",
        "type": "Post",
    }  # fmt: skip


def _post_count(content: SiteContent, slug: str) -> int:
    tag = content.tags.get(slug)
    return tag.story_count if tag is not None else 0


def _tag(tag: SiteTag, count: int) -> dict[str, Any]:
    return {"slug": tag.slug, "name": tag.name, "postCount": count,
            "metadata": {"postCount": count}, "type": "Tag"}  # fmt: skip


def _index(days: set[tuple[int, int, int]], address: ArchivePath) -> dict[str, Any]:
    years = sorted({y for y, _, _ in days})
    months = {(y, m) for y, m, _ in days}
    index: dict[str, Any] = {
        "timeBucket": _bucket(
            address.year, address.month, address.day, has_stories=_has(days, address)
        ),
        "yearlyBuckets": [_bucket(y, has_stories=True) for y in years],
        "monthlyBuckets": [],
        "dailyBuckets": [],
    }
    if address.year is not None:
        index["monthlyBuckets"] = [
            _bucket(address.year, m, has_stories=(address.year, m) in months) for m in range(1, 13)
        ]
    if address.year is not None and address.month is not None:
        last = calendar.monthrange(address.year, address.month)[1]
        index["dailyBuckets"] = [
            _bucket(
                address.year, address.month, d, has_stories=(address.year, address.month, d) in days
            )
            for d in range(1, last + 1)
        ]
    if address.year is not None:
        earlier = [b for b in _buckets_of(address, days) if b < _key(address)]
        later = [b for b in _buckets_of(address, days) if b > _key(address)]
        if earlier:
            index["previousBucket"] = _bucket(*earlier[-1], has_stories=True)
        if later:
            index["nextBucket"] = _bucket(*later[0], has_stories=True)
    return index


def _key(address: ArchivePath) -> tuple[int, ...]:
    return tuple(v for v in (address.year, address.month, address.day) if v is not None)


def _buckets_of(address: ArchivePath, days: set[tuple[int, int, int]]) -> list[Any]:
    """Sorted buckets with stories at the address's level (for previous/next)."""
    depth = len(_key(address))
    return sorted({day[:depth] for day in days})


def _has(days: set[tuple[int, int, int]], address: ArchivePath) -> bool:
    key = _key(address)
    return any(day[: len(key)] == key for day in days)


def _bucket(year: int | None, month: int | None = None, day: int | None = None, *,
            has_stories: bool = False) -> dict[str, Any]:  # fmt: skip
    return {
        "year": f"{year:04d}" if year else "",
        "month": f"{month:02d}" if month else "",
        "day": f"{day:02d}" if day else "",
        "hasStories": has_stories,
    }


def archive_page(tag: SiteTag, payload: dict[str, Any]) -> str:
    """The HTML page: Cloudflare's challenge-platform precursor (on every normal 2026 page, at
    status 200) and the payload in its legacy script, as the real page carries them."""
    ray = hashlib.sha1(json.dumps(payload["archiveIndex"]).encode()).hexdigest()[:16]
    return (
        '<!DOCTYPE html><html lang="en"><head>'
        f"<title>{escape(tag.name)} archive – Medium</title>"
        '<link rel="stylesheet" href="https://cdn-client.medium.com/lite/main.css"></head><body>'
        f"<script>window.__CF$cv$params={{r:'{ray}',t:'MTc4OTU1NjA1MA=='}};"
        "(function(){if(!document.body)return;var s=document.createElement('script');"
        "s.src='/cdn-cgi/challenge-platform/scripts/precursor/main.js';"
        "document.head.appendChild(s);})();</script>"
        '<script>// <![CDATA[ window["obvInit"]('
        + json.dumps(payload)
        + ") // ]]></script></body></html>"
    )


def archive_paths(content: SiteContent, tag: str) -> Iterator[str]:
    """Every archive path of ``tag`` that serves stories: the root, each year, each month
    and each day with stories, with the day's further pages."""
    days = story_days(content, tag)
    yield ArchivePath(tag).path
    for year in sorted({d[0] for d in days}):
        yield ArchivePath(tag, year).path
    for year, month in sorted({d[:2] for d in days}):
        yield ArchivePath(tag, year, month).path
    for year, month, day in days:
        address = ArchivePath(tag, year, month, day)
        count = sum(1 for s in tagged(content, tag) if address.covers(s.published_at))
        for page in range(1, -(-count // content.archive_page_size) + 1):
            yield address.path + ("" if page == 1 else f"?page={page}")
