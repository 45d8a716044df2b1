"""The rows that link entities: an edge of the topic map (:class:`TagEdge`, ``tag_edges``)
and a story listed under a tag (:class:`TagStory`, ``tag_stories``). Declared like every
item (:mod:`topics_crawler.items.classes`), each field once with
:func:`~topics_crawler.items.fields.spec`.
"""

from __future__ import annotations

from dataclasses import dataclass

from topics_crawler.items.fields import DATA_SOURCE_DOC, Kind, spec


@dataclass(kw_only=True)
class TagEdge:
    """One edge of Medium's topic map as a tag page shows it, a row of ``tag_edges``: the
    tag's related tags, its parent topics (breadcrumb), its sub-topic clusters, its top
    writers."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"tag_edge"``.',
        default="tag_edge",
        init=False,
    )
    edge_id: str | None = spec(
        Kind.TEXT,
        "``<from>><kind>><to>`` (``llm>related>ai``): one row per edge.",
        required=True,
        identity=0,
    )
    from_tag: str | None = spec(
        Kind.TAG, "Slug of the tag whose page shows the edge.", required=True
    )
    to: str | None = spec(
        Kind.TEXT,
        "The other end: a tag slug (``related``; ``parent`` and ``subtopic`` as the slug of the"
        " name the page shows), or ``@username`` (``writer``).",
        required=True,
    )
    to_name: str | None = spec(Kind.TEXT, "The other end's display name, when the page shows one.")
    kind: str | None = spec(
        Kind.TEXT, "``related`` | ``parent`` | ``subtopic`` | ``writer``.", required=True
    )
    rank: int | None = spec(
        Kind.COUNT,
        "Position on the page, 1 first (a parent topic's: 1 is the broadest).",
        required=True,
    )
    url: str | None = spec(Kind.URL, "The tag page the edge was read from.")
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the tag page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class TagStory:
    """One story a listing of a tag showed the crawl, a row of ``tag_stories``: which tag a
    story came from, how it was listed (a section of the tag's page, the tag's history, its
    day archive, its feed, the page of a related tag) and where, when first and last seen.
    One row per tag, story and listing source (:mod:`topics_crawler.items.listing`); a
    later sighting keeps the earliest ``first_seen`` and the latest ``last_seen``, its own
    ``section`` and ``rank``."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"tag_story"``.',
        default="tag_story",
        init=False,
    )
    membership_id: str | None = spec(
        Kind.TEXT,
        "``<tag>><source>><story_id>`` (``llm>history>c9700a7cf36d``): one row per tag, story"
        " and listing source.",
        required=True,
        identity=0,
    )
    tag: str | None = spec(
        Kind.TAG, "Slug of the tag whose listing showed the story.", required=True
    )
    story_id: str | None = spec(
        Kind.POST_ID,
        "Medium post id of the story listed (its row in ``stories`` when the crawl took it:"
        " ``-a max_stories`` and ``-a access`` may leave it out).",
        required=True,
    )
    source: str | None = spec(
        Kind.LISTING,
        "How the story was listed: ``section`` (a section of the tag's page), ``related`` (a"
        " section of the page of a tag the topic-graph walk reached from another tag),"
        " ``history`` (the tag's history over GraphQL), ``archive`` (the tag's day archive),"
        " ``feed`` (the tag's RSS feed).",
        required=True,
    )
    section: str | None = spec(
        Kind.TEXT,
        "The page section that listed it (a key of ``tag_pages.sections``:"
        " ``popular_this_week``, ``latest_stories``, a sub-topic cluster…) for ``section``"
        " and ``related``, the first section listing the story on the page; None for the"
        " other sources. As last seen.",
    )
    rank: int | None = spec(
        Kind.COUNT,
        "Position in the listing, 1 first, as last seen: in its section; in the whole"
        " history or day-archive walk of the tag (newest first unless ``-a history=most_read``);"
        " in the feed.",
        required=True,
    )
    url: str | None = spec(
        Kind.LINK,
        "The listing page it was last seen on: the tag page, the GraphQL endpoint, the day"
        " archive page, the feed.",
    )
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    first_seen: str | None = spec(
        Kind.TIMESTAMP,
        "The day a listing first showed the story under the tag (the earliest crawl that saw"
        " it), Timestamp (UTC) at 00:00: kept to the day, so same-day re-crawls change nothing.",
        required=True,
        keep="earliest",
    )
    last_seen: str | None = spec(
        Kind.TIMESTAMP,
        "The day a listing last showed it (the latest crawl that saw it), Timestamp (UTC) at"
        " 00:00.",
        required=True,
        keep="latest",
    )
