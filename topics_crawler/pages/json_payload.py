"""Old ``?format=json`` API payloads (2015–2019), XSSI guard stripped.

* A post payload (``payload.value`` is a Post) gives the Story, its Author and
  Publication through the same legacy code path as 2015–2018 story pages.
* A profile payload (``payload.user`` + ``streamItems``) is handed to the author
  parser (:func:`topics_crawler.pages.author.parse_legacy_profile`).
* Anything else is recorded as an error.
"""

from __future__ import annotations

from topics_crawler.items import Item
from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages._story_state import legacy_story
from topics_crawler.pages.author import parse_legacy_profile
from topics_crawler.pages.graphql_body import is_graphql_body, parse_graphql_body
from topics_crawler.pages.state import Node, State, StateError, parse_json_payload
from topics_crawler.pages.story import CORE_FIELDS, build_story, entity_links


def parse_json(doc: Document) -> PageResult:
    """Parse a ``?format=json`` body; never raises, problems go to ``errors``."""
    try:
        body = parse_json_payload(doc.text)
    except StateError as exc:
        return PageResult(kind="json", url=doc.url, errors=[f"broken JSON payload: {exc}"])
    if is_graphql_body(body):
        return parse_graphql_body(doc, body)
    envelope = State(roots=[body] if isinstance(body, dict) else [], references={})
    payload = envelope.root.node("payload")
    if payload is None:
        return PageResult(kind="json", url=doc.url, errors=["JSON payload has no 'payload' object"])
    state = State.from_payload(payload.raw, notes=doc.note)
    value = state.root.node("value")
    if value is not None and _is_post(value):
        return parse_post_payload(doc, state)
    if state.root.node("user") is not None and state.root.has("streamItems"):
        return parse_legacy_profile(doc, state)
    return PageResult(kind="json", url=doc.url, errors=["unrecognised JSON payload"])


def _is_post(value: Node) -> bool:
    return value.scalar("type") in (None, "Post") and value.has("title")


def parse_post_payload(doc: Document, state: State) -> PageResult:
    """Story + Author + Publication of a post payload (``payload.value`` is the Post)."""
    found = legacy_story(state, doc.scraped_at)
    if found is None:
        return PageResult(kind="json", url=doc.url, errors=["post payload without a post id"])
    story = build_story(doc, found.fields, [found.fields.get("state_url"), doc.url])
    items: list[Item] = [story]
    items += [entity for entity in (found.author, found.publication) if entity is not None]
    missing = [name for name in CORE_FIELDS if getattr(story, name) in (None, "")]
    return PageResult(
        kind="json",
        url=doc.url,
        items=items,
        links=unique_links(entity_links(items)),
        missing=missing,
    )
