"""Data model of the local Medium-like site: :class:`SiteContent`, the whole site, holds
every value a page shows (the authors, stories, tags… of :mod:`topics_crawler.site.entities`),
and can grow a synthetic archive of a tag (:meth:`SiteContent.with_archive`).

Pages are rendered from these objects on every request, so a test can change
a value (``content.stories[id].claps += 10``) and see it in the next response.
"""

from __future__ import annotations

import copy
import random
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta

from topics_crawler.site.entities import (
    MEDIUM_ROOT,
    ArchiveSpec,
    SiteAuthor,
    SitePublication,
    SiteResponse,
    SiteStory,
    SiteTag,
    TopicRef,
    utc,
)


@dataclass
class SiteContent:
    """The whole site. Mutable: the server renders from it on every request."""

    authors: dict[str, SiteAuthor] = field(default_factory=dict)
    publications: dict[str, SitePublication] = field(default_factory=dict)
    stories: dict[str, SiteStory] = field(default_factory=dict)
    tags: dict[str, SiteTag] = field(default_factory=dict)
    now: datetime | None = None
    """Clock of relative card dates ("3d ago"); None means the real clock."""
    graphql_fault: str | None = None
    """Misbehaviour of ``/_/graphql`` for tests, one of ``topics_crawler.site.graphql.FAULTS``."""
    graphql_refused: bool = False
    """Every ``POST /_/graphql`` answered 403 while pages are served (2026-09, one address)."""
    archive_page_size: int = 128
    """Stories a tag's day archive page holds before ``?page=2`` (Medium: 128, 2026-09)."""
    schema_drift: set[str] = field(default_factory=set)
    """``Type.field`` names gone from Medium's schema (see ``topics_crawler.site.schema``)."""
    author_archives: dict[str, ArchiveSpec] = field(default_factory=dict)
    """Username → how the profile pages its stories (topics_crawler/site/author_archive.py)."""
    threads: dict[str, list[SiteResponse]] = field(default_factory=dict)
    """Story id → its top-level responses (each with its replies); see ``.threads``."""
    responses_fault: str | None = None
    """Misbehaviour of the responses answer, one of ``topics_crawler.site.threads.FAULTS``."""
    left_medium: frozenset[str] = frozenset()
    """Custom domains that left Medium: they serve a WordPress site, nothing of Medium's
    (as towardsdatascience.com does since 2025; ``topics_crawler.site.routes.moved_page``)."""
    member_sids: set[str] = field(default_factory=set)
    """``sid`` cookie values of paying members' sessions: their story pages are whole."""

    def is_member(self, cookie_header: str) -> bool:
        """True when a ``Cookie`` header carries the ``sid`` of a member's session."""
        sids = {
            value.strip()
            for name, _, value in (part.partition("=") for part in cookie_header.split(";"))
            if name.strip() == "sid"
        }
        return bool(sids & self.member_sids)

    def add_author(self, author: SiteAuthor) -> SiteAuthor:
        self.authors[author.username] = author
        return author

    def add_publication(self, publication: SitePublication) -> SitePublication:
        self.publications[publication.slug] = publication
        return publication

    def add_story(self, story: SiteStory) -> SiteStory:
        if story.author not in self.authors:
            raise ValueError(f"story {story.slug!r}: unknown author {story.author!r}")
        if story.publication and story.publication not in self.publications:
            raise ValueError(f"story {story.slug!r}: unknown publication {story.publication!r}")
        self.stories[story.id] = story
        return story

    def add_tag(self, tag: SiteTag) -> SiteTag:
        self.tags[tag.slug] = tag
        return tag

    def clock(self) -> datetime:
        return self.now or datetime.now(UTC)

    def publication_of(self, story: SiteStory) -> SitePublication | None:
        return self.publications.get(story.publication) if story.publication else None

    def story_url(self, story: SiteStory) -> str:
        """Canonical URL: custom domain, publication path or the author's path."""
        publication = self.publication_of(story)
        if publication and publication.domain:
            return f"https://{publication.domain}/{story.unique_slug}"
        if publication:
            return f"{MEDIUM_ROOT}/{publication.slug}/{story.unique_slug}"
        return f"{MEDIUM_ROOT}/@{story.author}/{story.unique_slug}"

    def story_path(self, story: SiteStory) -> str:
        """Path of the story on the local site (custom domains under ``/_host/``)."""
        publication = self.publication_of(story)
        if publication and publication.domain:
            return f"/_host/{publication.domain}/{story.unique_slug}"
        return self.story_url(story).removeprefix(MEDIUM_ROOT)

    def stories_by(self, username: str) -> list[SiteStory]:
        """An author's stories, newest first (what the profile lists)."""
        mine = [s for s in self.stories.values() if s.author == username]
        return sorted(mine, key=lambda s: s.published_at, reverse=True)

    def stories_in(self, slug: str) -> list[SiteStory]:
        """A publication's stories, newest first (what its home lists)."""
        ours = [s for s in self.stories.values() if s.publication == slug]
        return sorted(ours, key=lambda s: s.published_at, reverse=True)

    def with_archive(self, tag_slug: str, n: int, seed: int = 0) -> SiteContent:
        """Copy of the site with ``n`` synthetic stories tagged ``tag_slug``.

        The stories are written by new synthetic authors (eight stories each); the
        tag's existing card authors list those authors in their "Following"
        sidebar, so a crawl reaches every archive story through author pages.
        Tag pages keep listing only their own cards. Same arguments, same site.
        """
        tag = self.tags[tag_slug]
        site = copy.deepcopy(self)
        site.tags[tag_slug].story_count += n
        rng = random.Random(f"{tag_slug}:{n}:{seed}")
        hosts = _card_authors(site, site.tags[tag_slug])
        ref = TopicRef(tag.slug, tag.name)
        for index in range(n):
            author = _archive_author(site, tag_slug, seed, index // ARCHIVE_STORIES_PER_AUTHOR, rng)
            if index % ARCHIVE_STORIES_PER_AUTHOR == 0 and hosts:
                host = site.authors[hosts[(index // ARCHIVE_STORIES_PER_AUTHOR) % len(hosts)]]
                host.following_list.append(author.username)
            site.add_story(_archive_story(ref, seed, index, author.username, rng))
        return site


ARCHIVE_STORIES_PER_AUTHOR = 8
_ARCHIVE_START = utc(2024, 1, 1)
_WORDS = (
    "gradient", "shard", "replica", "optimizer", "cluster", "batch", "pipeline", "tensor",
    "kernel", "cache", "checkpoint", "collective", "bandwidth", "latency", "throughput",
)  # fmt: skip
_TITLE_SHAPES = (
    "Notes on {a} and {b}",
    "What {a} taught me about {b}",
    "A field guide to {a} {b}",
    "Debugging {a} under {b} pressure",
    "Why {a} beats {b} at scale",
)
_FIRST_NAMES = ("Ada", "Bruno", "Chen", "Dalia", "Emeka", "Farah", "Goran", "Hiro", "Ines", "Jonas")
_LAST_NAMES = ("Alvarez", "Brandt", "Costa", "Dube", "Eriksen", "Fujita", "Garcia", "Hale")


def _card_authors(site: SiteContent, tag: SiteTag) -> list[str]:
    """Usernames of the authors whose cards are on the tag page, page order."""
    seen: list[str] = []
    for story_ids in tag.sections.values():
        for story_id in story_ids:
            username = site.stories[story_id].author
            if username not in seen:
                seen.append(username)
    return seen


def _archive_author(
    site: SiteContent, tag_slug: str, seed: int, number: int, rng: random.Random
) -> SiteAuthor:
    username = f"{tag_slug.replace('-', '_')}_writer_{seed}_{number}"
    existing = site.authors.get(username)
    if existing is not None:
        return existing
    name = f"{rng.choice(_FIRST_NAMES)} {rng.choice(_LAST_NAMES)}"
    bio = f"Writes about {rng.choice(_WORDS)}s and {rng.choice(_WORDS)}s."
    return site.add_author(
        SiteAuthor(
            username=username,
            name=name,
            bio=bio,
            followers=rng.randrange(0, 5000),
            following=rng.randrange(0, 300),
            is_member=rng.random() < 0.3,
        )
    )


def _archive_story(
    tag: TopicRef, seed: int, index: int, username: str, rng: random.Random
) -> SiteStory:
    first, second = rng.sample(_WORDS, 2)
    title = rng.choice(_TITLE_SHAPES).format(a=first, b=second)
    title = f"{title[0].upper()}{title[1:]} ({index + 1})"
    paragraphs = [
        f"Part {index + 1} of the {tag.name} archive looks at {first} and {second}.",
        f"We measured {rng.randrange(2, 64)} runs and kept the {first} settings fixed.",
        f"The {second} numbers moved by {rng.randrange(1, 40)} percent between runs.",
    ]
    claps = rng.randrange(0, 3000)
    return SiteStory(
        slug=f"{tag.slug}-archive-{seed}-{index + 1}",
        title=title,
        subtitle=f"Archive notes on {first} and {second}",
        author=username,
        published_at=_ARCHIVE_START + timedelta(hours=7 * index),
        paragraphs=paragraphs,
        claps=claps,
        voters=claps // 4,
        responses=rng.randrange(0, 40),
        tags=[tag],
        member_only=rng.random() < 0.2,
    )
