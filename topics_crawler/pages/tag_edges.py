"""The topic map a tag page shows, as edges (:class:`~topics_crawler.items.TagEdge`).

From one parsed :class:`~topics_crawler.items.TagPage`: ``related`` edges to its related
tags, ``parent`` edges to the topics of its breadcrumb, ``subtopic`` edges to its
"Explore recommended reads" clusters and ``writer`` edges to its top writers, each with
its rank on the page. Parent topics and clusters are shown by name only; their ``to`` is
the slug of that name (:func:`~topics_crawler.items.values.tag_slug`), the name is kept in
``to_name``. Pure: a tag page in, edges out.
"""

from __future__ import annotations

from collections.abc import Iterator

from topics_crawler.items import TagEdge, TagPage
from topics_crawler.items.values import clean_text, tag_slug


def tag_edges(page: TagPage) -> list[TagEdge]:
    """Every edge of ``page`` in page order (related, parent, subtopic, writer); none
    without a tag slug. The same edge twice on a page counts once, at its first rank."""
    if not page.tag:
        return []
    seen: set[str] = set()
    edges = []
    for kind, rank, to, name in _ends(page):
        edge_id = f"{page.tag}>{kind}>{to}"
        if to and to != page.tag and edge_id not in seen:
            seen.add(edge_id)
            edges.append(
                TagEdge(
                    edge_id=edge_id,
                    from_tag=page.tag,
                    to=to,
                    to_name=name,
                    kind=kind,
                    rank=rank,
                    url=page.url,
                    data_source=page.data_source,
                    scraped_at=page.scraped_at,
                )
            )
    return edges


def _ends(page: TagPage) -> Iterator[tuple[str, int, str | None, str | None]]:
    for rank, slug in enumerate(page.related_tags, 1):
        yield "related", rank, tag_slug(slug), None
    for rank, name in enumerate(page.parent_topics, 1):
        yield "parent", rank, tag_slug(name), clean_text(name)
    for rank, cluster in enumerate(page.subtopics, 1):
        title = cluster.get("name") if isinstance(cluster, dict) else None
        yield "subtopic", rank, tag_slug(title), clean_text(title)
    for rank, writer in enumerate(page.top_writers, 1):
        username = clean_text(writer.get("username")) if isinstance(writer, dict) else None
        shown = writer.get("name") if isinstance(writer, dict) else None
        yield "writer", rank, f"@{username.lower()}" if username else None, clean_text(shown)
