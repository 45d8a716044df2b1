"""A validated archive page turned into what a tag page's cards give: partial items and links.

Nodes are GraphQL ``Post`` objects with their creator and collection inlined,
the same shape as an Apollo-3 ``Post`` entity with nested objects, so the
card code reads them (:func:`~topics_crawler.pages._posts.listing_story`,
:func:`~topics_crawler.pages._entities.author_from_apollo`,
:func:`~topics_crawler.pages._entities.publication_from_apollo`) over an
empty :class:`~topics_crawler.pages._state.ApolloState`.
"""

from __future__ import annotations

from typing import Any

from topics_crawler.graphql.response import ArchivePage
from topics_crawler.items import Item
from topics_crawler.normalize import unique
from topics_crawler.pages._entities import author_from_apollo, publication_from_apollo
from topics_crawler.pages._posts import listing_story
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages._state import ApolloState
from topics_crawler.urls import MediumLink, classify_url

_INLINE = ApolloState({})


def archive_result(page: ArchivePage, url: str, scraped_at: str) -> PageResult:
    """Stories of the page in listing order, then their authors and publications, with
    links to each (recognised by URL pattern, like every other link)."""
    domains = _custom_domains(page.nodes)
    result = PageResult(kind="json", url=url)
    stories = [listing_story(_INLINE.node(node), scraped_at) for node in page.nodes]
    people = [item for node in page.nodes for item in _node_entities(node, scraped_at)]
    result.items = [*stories, *_unique_entities(people)]
    links: list[MediumLink | None] = []
    for item in result.items:
        link = classify_url(item.url, custom_domains=domains) if item.url else None
        if link is None and item.item_type == "story":
            result.errors.append(f"story {getattr(item, 'story_id', None)}: no story URL")
        links.append(link)
    result.links = unique_links(links)
    return result


def _node_entities(node: dict[str, Any], scraped_at: str) -> list[Item]:
    items: list[Item] = []
    creator = node.get("creator")
    if isinstance(creator, dict) and creator.get("username"):
        items.append(author_from_apollo(_INLINE, creator, scraped_at))
    collection = node.get("collection")
    if isinstance(collection, dict) and (collection.get("slug") or collection.get("domain")):
        items.append(publication_from_apollo(_INLINE, collection, scraped_at))
    return items


def _unique_entities(items: list[Item]) -> list[Item]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.url and item.url not in seen:
            seen.add(item.url)
            out.append(item)
    return out


def _custom_domains(nodes: list[dict[str, Any]]) -> list[str]:
    """Publication custom domains of the page (their story links are recognised by them)."""
    domains = []
    for node in nodes:
        collection = node.get("collection")
        domain = collection.get("domain") if isinstance(collection, dict) else None
        if isinstance(domain, str) and domain.strip():
            domains.append(domain.strip().lower())
    return unique(domains)
