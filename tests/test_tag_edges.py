"""Topic-map edges of a tag page: related tags, parents, sub-topic clusters, top writers."""

from __future__ import annotations

from topics_crawler.items import TagEdge, TagPage
from topics_crawler.pages import parse_page
from topics_crawler.pages.tag_edges import tag_edges
from topics_crawler.site.content import default_site
from topics_crawler.site.tag_page import tag_page

AT = "2026-11-30T12:00:00Z"


def test_every_kind_in_page_order_with_ranks() -> None:
    page = TagPage(
        tag="llm", url="https://medium.com/tag/llm", scraped_at=AT,
        related_tags=["ai", "nlp", "ai", "llm"],
        parent_topics=["Technology", "Artificial Intelligence"],
        subtopics=[{"name": "Prompt Engineering", "description": "…"}, {"name": None}],
        top_writers=[{"kind": "author", "username": "Ada_L", "name": "Ada"}, {"name": "x"}],
    )  # fmt: skip
    edges = tag_edges(page)
    assert [(e.kind, e.to, e.rank, e.to_name) for e in edges] == [
        ("related", "ai", 1, None),
        ("related", "nlp", 2, None),  # "ai" again and the tag itself are not edges
        ("parent", "technology", 1, "Technology"),
        ("parent", "artificial-intelligence", 2, "Artificial Intelligence"),
        ("subtopic", "prompt-engineering", 1, "Prompt Engineering"),
        ("writer", "@ada_l", 1, "Ada"),
    ]
    assert all(isinstance(e, TagEdge) and e.from_tag == "llm" for e in edges)
    assert edges[0].edge_id == "llm>related>ai"
    assert {e.url for e in edges} == {page.url}
    assert {e.scraped_at for e in edges} == {AT}


def test_no_tag_no_edges() -> None:
    assert tag_edges(TagPage(related_tags=["ai"])) == []


def test_the_local_tag_page_gives_its_related_tags_and_parents() -> None:
    content = default_site()
    tag = content.tags["distributed-training"]
    html = tag_page(content, tag)
    result = parse_page(html, tag.url, kind="tag")
    page = next(item for item in result.items if isinstance(item, TagPage))
    edges = tag_edges(page)
    related = [e.to for e in edges if e.kind == "related"]
    assert related == [t.slug for t in tag.related]
    assert [e.to_name for e in edges if e.kind == "parent"] == [t.name for t in tag.parents]
    assert [e.to_name for e in edges if e.kind == "subtopic"] == [c.name for c in tag.clusters]
