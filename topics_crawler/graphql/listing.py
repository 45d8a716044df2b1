"""A validated archive page turned into what a tag page's cards give: partial items and links.

Nodes are GraphQL ``Post`` objects with their creator and collection inlined,
read as :class:`~topics_crawler.pages.state.Node` objects by the same code as
every listed post (:func:`~topics_crawler.pages._posts.listing_story`,
:func:`~topics_crawler.pages._entities.author_from_user`,
:func:`~topics_crawler.pages._entities.publication_from_collection`).
"""

from __future__ import annotations

from dataclasses import replace

from topics_crawler.graphql.tag_archive import ArchivePage
from topics_crawler.items import Item
from topics_crawler.items.values import unique
from topics_crawler.pages._entities import author_from_user, publication_from_collection
from topics_crawler.pages._posts import listing_story
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import MediumLink, classify_url


def archive_result(page: ArchivePage, url: str, scraped_at: str) -> PageResult:
    """Stories of the page in listing order, then their authors and publications, with
    links to each (recognised by URL pattern, like every other link)."""
    state = State()  # the nodes are inline objects: nothing to index or resolve
    nodes = [Node(state, node, "") for node in page.nodes]
    domains = _custom_domains(nodes)
    result = PageResult(kind="json", url=url)
    stories = [listing_story(node, scraped_at) for node in nodes]
    people = [item for node in nodes for item in _node_entities(node, scraped_at)]
    listed = [*stories, *_unique_entities(people)]
    result.items = [replace(item, data_source="graphql") for item in listed]  # one payload
    links: list[MediumLink | None] = []
    for item in result.items:
        link = classify_url(item.url, custom_domains=domains) if item.url else None
        if link is None and item.item_type == "story":
            result.errors.append(f"story {getattr(item, 'story_id', None)}: no story URL")
        links.append(link)
    result.links = unique_links(links)
    return result


def _node_entities(node: Node, scraped_at: str) -> list[Item]:
    items: list[Item] = []
    creator = node.node("creator")
    if creator is not None and creator.str("username"):
        items.append(author_from_user(creator, scraped_at))
    collection = node.node("collection")
    if collection is not None and (collection.str("slug") or collection.str("domain")):
        items.append(publication_from_collection(collection, scraped_at))
    return items


def _unique_entities(items: list[Item]) -> list[Item]:
    seen: set[str] = set()
    out = []
    for item in items:
        if item.url and item.url not in seen:
            seen.add(item.url)
            out.append(item)
    return out


def _custom_domains(nodes: list[Node]) -> list[str]:
    """Publication custom domains of the page (their story links are recognised by them)."""
    domains = []
    for node in nodes:
        collection = node.node("collection")
        domain = collection.str("domain") if collection is not None else None
        if domain and domain.strip():
            domains.append(domain.strip().lower())
    return unique(domains)
