"""Author profile pages (``/@username``) and legacy profile payloads.

Two generations:

* 2016–2018 profile pages embed ``window["obvInit"]({user, userMeta, streamItems,
  references, paging})``; ``/@user/latest?format=json`` returns the same payload.
  :func:`parse_legacy_profile` reads it for both (the JSON parser delegates here).
* 2020+ profile pages carry an Apollo ``User:<id>`` found through
  ``ROOT_QUERY.userResult({"username": …})``, plus the name, bio and
  "12K followers" / "5 following" texts in the HTML and listing cards.

Layers, best first: embedded state, then meta tags, then DOM hooks.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from topics_crawler.items import Author, Item, Publication, Story, fill_missing, item_to_dict
from topics_crawler.layers import pick_paired
from topics_crawler.normalize import clean_text
from topics_crawler.pages._cards import parse_cards
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import (
    author_from_apollo,
    author_from_legacy,
    publication_from_apollo,
    publication_from_legacy,
)
from topics_crawler.pages._follow import (
    FOLLOW_XPATH,
    follow_counts,
    strip_site_suffix,
)
from topics_crawler.pages._result import PageKind, PageResult, unique_links
from topics_crawler.pages._state import ApolloState
from topics_crawler.pages._story_state import legacy_story
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
_NAME_XPATH = "(//h1[not(ancestor::article)] | //h2[not(ancestor::article)])[1]"


def parse_author(doc: Document) -> PageResult:
    """Author (first), then the profile's stories and their publications."""
    legacy = doc.legacy
    if legacy is not None and isinstance(legacy.get("user"), dict):
        result = parse_legacy_profile(doc, legacy, kind="author")
        _fill_author_from_page(result, doc)
        return result
    return _parse_profile_page(doc)


# --- legacy payload (2016–2019) ----------------------------------------------------------


def parse_legacy_profile(
    doc: Document, payload: dict[str, Any], *, kind: PageKind = "json"
) -> PageResult:
    """Author, streamed Stories and referenced Publications of a legacy profile payload
    (``{user, userMeta, streamItems, references, paging}``). ``paging.next`` is not followed.

    ``kind`` is the result kind: ``json`` for ``/@user/latest?format=json`` (the usual
    caller, :mod:`~topics_crawler.pages.json_payload`), ``author`` for a profile page.
    """
    result = PageResult(kind=kind, url=doc.url)
    user = payload.get("user")
    references = payload.get("references")
    references = references if isinstance(references, dict) else {}
    if not isinstance(user, dict):
        doc.error("legacy profile without a user")
        return result
    author = author_from_legacy(user, references, doc.scraped_at)
    stories = _legacy_stream_stories(payload, references, doc.scraped_at)
    publications = [
        publication_from_legacy(collection, doc.scraped_at)
        for collection in _table(references, "Collection").values()
        if isinstance(collection, dict)
    ]
    result.items = [author, *stories, *publications]
    result.links = unique_links(_story_link(story) for story in stories)
    result.missing = _missing(author)
    return result


def _table(references: dict[str, Any], name: str) -> dict[str, Any]:
    table = references.get(name)
    return table if isinstance(table, dict) else {}


def stream_post_ids(payload: dict[str, Any]) -> list[str]:
    """Post ids of the ``postPreview`` stream items, in stream order."""
    items = payload.get("streamItems")
    ids: list[str] = []
    for stream_item in items if isinstance(items, list) else []:
        preview = stream_item.get("postPreview") if isinstance(stream_item, dict) else None
        post_id = preview.get("postId") if isinstance(preview, dict) else None
        if isinstance(post_id, str) and post_id and post_id not in ids:
            ids.append(post_id)
    return ids


def _legacy_stream_stories(
    payload: dict[str, Any], references: dict[str, Any], scraped_at: str
) -> list[Story]:
    posts = _table(references, "Post")
    stories = []
    for post_id in stream_post_ids(payload):
        post = posts.get(post_id)
        if isinstance(post, dict):
            story = _legacy_post_story(post, references, scraped_at)
            if story is not None:
                stories.append(story)
    return stories


def _legacy_post_story(
    post: dict[str, Any], references: dict[str, Any], scraped_at: str
) -> Story | None:
    """A partial Story from one ``references.Post`` entry (the story engineer's legacy layer)."""
    state = legacy_story({"value": post, "references": references}, scraped_at)
    if state is None:
        return None
    fields = dict(state.fields)
    state_url = fields.pop("state_url", None)
    url = canonical_url(str(state_url)) if state_url else None
    fields["url"] = url or legacy_post_url(post, state.author, state.publication)
    return Story(**fields, scraped_at=scraped_at)


def legacy_post_url(
    post: dict[str, Any], author: Author | None, publication: Publication | None
) -> str | None:
    """Canonical URL of a legacy post that carries no URL: its publication's home
    (custom domain or ``medium.com/<slug>``), else the author's profile, plus ``uniqueSlug``."""
    unique_slug = clean_text(post.get("uniqueSlug"))
    if not unique_slug:
        return None
    if publication is not None and (publication.slug or publication.domain):
        home = publication_url(publication.slug or "", publication.domain)
    elif author is not None and author.username:
        home = author_url(author.username)
    else:
        return f"{MEDIUM_ROOT}/p/{post.get('id')}" if post.get("id") else None
    return canonical_url(f"{home}/{unique_slug}")


def _story_link(story: Story) -> MediumLink | None:
    """Link to a story of the profile; a custom domain counts as Medium here because
    the URL was built from Medium's own data."""
    if not story.url:
        return None
    return classify_url(story.url, custom_domains=[urlsplit(story.url).netloc])


def _fill_author_from_page(result: PageResult, doc: Document) -> None:
    """Fill what the legacy user object lacks from the page's meta tags and DOM."""
    page_author = Author(**_page_layers(doc), scraped_at=doc.scraped_at)
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
    state = doc.apollo
    username = page_username(doc)
    user = find_apollo_user(state, username) if state is not None else None
    state_layer = _state_layer(state, user, doc.scraped_at) if state and user else {}
    fields = pick_paired(state_layer, _page_layers(doc))
    if not fields.get("name") and not fields.get("author_id"):
        doc.error("no profile data found")
        return result
    author = Author(**fields, scraped_at=doc.scraped_at)
    cards = parse_cards(doc)
    items: list[Item] = [author, *(card.story for card in cards)]
    items.extend(_state_publications(state, doc.scraped_at))
    result.items = items
    result.links = unique_links(
        link for card in cards for link in card.links if link.kind == "story"
    )
    result.missing = _missing(author)
    return result


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


def find_apollo_user(state: ApolloState, username: str | None) -> dict[str, Any] | None:
    """The profile's ``User``: the ``userResult``/``user`` root call for ``username``,
    else the ``User`` entity with that username."""
    wanted = (username or "").lower()
    fallback = None
    for query in _USER_QUERIES:
        for args, value in state.root_calls(query):
            if not isinstance(value, dict) or value.get("__typename", "User") != "User":
                continue
            if str(args.get("username", "")).lower() == wanted or args.get("id") == value.get("id"):
                return value
            fallback = fallback or value
    for _key, entity in state.entities("User"):
        if wanted and str(entity.get("username", "")).lower() == wanted:
            return entity
    return fallback


def _state_layer(state: ApolloState, user: dict[str, Any], scraped_at: str) -> dict[str, Any]:
    data = item_to_dict(author_from_apollo(state, user, scraped_at))
    data.pop("item_type")
    data.pop("scraped_at")
    return data


def _page_layers(doc: Document) -> dict[str, Any]:
    """Meta tags, then DOM hooks, combined (counts keep their own ``*_raw`` text)."""
    return pick_paired(_meta_layer(doc), _dom_layer(doc))


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


def _state_publications(state: ApolloState | None, scraped_at: str) -> list[Publication]:
    if state is None:
        return []
    return [
        publication_from_apollo(state, entity, scraped_at)
        for typename in ("Collection", "Publication")
        for _key, entity in state.entities(typename)
    ]


def _missing(author: Author) -> list[str]:
    return [name for name in EXPECTED_FIELDS if getattr(author, name) is None]
