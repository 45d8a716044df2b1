"""Items: what one crawl of Medium yields, one dataclass per entity.

Every field is declared once with :func:`~topics_crawler.items.fields.spec`: its kind
(format), whether it is required, whether it identifies the entity, its ``*_raw``
companion and its description; validation, the merge, the Parquet schema and the
dataset card read those declarations. A value that a page does not
carry is ``None`` (or an empty list / mapping), never a made-up value.

Shared formats:

* **URL**: canonical ``https`` URL, lowercase host, no query string, no
  fragment, no trailing slash (except the bare host).
* **Timestamp**: ISO 8601 in UTC with second precision, ``YYYY-MM-DDTHH:MM:SSZ``.
* **Id**: Medium's own id, lowercase hex (``9e53ca408c48``).
* **Count**: non-negative ``int``; ``1.2K`` on a page becomes ``1200`` and
  the source text is kept in the matching ``*_raw`` field.
* ``*_raw`` fields hold the source string where normalising it loses
  information (``"1.2K"``, ``"1d ago"``); ``None`` where the source was exact.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, fields
from typing import Any

from itemadapter import ItemAdapter

from topics_crawler.items.fields import DATA_SOURCE_DOC, Kind, identity_fields, spec
from topics_crawler.items.relations import TagEdge, TagStory


@dataclass(kw_only=True)
class Story:
    """One Medium story (post)."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"story"``.',
        default="story",
        init=False,
    )
    story_id: str | None = spec(
        Kind.POST_ID,
        "Medium post id, lowercase hex, 10 to 12 characters (``c9700a7cf36d``).",
        required=True,
        identity=0,
    )
    url: str | None = spec(
        Kind.URL,
        "Canonical URL of the story, on its canonical host (custom domains kept).",
        required=True,
    )
    canonical_url: str | None = spec(
        Kind.LINK,
        "Where the story says its original lives when that is off Medium (a cross-post's "
        "``rel=canonical``: Substack, habr.com, dev.to…), as given; None when the Medium URL "
        "is canonical. ``url`` (on Medium) stays the story's address.",
    )
    title: str | None = spec(Kind.TEXT, "Title, trimmed, NFC.", required=True)
    subtitle: str | None = spec(
        Kind.TEXT,
        "Subtitle (the deck under the title), trimmed; None when the story has none.",
    )
    author_id: str | None = spec(Kind.HEX_ID, "Medium user id of the author, lowercase hex.")
    author_username: str | None = spec(
        Kind.USERNAME,
        "Author's username without the leading ``@``.",
    )
    author_name: str | None = spec(Kind.TEXT, "Author's display name.")
    publication_id: str | None = spec(
        Kind.HEX_ID,
        "Medium id of the publication (collection); None when not in a publication.",
    )
    publication_slug: str | None = spec(
        Kind.SLUG,
        "Publication slug (``pinterest-engineering``); None when not in a publication.",
    )
    publication_name: str | None = spec(
        Kind.TEXT,
        "Publication display name; None when not in a publication.",
    )
    published_at: str | None = spec(
        Kind.TIMESTAMP,
        "First publication time, Timestamp (UTC).",
        raw="published_at_raw",
    )
    published_at_raw: str | None = spec(
        Kind.RAW,
        'Source text of ``published_at`` when it was relative or day-only (``"1d ago"``).',
    )
    updated_at: str | None = spec(Kind.TIMESTAMP, "Last update time, Timestamp (UTC).")
    reading_time_min: float | None = spec(
        Kind.MINUTES,
        "Estimated reading time in minutes, as Medium computes it (may have decimals).",
    )
    word_count: int | None = spec(
        Kind.COUNT,
        "Number of words in the body, as Medium reports it (or counted from the full text).",
    )
    claps: int | None = spec(Kind.COUNT, "Total clap count, Count.", raw="claps_raw")
    claps_raw: str | None = spec(
        Kind.RAW,
        'Source text of ``claps`` when it was abbreviated (``"1.2K"``).',
    )
    responses: int | None = spec(
        Kind.COUNT,
        "Number of responses (comments), Count.",
        raw="responses_raw",
    )
    responses_raw: str | None = spec(
        Kind.RAW,
        "Source text of ``responses`` when it was abbreviated.",
    )
    tags: list[str] = spec(
        Kind.TAG_LIST,
        "Tag slugs in page order (``machine-learning``), without duplicates.",
        factory=list,
    )
    is_member_only: bool | None = spec(
        Kind.BOOL,
        "True for member-only (locked) stories; None when the page does not say.",
    )
    language: str | None = spec(
        Kind.LANGUAGE,
        "Detected language, ISO 639-1 code (``en``), when Medium states it.",
    )
    image_url: str | None = spec(Kind.LINK, "Preview image URL (``https://miro.medium.com/...``).")
    images: list[dict[str, str | None]] = spec(
        Kind.RECORD_LIST,
        "The story's images as the crawl stored them (``-s IMAGES_ENABLED=1``; empty"
        ' otherwise): the preview image, then the body\'s, each ``{"role": "preview"|'
        '"body", "url", "path", "checksum", "failure"}``: ``path`` the local copy'
        " (``images/full/<sha1>.jpg``, relative to the dataset or feed folder), ``checksum``"
        " its MD5, ``failure`` why it could not be stored (``path`` None).",
        members=("role", "url", "path", "checksum", "failure"),
        factory=list,
    )
    text: str | None = spec(
        Kind.BODY,
        "Body as Markdown-flavoured plain text: paragraphs separated by blank lines.",
    )
    text_is_preview: bool | None = spec(
        Kind.BOOL,
        "True when ``text`` is only the preview a logged-out reader sees (locked story).",
    )
    access: str | None = spec(
        Kind.ACCESS,
        "How much of the story ``text`` holds: ``full``, ``preview`` (a member-only story as a"
        " logged-out reader sees it) or ``full_with_session`` (a member-only story shown whole"
        " to the user's own session cookie); None without text. No wall is bypassed.",
    )
    preview_share: float | None = spec(
        Kind.SHARE,
        "A preview's words over the story's word count, where Medium states the count"
        " (0.3127); None otherwise.",
    )
    markdown: str | None = spec(
        Kind.BODY,
        "Body as CommonMark with its formatting: headings, lists, fenced code (byte for "
        "byte), quotes, links, bold, italic, inline code, images (alt, caption), embeds as "
        "links. A locked story's preview ends with a line saying it is only the preview.",
    )
    in_response_to: str | None = spec(
        Kind.POST_ID,
        "Post id of the story (or response) this story answers, when it is a response; "
        "None for a story that answers nothing.",
    )
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class Author:
    """One Medium user who writes stories."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"author"``.',
        default="author",
        init=False,
    )
    author_id: str | None = spec(
        Kind.HEX_ID,
        "Medium user id, lowercase hex.",
        one_of="id",
        identity=0,
    )
    username: str | None = spec(
        Kind.USERNAME,
        "Username without the leading ``@``.",
        one_of="id",
        identity=1,
    )
    name: str | None = spec(Kind.TEXT, "Display name, trimmed.")
    url: str | None = spec(
        Kind.URL,
        "Canonical profile URL (``https://medium.com/@username``).",
        required=True,
    )
    bio: str | None = spec(Kind.BODY, "Short biography, trimmed; None when empty.")
    followers: int | None = spec(Kind.COUNT, "Follower count, Count.", raw="followers_raw")
    followers_raw: str | None = spec(
        Kind.RAW,
        'Source text of ``followers`` when it was abbreviated (``"12K Followers"``).',
    )
    following: int | None = spec(Kind.COUNT, "Number of users this author follows, Count.")
    is_member: bool | None = spec(
        Kind.BOOL,
        "True when the author is a paying Medium member; None when the page does not say.",
    )
    image_url: str | None = spec(Kind.LINK, "Avatar URL.")
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class Publication:
    """One Medium publication (a "collection" in Medium's own data)."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"publication"``.',
        default="publication",
        init=False,
    )
    publication_id: str | None = spec(
        Kind.HEX_ID,
        "Medium collection id, lowercase hex.",
        one_of="id",
        identity=0,
    )
    slug: str | None = spec(
        Kind.SLUG,
        "Publication slug (``pinterest-engineering``).",
        one_of="id",
        identity=1,
    )
    name: str | None = spec(Kind.TEXT, "Display name.")
    url: str | None = spec(
        Kind.URL,
        "Canonical home URL (custom domain or ``https://medium.com/<slug>``).",
        required=True,
    )
    domain: str | None = spec(
        Kind.DOMAIN,
        "Custom domain (``humanparts.medium.com``, ``wtfeconomy.com``) or None.",
        identity=2,
    )
    description: str | None = spec(Kind.BODY, "Short description (tagline), trimmed.")
    followers: int | None = spec(
        Kind.COUNT,
        "Follower (subscriber) count, Count.",
        raw="followers_raw",
    )
    followers_raw: str | None = spec(
        Kind.RAW,
        "Source text of ``followers`` when it was abbreviated.",
    )
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class TagPage:
    """One Medium tag (topic) page: ``https://medium.com/tag/<slug>``."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"tag_page"``.',
        default="tag_page",
        init=False,
    )
    tag: str | None = spec(
        Kind.TAG,
        "Tag slug (``distributed-training``).",
        required=True,
        identity=0,
    )
    name: str | None = spec(Kind.TEXT, "Display name (``Distributed Training``).")
    url: str | None = spec(
        Kind.URL,
        "Canonical tag page URL (``https://medium.com/tag/<slug>``; a 2019 topic's is"
        " ``https://medium.com/topic/<slug>``).",
        required=True,
    )
    description: str | None = spec(
        Kind.BODY,
        "Tag description, trimmed; None when the page has none.",
    )
    parent_topics: list[str] = spec(
        Kind.TEXT_LIST,
        "Breadcrumb of parent topics, broadest first, display names.",
        factory=list,
    )
    subtopics: list[dict[str, str | None]] = spec(
        Kind.RECORD_LIST,
        'Sub-topic clusters ("Explore recommended reads") in page order: ``{"name": ...,'
        ' "description": ..., "section": ...}``; ``section`` is the key of the cluster\'s'
        " stories in ``sections`` (None when the cluster lists none).",
        members=("name", "description", "section"),
        factory=list,
    )
    related_tags: list[str] = spec(
        Kind.TAG_LIST,
        "Slugs of related tags, page order, without duplicates.",
        factory=list,
    )
    followers: int | None = spec(
        Kind.COUNT,
        "Follower count of the tag, Count.",
        raw="followers_raw",
    )
    followers_raw: str | None = spec(
        Kind.RAW,
        "Source text of ``followers`` when it was abbreviated.",
    )
    story_count: int | None = spec(
        Kind.COUNT,
        "Number of stories with this tag, Count.",
        raw="story_count_raw",
    )
    story_count_raw: str | None = spec(
        Kind.RAW,
        "Source text of ``story_count`` when it was abbreviated.",
    )
    writer_count: int | None = spec(
        Kind.COUNT,
        "Number of writers of the tag (2022 state ``TagFeature.writerCount``), Count.",
    )
    latest_story_count: int | None = spec(
        Kind.COUNT,
        "Medium's ``TagFeature.postCountLatest``: stories of the recent period (the page"
        " does not state the period), Count.",
    )
    latest_writer_count: int | None = spec(
        Kind.COUNT,
        "Medium's ``TagFeature.writerCountLatest``: writers of the same recent period, Count.",
    )
    top_writers: list[dict[str, str | None]] = spec(
        Kind.RECORD_LIST,
        "The tag's top writers as the state lists them (2022 ``tagTopWriters``, 2019"
        " ``featuredTopicWriters``), from a page's state or a GraphQL body alike, state"
        ' order, one per writer: ``{"kind": "author", "id", "username", "name"}``.',
        members=("kind", "id", "username", "name"),
        factory=list,
    )
    sections: dict[str, list[str]] = spec(
        Kind.SECTIONS,
        "Ordered mapping section key → story ids in card order. A section is keyed by what"
        " the page calls it (its heading lowercased, non-alphanumerics → ``_``):"
        " ``popular_this_week``, ``selected_by_medium``, ``latest_stories``, ``recommended``"
        ' ("Recommended stories"), one key per sub-topic cluster (its name, see ``subtopics``);'
        " by the state listing where the page has no heading for it: ``featured`` / ``latest``"
        " / ``popular`` (2019 ``Topic``), ``tag_feed_<mode>`` (2022 ``tagFeed`` by its"
        " ``mode``: ``tag_feed_hot``…). A section absent from the page is absent from the"
        " mapping.",
        factory=dict,
    )
    who_to_follow: list[dict[str, str | None]] = spec(
        Kind.RECORD_LIST,
        "The accounts of the page's \"Who to follow\" box (today's pages, from the DOM), page"
        ' order: ``{"kind": "author"|"publication", "id": ..., "username"|"slug": ...,'
        ' "name": ...}``; the writers the state lists for the tag are ``top_writers``.',
        members=("kind", "id", "username", "slug", "name"),
        factory=list,
    )
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class StoryResponse:
    """One response (comment) to a story, a row of the ``responses`` table. On Medium a
    response is itself a post that answers another post; threads are responses to
    responses. Fetched over GraphQL with ``-a responses=N`` (see docs/responses.md)."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"response"``.',
        default="response",
        init=False,
    )
    response_id: str | None = spec(
        Kind.POST_ID,
        "Medium post id of the response, lowercase hex.",
        required=True,
        identity=0,
    )
    story_id: str | None = spec(
        Kind.POST_ID,
        "Id of the story whose thread this is (the root, whatever the depth).",
        required=True,
    )
    parent_id: str | None = spec(
        Kind.POST_ID,
        "Id of the post this response answers: the story at depth 1, a response deeper.",
        required=True,
    )
    depth: int | None = spec(
        Kind.COUNT,
        "1 for a response to the story, 2 for a reply to a response, and so on.",
        required=True,
    )
    url: str | None = spec(
        Kind.URL, "Canonical URL of the response (responses have story URLs of their own)."
    )
    author_id: str | None = spec(Kind.HEX_ID, "Medium user id of the response's author.")
    author_username: str | None = spec(
        Kind.USERNAME, "Author's username without the leading ``@``."
    )
    author_name: str | None = spec(Kind.TEXT, "Author's display name.")
    text: str | None = spec(Kind.BODY, "Body as plain text, paragraphs separated by blank lines.")
    text_is_preview: bool | None = spec(
        Kind.BOOL,
        "True when ``text`` is only the preview a logged-out reader sees (member-only).",
    )
    is_member_only: bool | None = spec(Kind.BOOL, "True for a member-only (locked) response.")
    claps: int | None = spec(Kind.COUNT, "Clap count, Count.")
    published_at: str | None = spec(Kind.TIMESTAMP, "First publication time, Timestamp (UTC).")
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the response was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


Item = Story | Author | Publication | TagPage | StoryResponse | TagEdge | TagStory
ITEM_CLASSES: dict[str, type[Item]] = {
    "story": Story,
    "author": Author,
    "publication": Publication,
    "tag_page": TagPage,
    "response": StoryResponse,
    "tag_edge": TagEdge,
    "tag_story": TagStory,
}


ITEM_TYPES = tuple(ITEM_CLASSES.values())

#: Fields that identify an entity, most specific first (declared with ``identity=`` on
#: each class): two records are the same entity when any of these (non-empty) values match.
IDENTITY_FIELDS: dict[str, tuple[str, ...]] = {
    item_type: identity_fields(item_class) for item_type, item_class in ITEM_CLASSES.items()
}
_KEY_PREFIX = {"username": "@", "slug": "/"}


def entity_keys(item_type: str, record: Mapping[str, Any]) -> list[str]:
    """Keys under which the entity of ``record`` is known, most specific first
    (``author:a1b2…``, ``author:@ada``); values trimmed and lowercased; may be empty."""
    keys = []
    for name in IDENTITY_FIELDS.get(item_type, ()):
        value = record.get(name)
        if isinstance(value, str) and value.strip():
            keys.append(f"{item_type}:{_KEY_PREFIX.get(name, '')}{value.strip().lower()}")
    return keys


def item_to_dict(item: Item) -> dict[str, Any]:
    """Plain dict of an item, ``item_type`` first, fields in declaration order."""
    return {f.name: getattr(item, f.name) for f in fields(item)}


def record_of(item: Any) -> dict[str, Any] | None:
    """Plain dict of an item (our dataclasses fast, anything else through itemadapter);
    None when ``item`` is not an item at all."""
    if isinstance(item, ITEM_TYPES):
        return item_to_dict(item)
    if not ItemAdapter.is_item(item):
        return None
    return ItemAdapter(item).asdict()


def item_from_dict(data: dict[str, Any]) -> Item:
    """Build an item from :func:`item_to_dict` output; unknown keys raise ``ValueError``."""
    payload = dict(data)
    item_type = payload.pop("item_type", None)
    cls = ITEM_CLASSES.get(str(item_type))
    if cls is None:
        raise ValueError(f"unknown item_type {item_type!r}")
    known = {f.name for f in fields(cls) if f.init}
    unknown = sorted(set(payload) - known)
    if unknown:
        raise ValueError(f"{item_type}: unknown fields {', '.join(unknown)}")
    return cls(**payload)
