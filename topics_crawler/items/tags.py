"""The tag item: :class:`TagPage`, one Medium tag (topic) page; the rows linking tags to
tags and stories are :mod:`topics_crawler.items.relations`. Formats as in
:mod:`topics_crawler.items.classes`; each field declared once with
:func:`~topics_crawler.items.fields.spec`.
"""

from __future__ import annotations

from dataclasses import dataclass

from topics_crawler.items.fields import DATA_SOURCE_DOC, Kind, spec


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
