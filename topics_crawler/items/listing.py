"""How a listing showed a story under a tag: the ``source`` of a
:class:`~topics_crawler.items.TagStory` row, and the row's identity.

* ``section`` — a section of the tag's page (``popular_this_week``, ``latest_stories``,
  a sub-topic cluster…) of a tag the crawl started from;
* ``related`` — a section of the page of a tag the topic-graph walk reached from another
  tag (``-a related_depth``);
* ``history`` — the tag's history over GraphQL (``-a history=newest|most_read``);
* ``archive`` — the tag's day archive (``-a history=archive``, or standing in for a
  GraphQL listing Medium refused);
* ``feed`` — the tag's RSS feed (``-a source=feed``).
"""

from __future__ import annotations

SECTION = "section"
RELATED = "related"
HISTORY = "history"
ARCHIVE = "archive"
FEED = "feed"
LISTING_SOURCES = (SECTION, RELATED, HISTORY, ARCHIVE, FEED)


def membership_id(tag: str, source: str, story_id: str) -> str:
    """``<tag>><source>><story_id>`` (``llm>history>c9700a7cf36d``): one row per tag, story
    and listing source."""
    return f"{tag}>{source}>{story_id}"
