"""What the local Medium-like site shows: authors, publications, stories, tags, responses.

Each is a plain dataclass the pages are rendered from; :mod:`topics_crawler.site.model`
holds them all. Ids are derived from names with a hash, so they are stable across runs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import Literal

MEDIUM_ROOT = "https://medium.com"
#: Words per minute Medium uses for ``readingTime``.
WORDS_PER_MINUTE = 265

FollowKind = Literal["author", "publication"]
#: How a tag page is rendered: today's page (cards in the DOM, see seed-tag-page.txt), the
#: 2022 page (state only: ``tagFeed`` & co., no cards), or today's page after a redesign
#: our parser does not know (cards whose story links are gone: the drift alarm's case).
TagGeneration = Literal["today", "2022", "changed"]


def make_id(kind: str, key: str) -> str:
    """Deterministic Medium-style id: 12 lowercase hex characters."""
    return hashlib.sha1(f"{kind}:{key}".encode()).hexdigest()[:12]


def make_image_id(key: str) -> str:
    """Deterministic miro image id shaped like Medium's (``1*AbC…xyz.jpeg``)."""
    digest = hashlib.sha256(key.encode()).digest()
    alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
    return "1*" + "".join(alphabet[b % 64] for b in digest[:22]) + ".jpeg"


def utc(year: int, month: int, day: int, hour: int = 9, minute: int = 0) -> datetime:
    """A UTC datetime (every date of the site is UTC)."""
    return datetime(year, month, day, hour, minute, tzinfo=UTC)


@dataclass(frozen=True)
class TopicRef:
    """A link to a tag by slug with its display name (breadcrumbs, sub-topics, related)."""

    slug: str
    name: str


@dataclass
class SiteCluster:
    """One sub-topic cluster of a tag page ("Explore recommended reads…")."""

    name: str
    description: str
    topics: list[TopicRef] = field(default_factory=list)
    stories: list[str] = field(default_factory=list)
    """Story ids listed under the cluster, card order."""


@dataclass
class SiteAuthor:
    """A Medium user who writes stories."""

    username: str
    name: str
    bio: str = ""
    followers: int = 0
    following: int = 0
    is_member: bool = False
    #: Usernames shown in the profile's "Following" sidebar (links to other profiles).
    following_list: list[str] = field(default_factory=list)

    @property
    def id(self) -> str:
        return make_id("user", self.username)

    @property
    def image_id(self) -> str:
        return make_image_id("avatar:" + self.username)

    @property
    def url(self) -> str:
        return f"{MEDIUM_ROOT}/@{self.username}"


@dataclass
class SitePublication:
    """A publication ("collection"); ``domain`` set means it lives on a custom domain."""

    slug: str
    name: str
    description: str = ""
    followers: int = 0
    domain: str | None = None

    @property
    def id(self) -> str:
        return make_id("collection", self.slug)

    @property
    def url(self) -> str:
        """Canonical home URL (a bare custom domain keeps its ``/``, as ``canonical_url``)."""
        return f"https://{self.domain}/" if self.domain else f"{MEDIUM_ROOT}/{self.slug}"

    @property
    def logo_id(self) -> str:
        return make_image_id("logo:" + self.slug)

    @property
    def path(self) -> str:
        """Path of the home page on the local site."""
        return f"/_host/{self.domain}/" if self.domain else f"/{self.slug}"


@dataclass(frozen=True)
class SiteFigure:
    """An image in a story's body, after its first ``after`` paragraphs: a Medium image id
    (served by the site's image host, ``topics_crawler/site/images.py``) or an off-site ``url``."""

    after: int
    image_id: str | None = None
    url: str | None = None
    alt: str = ""
    caption: str = ""


@dataclass
class SiteStory:
    """One story with everything its page and its listing cards show."""

    slug: str
    title: str
    subtitle: str
    author: str
    """Username of the author."""
    published_at: datetime
    paragraphs: list[str]
    publication: str | None = None
    """Slug of the publication, None for a personal story."""
    updated_at: datetime | None = None
    claps: int = 0
    voters: int = 0
    responses: int = 0
    tags: list[TopicRef] = field(default_factory=list)
    member_only: bool = False
    language: str = "en"
    figures: list[SiteFigure] = field(default_factory=list)
    state: bool = True
    """False: the page carries no embedded state (JSON-LD, meta tags and markup only)."""

    @property
    def id(self) -> str:
        return make_id("post", self.slug)

    @property
    def unique_slug(self) -> str:
        return f"{self.slug}-{self.id}"

    @property
    def image_id(self) -> str:
        return make_image_id("preview:" + self.slug)

    @property
    def last_update(self) -> datetime:
        return self.updated_at or self.published_at

    @property
    def word_count(self) -> int:
        return sum(len(p.split()) for p in [self.title, self.subtitle, *self.paragraphs])

    @property
    def reading_time(self) -> float:
        """Minutes, computed from the word count the way Medium does (a float)."""
        return round(self.word_count / WORDS_PER_MINUTE, 6)

    @property
    def preview_paragraphs(self) -> list[str]:
        """What a logged-out reader sees of a member-only story."""
        return self.paragraphs[:2] if self.member_only else self.paragraphs

    def body(self, member: bool = False) -> list[str | SiteFigure]:
        """What the page shows of the body in order: paragraphs and the figures among them
        (a member-only story's figures past its preview are shown to members only)."""
        shown = self.paragraphs if member else self.preview_paragraphs
        out: list[str | SiteFigure] = []
        for index in range(len(shown) + 1):
            out += [figure for figure in self.figures if figure.after == index]
            if index < len(shown):
                out.append(shown[index])
        return out


@dataclass
class SiteTag:
    """A tag (topic) page and its sections."""

    slug: str
    name: str
    followers: int = 0
    story_count: int = 0
    description: str | None = None
    parents: list[TopicRef] = field(default_factory=list)
    """Breadcrumb, broadest first."""
    clusters: list[SiteCluster] = field(default_factory=list)
    sections: dict[str, list[str]] = field(default_factory=dict)
    """Section heading ("Popular this week") → story ids, card order."""
    who_to_follow: list[tuple[FollowKind, str]] = field(default_factory=list)
    """``("author", username)`` or ``("publication", slug)`` in page order."""
    related: list[TopicRef] = field(default_factory=list)
    generation: TagGeneration = "today"
    writers: int = 0
    """Writers of the tag (2022 ``TagFeature.writerCount``)."""
    top_writers: list[str] = field(default_factory=list)
    """Usernames of the tag's top writers (2022 ``tagTopWriters``)."""
    lowercase_breadcrumb: bool = False
    """Render ``aria-label="breadcrumb"`` and no ``data-testid`` hooks (a markup variant)."""

    @property
    def url(self) -> str:
        return f"{MEDIUM_ROOT}/tag/{self.slug}"

    def listed(self) -> list[str]:
        """Every story id the page lists (clusters first, then sections), once each."""
        ids = [sid for c in self.clusters for sid in c.stories]
        ids += [sid for section in self.sections.values() for sid in section]
        return list(dict.fromkeys(ids))


@dataclass(frozen=True)
class ArchiveSpec:
    """How one author's profile pages its stories."""

    form: Literal["state", "stream"]
    page_size: int = 3
    bad_page: int | None = None


@dataclass
class SiteResponse:
    """One response; ``author`` None means deleted (Medium keeps its place in the thread)."""

    key: str
    author: str | None
    text: list[str]
    published_at: datetime
    claps: int = 0
    member_only: bool = False
    replies: list[SiteResponse] = field(default_factory=list)

    @property
    def id(self) -> str:
        return make_id("response", self.key)
