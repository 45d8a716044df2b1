"""The accounts a tag page names: its "Who to follow" entries, and the authors and
publications (of its stories, of "Who to follow", of the top writers) as items read from
the state. :mod:`topics_crawler.pages.tag` adds them to the page's result.
"""

from __future__ import annotations

from topics_crawler.items import Item, Story
from topics_crawler.pages._entities import (
    author_from_user,
    lower_id,
    publication_from_collection,
)
from topics_crawler.pages._tag_dom import WHO_TO_FOLLOW, TagOutline
from topics_crawler.pages.state import Node, State
from topics_crawler.urls import MediumLink

_COLLECTIONS = ("Collection", "Publication")


def who_to_follow(outline: TagOutline, state: State | None) -> list[dict[str, str | None]]:
    """Accounts of the "Who to follow" section: ``{kind, id, username|slug, name}``."""
    block = outline.block(WHO_TO_FOLLOW)
    if block is None:
        return []
    accounts = _Accounts(state)
    entries: dict[tuple[str, str], dict[str, str | None]] = {}
    for name, link in block.all_links("author", "publication"):
        if name:
            entries.setdefault((link.kind, link.key), accounts.entry(link, name))
    return list(entries.values())


class _Accounts:
    """Users and collections of the state by username / slug / domain (built once)."""

    def __init__(self, state: State | None) -> None:
        self.users: dict[str, Node] = {}
        self.collections: dict[str, Node] = {}
        if state is None:
            return
        for user in state.entities("User"):
            username = user.str("username")
            if username:
                self.users.setdefault(username.lower().lstrip("@"), user)
        for collection in state.entities(*_COLLECTIONS):
            for key in (collection.str("slug"), collection.str("domain")):
                if key:
                    self.collections.setdefault(key.lower(), collection)

    def entry(self, link: MediumLink, name: str) -> dict[str, str | None]:
        if link.kind == "author":
            username = link.url.rsplit("/@", 1)[-1]
            user = self.users.get(username.lower())
            return {
                "kind": "author",
                "id": lower_id(user.id) if user is not None else None,
                "username": username,
                "name": name,
            }
        # A publication on its own domain is linked (and keyed) by that domain.
        collection = self.collections.get(link.key)
        slug = collection.str("slug") if collection is not None else None
        return {
            "kind": "publication",
            "id": lower_id(collection.id) if collection is not None else None,
            "slug": slug or (None if "." in link.key else link.key),
            "name": name,
        }


def state_entities(
    state: State | None,
    stories: list[Story],
    who: list[dict[str, str | None]],
    writers: list[Node],
    scraped_at: str,
) -> list[Item]:
    """Authors and publications of the stories, of "Who to follow" and the top writers."""
    if state is None:
        return []
    wanted: dict[tuple[str, str], None] = {}  # (typename, id) in first-seen order
    pairs = [(t, i) for story in stories for t, i in _story_entities(story)]
    pairs += [("User" if e["kind"] == "author" else "Collection", e["id"]) for e in who]
    pairs += [("User", lower_id(user.id)) for user in writers]
    for typename, found_id in pairs:
        if found_id:
            wanted.setdefault((typename, found_id))
    items: list[Item] = []
    for typename, entity_id in wanted:
        if typename == "User":
            user = state.entity("User", entity_id)
            if user is not None:
                items.append(author_from_user(user, scraped_at))
            continue
        collection = state.entity("Collection", entity_id) or state.entity("Publication", entity_id)
        if collection is not None:
            items.append(publication_from_collection(collection, scraped_at))
    return items


def _story_entities(story: Story) -> list[tuple[str, str | None]]:
    return [("User", story.author_id), ("Collection", story.publication_id)]
