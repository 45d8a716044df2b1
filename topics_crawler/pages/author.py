"""Author profile pages (``/@username``) and legacy profile payloads.

Two generations:

* 2016–2018 profile pages embed ``window["obvInit"]({user, userMeta, streamItems,
  references, paging})``; ``/@user/latest?format=json`` returns the same payload.
  :func:`parse_legacy_profile` reads it for both (the JSON parser delegates here).
* 2020+ profile pages carry an Apollo ``User`` found through the ``userResult`` /
  ``user`` root calls (any arguments), plus the name, bio and "12K followers" /
  "5 following" texts in the HTML and listing cards.

The stories a profile lists come from the state — the stream items (2016–2019)
or the user's ``homepagePostsConnection`` call with the most posts, whatever its
arguments (2020+) — and from the listing cards; the paging cursor the page gives
for the next stories is kept in :attr:`PageResult.cursors`
(:class:`~topics_crawler.pages.ListingCursor`). Everything in the state is read
through :mod:`topics_crawler.pages.state`.

Layers, best first: embedded state, then meta tags, then DOM hooks.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from topics_crawler.items import Author, Item, Publication, Story, fill_missing, item_to_dict
from topics_crawler.items.layers import pick_named
from topics_crawler.items.values import clean_text
from topics_crawler.pages._cards import parse_cards
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import (
    author_from_legacy_user,
    author_from_user,
    publication_from_collection,
    publication_from_legacy_collection,
)
from topics_crawler.pages._follow import (
    FOLLOW_XPATH,
    follow_counts,
    strip_site_suffix,
)
from topics_crawler.pages._posts import listed_posts, listing_story
from topics_crawler.pages._result import ListingCursor, PageKind, PageResult, unique_links
from topics_crawler.pages._story_state import legacy_post_story
from topics_crawler.pages.state import Call, Node, State
from topics_crawler.urls import (
    MEDIUM_ROOT,
    MediumLink,
    author_url,
    canonical_url,
    classify_url,
    publication_url,
)

#: Fields every profile should give; absent ones are listed in ``PageResult.missing``.
EXPECTED_FIELDS = ("author_id", "username", "name")
_APP_LINK_KEYS = ("al:ios:url", "al:android:url", "twitter:app:url:iphone")
_USER_QUERIES = ("userResult", "user")
#: :attr:`ListingCursor.listing` of a profile's stories.
AUTHOR_STORIES = "author_stories"
_NAME_XPATH = "(//h1[not(ancestor::article)] | //h2[not(ancestor::article)])[1]"


def parse_author(doc: Document) -> PageResult:
    """Author (first), then the profile's stories and their publications."""
    legacy = doc.legacy_state
    if legacy is not None and legacy.root.node("user") is not None:
        result = parse_legacy_profile(doc, legacy, kind="author")
        _fill_author_from_page(result, doc)
        return result
    return _parse_profile_page(doc)


# --- legacy payload (2016–2019) ----------------------------------------------------------


def parse_legacy_profile(doc: Document, state: State, *, kind: PageKind = "json") -> PageResult:
    """Author, streamed Stories and referenced Publications of a legacy profile payload
    (``{user, userMeta, streamItems, references, paging}``); ``paging`` becomes the
    result's cursor (not followed).

    ``kind`` is the result kind: ``json`` for ``/@user/latest?format=json`` (the usual
    caller, :mod:`~topics_crawler.pages.json_payload`), ``author`` for a profile page.
    """
    result = PageResult(kind=kind, url=doc.url)
    user = state.root.node("user")
    if user is None:
        doc.error("legacy profile without a user")
        return result
    author = author_from_legacy_user(user, state, doc.scraped_at)
    stories = _legacy_stream_stories(state, doc.scraped_at)
    publications = [
        publication_from_legacy_collection(collection, doc.scraped_at)
        for collection in state.entities("Collection")
    ]
    result.items = [author, *stories, *publications]
    result.links = unique_links(_story_link(story) for story in stories)
    result.missing = _missing(author)
    result.cursors = _legacy_cursor(state.root.node("paging"), author.author_id)
    return result


def stream_post_ids(payload: Node) -> list[str]:
    """Post ids of the ``postPreview`` stream items (also inside ``section`` items), in
    stream order."""
    ids: list[str] = []
    entries = payload.nodes("streamItems")
    for entry in entries:
        section = entry.node("section")
        inner = section.nodes("items") if section is not None else []
        for item in [entry, *inner]:
            preview = item.node("postPreview")
            post_id = preview.str("postId") if preview is not None else None
            if post_id and post_id not in ids:
                ids.append(post_id)
    return ids


def _legacy_stream_stories(state: State, scraped_at: str) -> list[Story]:
    stories = []
    for post_id in stream_post_ids(state.root):
        post = state.entity("Post", post_id)
        story = _legacy_post_story(post, state, scraped_at) if post is not None else None
        if story is not None:
            stories.append(story)
    return stories


def _legacy_post_story(post: Node, state: State, scraped_at: str) -> Story | None:
    """A partial Story from one ``references.Post`` entry (the story engineer's legacy layer)."""
    found = legacy_post_story(post, state, scraped_at)
    if found is None:
        return None
    fields = dict(found.fields)
    state_url = fields.pop("state_url", None)
    url = canonical_url(str(state_url)) if state_url else None
    fields["url"] = url or legacy_post_url(post, found.author, found.publication)
    return Story(**fields, data_source="state", scraped_at=scraped_at)


def _legacy_cursor(paging: Node | None, owner: str | None) -> list[ListingCursor]:
    """``paging{path, next{limit, to, source, page…}}`` as the profile's story cursor."""
    following = paging.node("next") if paging is not None else None
    if following is None or not following.scalars():
        return []
    cursor = following.scalars()
    url = paging.str("path") if paging is not None else None
    return [ListingCursor(AUTHOR_STORIES, owner, cursor, url)]


def legacy_post_url(
    post: Node, author: Author | None, publication: Publication | None
) -> str | None:
    """Canonical URL of a legacy post that carries no URL: its publication's home
    (custom domain or ``medium.com/<slug>``), else the author's profile, plus ``uniqueSlug``."""
    unique_slug = clean_text(post.str("uniqueSlug"))
    if not unique_slug:
        return None
    if publication is not None and (publication.slug or publication.domain):
        home = publication_url(publication.slug or "", publication.domain)
    elif author is not None and author.username:
        home = author_url(author.username)
    else:
        return f"{MEDIUM_ROOT}/p/{post.id}" if post.id else None
    return canonical_url(f"{home}/{unique_slug}")


def _story_link(story: Story) -> MediumLink | None:
    """Link to a story of the profile; a custom domain counts as Medium here because
    the URL was built from Medium's own data."""
    if not story.url:
        return None
    return classify_url(story.url, custom_domains=[urlsplit(story.url).netloc])


def _fill_author_from_page(result: PageResult, doc: Document) -> None:
    """Fill what the legacy user object lacks from the page's meta tags and DOM."""
    page_author = Author(**pick_named(*_page_layers(doc)), scraped_at=doc.scraped_at)
    for index, item in enumerate(result.items):
        if isinstance(item, Author):
            merged = fill_missing(item, page_author)
            result.items[index] = merged
            if isinstance(merged, Author):
                result.missing = _missing(merged)
            return


# --- 2020+ profile pages -----------------------------------------------------------------


def _parse_profile_page(doc: Document) -> PageResult:
    result = PageResult(kind="author", url=doc.url)
    state = doc.apollo_state
    username = page_username(doc)
    user = find_user(state, username) if state is not None else None
    state_layer = _state_layer(user, doc.scraped_at) if user is not None else {}
    fields = pick_named(("state", state_layer), *_page_layers(doc))
    if not fields.get("name") and not fields.get("author_id"):
        doc.error("no profile data found")
        return result
    author = Author(**fields, scraped_at=doc.scraped_at)
    cards = parse_cards(doc)
    connection = homepage_posts(user) if user is not None else None
    listed = [listing_story(post, doc.scraped_at) for post in listed_posts(connection)]
    stories = _merge_listed([card.story for card in cards], listed)
    items: list[Item] = [author, *stories]
    items.extend(_state_publications(state, doc.scraped_at))
    result.items = items
    result.links = unique_links(
        [
            *(link for card in cards for link in card.links if link.kind == "story"),
            *(_story_link(story) for story in listed),
        ]
    )
    result.missing = _missing(author)
    result.cursors = _connection_cursor(connection, author.author_id)
    return result


def homepage_posts(user: Node) -> Node | None:
    """The user's ``homepagePostsConnection`` call listing the most posts, any arguments."""
    call = user.call("homepagePostsConnection", best=_post_count)
    return call.node if call is not None else None


def _post_count(call: Call) -> int:
    return len(call.node.nodes("posts")) if call.node is not None else -1


def _merge_listed(card_stories: list[Story], listed: list[Story]) -> list[Story]:
    """Card stories (what the reader sees) completed from the state's listing, then the
    listed stories without a card, in listing order."""
    by_id = {story.story_id: story for story in listed if story.story_id}
    merged: list[Story] = []
    for story in card_stories:
        known = by_id.pop(story.story_id, None) if story.story_id else None
        filled = fill_missing(story, known) if known is not None else story
        merged.append(filled if isinstance(filled, Story) else story)
    merged.extend(story for story in listed if story.story_id in by_id)
    return merged


def _connection_cursor(connection: Node | None, owner: str | None) -> list[ListingCursor]:
    """``pagingInfo.next{from, limit}`` of the listing as the profile's story cursor."""
    following = connection.dig("pagingInfo", "next") if connection is not None else None
    if following is None:
        return []
    cursor = {key: value for key, value in following.scalars().items() if value is not None}
    return [ListingCursor(AUTHOR_STORIES, owner, cursor)] if cursor else []


def page_username(doc: Document) -> str | None:
    """Username from ``profile:username``, the ``medium://@user`` app link, or the URL."""
    meta = clean_text(doc.meta.get("profile:username"))
    if meta:
        return meta.lstrip("@")
    for key in _APP_LINK_KEYS:
        value = doc.meta.get(key, "")
        if value.startswith("medium://@"):
            return value[len("medium://@") :].strip() or None
    for candidate in (doc.canonical_link, doc.url):
        link = classify_url(candidate) if candidate else None
        if link is not None and link.kind == "author":
            return link.url.rsplit("/@", 1)[1]
    return None


def find_user(state: State, username: str | None) -> Node | None:
    """The profile's ``User``: the ``userResult``/``user`` root call for ``username``
    (or for the id of the user it returns), else the ``User`` entity with that username,
    else the first user a root call returns."""
    wanted = (username or "").lower()
    fallback = None
    for query in _USER_QUERIES:
        for call in state.root.calls(query):
            user = call.node
            if user is None or user.typename not in ("User", None):
                continue
            asked = call.args.get("username")
            if (isinstance(asked, str) and asked.lower() == wanted) or (
                call.args.get("id") is not None and call.args.get("id") == user.id
            ):
                return user
            fallback = fallback or user
    for entity in state.entities("User"):
        if wanted and (entity.str("username") or "").lower() == wanted:
            return entity
    return fallback


def _state_layer(user: Node, scraped_at: str) -> dict[str, Any]:
    data = item_to_dict(author_from_user(user, scraped_at))
    data.pop("item_type")
    data.pop("scraped_at")
    return data


def _page_layers(doc: Document) -> list[tuple[str, dict[str, Any]]]:
    """Meta tags, then DOM hooks, named (counts keep their own ``*_raw`` text)."""
    return [("meta", _meta_layer(doc)), ("dom", _dom_layer(doc))]


def _meta_layer(doc: Document) -> dict[str, Any]:
    username = page_username(doc)
    first_last = " ".join(
        part
        for part in (doc.meta.get("profile:first_name"), doc.meta.get("profile:last_name"))
        if part
    )
    return {
        "username": username,
        "url": author_url(username) if username else None,
        "name": strip_site_suffix(doc.meta.get("og:title")) or clean_text(first_last),
        "image_url": clean_text(doc.meta.get("og:image")),
    }


def _dom_layer(doc: Document) -> dict[str, Any]:
    headings = doc.xpath(_NAME_XPATH)
    heading = headings[0] if headings else None
    bio = heading.xpath("following-sibling::p[1]") if heading is not None else []
    return {
        "name": clean_text(heading.text_content()) if heading is not None else None,
        "bio": clean_text(bio[0].text_content()) if bio else None,
        **follow_counts(doc.xpath(FOLLOW_XPATH)),
    }


def _state_publications(state: State | None, scraped_at: str) -> list[Publication]:
    if state is None:
        return []
    return [
        publication_from_collection(entity, scraped_at)
        for entity in state.entities("Collection", "Publication")
    ]


def _missing(author: Author) -> list[str]:
    return [name for name in EXPECTED_FIELDS if getattr(author, name) is None]
