"""A larger site for distributed and throughput tests: many tags of ~20 stories each.

    content = with_scale_tags(default_site(), 25)          # 25 tags, 500 stories, 63 authors
    crawl -a tags=<','.join(scale_tag_slugs(25))>

Tag ``scale-NNN`` lists ``stories_per_tag`` new stories in one "Latest stories"
section; their authors (``scale_writer_K``, eight stories each) are new too, so
a crawl of all ``n`` tags fetches ``n`` tag pages, ``n * stories_per_tag`` story
pages and ``ceil(n * stories_per_tag / 8)`` author pages, each reachable once.
Deterministic: same arguments, same site.
"""

from __future__ import annotations

import copy
from datetime import timedelta

from topics_crawler.site.entities import SiteAuthor, SiteStory, SiteTag, TopicRef, utc
from topics_crawler.site.model import SiteContent

STORIES_PER_AUTHOR = 8
_START = utc(2025, 3, 1)
_WORDS = ("shard", "replica", "queue", "frontier", "worker", "lease", "backoff", "quorum")


def scale_tag_slugs(n_tags: int) -> list[str]:
    """Slugs of the tags :func:`with_scale_tags` adds, in order."""
    return [f"scale-{index:03d}" for index in range(n_tags)]


def scale_page_count(n_tags: int, stories_per_tag: int = 20) -> int:
    """Pages a full crawl of every scale tag fetches (tags, stories, authors)."""
    stories = n_tags * stories_per_tag
    return n_tags + stories + -(-stories // STORIES_PER_AUTHOR)


def with_scale_tags(content: SiteContent, n_tags: int, stories_per_tag: int = 20) -> SiteContent:
    """Copy of ``content`` with ``n_tags`` extra tags of ``stories_per_tag`` stories each."""
    site = copy.deepcopy(content)
    number = 0
    for slug in scale_tag_slugs(n_tags):
        ref = TopicRef(slug, f"Scale topic {slug.removeprefix('scale-')}")
        story_ids, authors = [], []
        for _ in range(stories_per_tag):
            author = _author(site, number // STORIES_PER_AUTHOR)
            authors.append(author.username)
            story_ids.append(site.add_story(_story(ref, number, author.username)).id)
            number += 1
        site.add_tag(
            SiteTag(
                slug,
                ref.name,
                followers=100 + number,
                story_count=stories_per_tag,
                description=f"Stories filed under {ref.name}.",
                sections={"Latest stories": story_ids},
                # A complete tag page has a "Who to follow" box (else the browser is asked).
                who_to_follow=[("author", authors[0])],
            )
        )
    return site


def _author(site: SiteContent, index: int) -> SiteAuthor:
    username = f"scale_writer_{index}"
    if username in site.authors:
        return site.authors[username]
    return site.add_author(
        SiteAuthor(
            username=username,
            name=f"Scale Writer {index}",
            bio=f"Writes about {_WORDS[index % len(_WORDS)]}s.",
            followers=index * 7,
            following=index % 50,
        )
    )


def _story(tag: TopicRef, number: int, username: str) -> SiteStory:
    first, second = _WORDS[number % len(_WORDS)], _WORDS[(number // 3) % len(_WORDS)]
    return SiteStory(
        slug=f"{tag.slug}-note-{number + 1}",
        title=f"Note {number + 1}: {first} and {second}",
        subtitle=f"What a {first} teaches about {second}",
        author=username,
        published_at=_START + timedelta(hours=5 * number),
        paragraphs=[
            f"Note {number + 1} of {tag.name} looks at {first} and {second}.",
            f"We ran {number % 40 + 2} trials with the {first} fixed.",
            f"The {second} moved by {number % 30 + 1} percent.",
        ],
        claps=number * 3 % 2000,
        voters=number % 500,
        responses=number % 25,
        tags=[tag],
    )
