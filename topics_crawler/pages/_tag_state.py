"""What a tag (topic) page's state says, for every generation, read through
:mod:`topics_crawler.pages.state` (never by literal keys).

* 2019 topic pages (Apollo-2) and the 2019 ``TopicHandler`` GraphQL body: a ``Topic``
  (``name, slug, description``) with ``featuredPosts`` / ``latestPosts(…)`` /
  ``popularPosts(…)`` listings, ``relatedTopics`` (``[{topic}]``) and
  ``featuredTopicWriters(…)`` (``[{user}]``).
* 2022 tag pages (Apollo-3): ``ROOT_QUERY`` calls ``tagFromSlug`` → ``Tag``
  (``displayTitle, postCount``), ``tagFeaturesFromSlug`` → ``TagFeature``
  (``writerCount, postCountLatest, writerCountLatest``), ``relatedTags`` → ``Tag`` list,
  ``tagTopWriters`` → ``User`` list and ``tagFeed`` (any key form, any ``mode``) →
  ``TagFeedResult{items[{post}]}``.
* Today's pages: ``tagFromSlug`` → ``Tag`` with ``followerCount`` and ``relatedTags``;
  2026: ``relatedTags`` as ``Tag:<slug>`` references the state holds no entity for (the
  slug is in the reference), ``tagFeed:<alias>(…)`` keys, ``Tag.posts:{"sortOrder":…}``
  (→ section ``posts_<order>``), listings naming posts the state does not describe (their
  ids stay in the section: the page lists them).

A call counts for the page's tag when its ``tagSlug``/``slug`` argument names it (in any
case) or names nothing. Sections from the state are keyed ``featured``/``latest``/
``popular`` (2019) and ``tag_feed_<mode>`` (2022, ``tag_feed`` without a mode).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from topics_crawler.items.values import clean_text, parse_count, tag_slug, unique
from topics_crawler.pages._entities import lower_id
from topics_crawler.pages._posts import listed_entries, ref_tag_slug
from topics_crawler.pages.state import Call, Node, State, kind_of
from topics_crawler.urls import POST_ID_RE

#: 2019 ``Topic`` listings → section keys, in page order.
TOPIC_LISTINGS = (
    ("featured", "featuredPosts"),
    ("latest", "latestPosts"),
    ("popular", "popularPosts"),
)
#: Members through which a list entry wraps the entity it lists (``[{topic}]``, ``[{user}]``).
ENTRY_MEMBERS = ("tag", "topic", "user", "node")
_SLUG_ARGUMENTS = ("tagSlug", "slug", "topicSlug")


@dataclass
class TagState:
    """The tag as the state describes it: item fields, sections and the posts listed."""

    slug: str | None
    is_topic: bool = False
    """The state describes a 2019 ``Topic`` (its page is ``/topic/<slug>``)."""
    fields: dict[str, Any] = field(default_factory=dict)
    sections: dict[str, list[str]] = field(default_factory=dict)
    posts: dict[str, Node] = field(default_factory=dict)
    writers: list[Node] = field(default_factory=list)
    json_ld: str | None = None
    """``Tag.seoMetaTags.jsonLd`` (2026): a JSON string whose ``CollectionPage`` lists
    stories (read by :mod:`._postings`)."""


def read_tag_state(state: State | None, slug: str | None) -> TagState | None:
    """The page's tag from its state, or None when the state holds no tag or topic."""
    if state is None:
        return None
    root = state.root
    entity = _tag_entity(state, root, slug)
    slug = slug or (entity_slug(entity) if entity is not None else None)
    found = TagState(slug, is_topic=entity is not None and entity.typename == "Topic")
    if entity is not None:
        read_tag_entity(entity, found)
    _read_root_calls(root, found)
    if entity is None and not found.sections and not found.fields:
        return None
    return found


def read_tag_entity(entity: Node, found: TagState) -> None:
    """Fields, sections and writers of a ``Tag`` or ``Topic`` node into ``found``
    (also used for GraphQL bodies, whose topic is inline)."""
    followers, followers_raw = parse_count(entity.scalar("followerCount"))
    story_count, story_count_raw = parse_count(entity.scalar("postCount"))
    related = [*entity.listed("relatedTags"), *entity.listed("relatedTopics")]
    _fill(
        found.fields,
        {
            "name": clean_text(entity.str("displayTitle") or entity.str("name")),
            "description": clean_text(entity.str("description")),
            "related_tags": _slugs(related),
            "followers": followers,
            "followers_raw": followers_raw,
            "story_count": story_count,
            "story_count_raw": story_count_raw,
        },
    )
    seo = entity.node("seoMetaTags")
    found.json_ld = found.json_ld or (seo.str("jsonLd") if seo is not None else None)
    for key, listing in TOPIC_LISTINGS:
        for call in entity.calls(listing):
            _add_section(found, key, listed_entries(call.node))
    for call in entity.calls("posts"):  # 2026: ``posts:{"sortOrder":"NEWEST",…}``
        order = call.args.get("sortOrder")
        key = f"posts_{order.lower()}" if isinstance(order, str) and order else "posts"
        _add_section(found, key, listed_entries(call.node))
    found.writers += [_unwrap(n) for c in entity.calls("featuredTopicWriters") for n in c.nodes]


def entity_slug(entity: Node) -> str | None:
    """Slug of a ``Tag`` / ``Topic`` node (``normalizedTagSlug``, ``slug`` or the tag id)."""
    slug = entity.str("normalizedTagSlug") or entity.str("slug")
    if slug is None and entity.typename == "Tag":
        slug = entity.id
    return tag_slug(slug)


def top_writer_records(writers: list[Node]) -> list[dict[str, str | None]]:
    """``TagPage.top_writers`` from the writers the state lists for a tag (2019
    ``featuredTopicWriters``, 2022 ``tagTopWriters``), whichever page or GraphQL body they
    come from: state order, one record per writer (by id, else username), none without
    either. What a page's "Who to follow" box shows is ``who_to_follow``, read from the DOM
    (today's pages: suggested accounts, publications included — not the tag's writers)."""
    seen: set[str] = set()
    out = []
    for record in map(writer_record, writers):
        key = record.get("id") or record.get("username") or ""
        if key and key not in seen:
            seen.add(key)
            out.append(record)
    return out


def writer_record(user: Node) -> dict[str, str | None]:
    """One top writer: ``{kind, id, username, name}``."""
    username = clean_text(user.str("username"))
    return {
        "kind": "author",
        "id": lower_id(user.str("id")),
        "username": username.lstrip("@") if username else None,
        "name": clean_text(user.str("name")),
    }


def _tag_entity(state: State, root: Node, slug: str | None) -> Node | None:
    """``tagFromSlug(…)`` → ``Tag`` (2020+), ``topic(…)`` → ``Topic`` (2019), else the
    ``Tag`` / ``Topic`` entity whose slug is the page's."""
    for name in ("tagFromSlug", "topic"):
        for call in root.calls(name):
            if call.node is not None and _names_tag(call, slug):
                return call.node
    if slug is None:
        return None
    for entity in state.entities("Tag", "Topic"):
        if entity_slug(entity) == slug:
            return entity
    return None


def _read_root_calls(root: Node, found: TagState) -> None:
    """The 2022 ``ROOT_QUERY`` calls that describe the tag beside the ``Tag`` itself."""
    for call in root.calls("tagFeaturesFromSlug"):
        if call.node is not None and _names_tag(call, found.slug):
            writers, _ = parse_count(call.node.scalar("writerCount"))
            latest_stories, _ = parse_count(call.node.scalar("postCountLatest"))
            latest_writers, _ = parse_count(call.node.scalar("writerCountLatest"))
            _fill(
                found.fields,
                {
                    "writer_count": writers,
                    "latest_story_count": latest_stories,
                    "latest_writer_count": latest_writers,
                },
            )
    for call in root.calls("relatedTags"):
        if _names_tag(call, found.slug) and _is_list(root, call):
            _fill(found.fields, {"related_tags": _slugs(root.state.listed(call.raw))})
    for call in root.calls("tagTopWriters"):
        if _names_tag(call, found.slug) and _is_list(root, call):
            found.writers += [_unwrap(node) for node in call.nodes]
    for call in root.calls("tagFeed"):
        if _names_tag(call, found.slug):
            mode = call.args.get("mode")
            key = f"tag_feed_{mode.lower()}" if isinstance(mode, str) and mode else "tag_feed"
            _add_section(found, key, listed_entries(call.node))


def _is_list(root: Node, call: Call) -> bool:
    """True when the call's value is a list; anything else but null is noted."""
    if isinstance(call.raw, list) or call.raw is None:
        return isinstance(call.raw, list)
    root.state.note(f"{root.key or 'ROOT_QUERY'}.{call.key} is {kind_of(call.raw)}, not a list")
    return False


def _names_tag(call: Call, slug: str | None) -> bool:
    """True when the call is about the page's tag (or names no tag at all)."""
    named = [call.args.get(name) for name in _SLUG_ARGUMENTS if name in call.args]
    if slug is None or not named:
        return True
    return any(isinstance(value, str) and tag_slug(value) == slug for value in named)


def _unwrap(node: Node) -> Node:
    """The entity a list entry wraps (``{"topic": …}``, ``{"user": …}``), else the node."""
    for member in ENTRY_MEMBERS:
        inner = node.node(member) if node.has(member) else None
        if inner is not None:
            return inner
    return node


def _slugs(listed: list[tuple[str | None, Node | None]]) -> list[str]:
    """Slugs of listed tags: each entity's, else the slug a ``Tag:<slug>`` reference names
    (2026 pages list related tags whose entities the state does not hold)."""
    slugs = [
        entity_slug(_unwrap(node)) if node is not None else ref_tag_slug(key)
        for key, node in listed
    ]
    return unique([slug for slug in slugs if slug])


def _add_section(found: TagState, key: str, entries: list[tuple[str, Node | None]]) -> None:
    """A listing's post ids under ``key``; the posts the state describes into ``posts``
    (an id the state only names stays in the section: the page lists that story)."""
    ids = found.sections.setdefault(key, [])
    for listed_id, post in entries:
        post_id = lower_id(listed_id)
        if post_id is None or not POST_ID_RE.match(post_id):
            continue
        if post is not None:
            found.posts.setdefault(post_id, post)
        if post_id not in ids:
            ids.append(post_id)
    if not ids:
        del found.sections[key]


def _fill(fields: dict[str, Any], values: dict[str, Any]) -> None:
    """Set the values that are not empty and not already set."""
    for name, value in values.items():
        if value not in (None, "", []) and fields.get(name) in (None, "", []):
            fields[name] = value
