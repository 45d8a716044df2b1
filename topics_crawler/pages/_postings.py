"""Stories a 2026 tag page lists in schema.org JSON-LD: ``CollectionPage.mainEntity`` postings.

Two places carry them: the page's own ``<script type="application/ld+json">`` and the
state's ``Tag.seoMetaTags.jsonLd`` (a JSON *string* holding another ``CollectionPage``,
with other stories than the cards: the tag's newest). Each posting
(``SocialMediaPosting``, ``BlogPosting``, ``Article``…) gives a partial story:

* ``identifier`` → ``story_id`` (else the id ending its Medium URL);
* ``url`` / ``@id`` / ``mainEntityOfPage`` → ``url`` when one is the story on Medium, else
  ``https://medium.com/p/<id>`` (Medium's own short address of any story); one that is off
  Medium (a cross-post: habr.com, dev.to, Substack) → ``canonical_url``;
* ``headline`` / ``name``, ``author`` (``identifier`` = username, ``name``),
  ``datePublished``, ``dateModified``, ``isAccessibleForFree`` (member-only when false),
  the first ``image``, and a ``publisher`` that is a Medium publication (not Medium itself).

``description`` is left alone: it is the start of the body, not the subtitle. Nothing here
raises; a posting without a post id is skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from topics_crawler.items import Story
from topics_crawler.items.values import clean_text, parse_timestamp
from topics_crawler.pages._document import Document
from topics_crawler.pages._entities import lower_id
from topics_crawler.pages._posts import one_line
from topics_crawler.pages.state import Node, State, StateError, load_json
from topics_crawler.urls import (
    POST_ID_RE,
    MediumLink,
    author_url,
    classify_url,
    cross_post_url,
    post_id_from_url,
    post_url,
    split_url,
)

#: ``@type`` of a collection page whose ``mainEntity`` lists stories.
COLLECTION_TYPES = ("CollectionPage", "ItemList")
#: Members of a collection page that hold its postings.
POSTING_MEMBERS = ("mainEntity", "itemListElement", "hasPart")
#: Where a posting names its address, most specific first.
_URL_MEMBERS = ("url", "@id", "mainEntityOfPage")


@dataclass
class Postings:
    """The stories a page's JSON-LD lists, in order, and the links they name."""

    stories: list[Story] = field(default_factory=list)
    links: list[MediumLink] = field(default_factory=list)

    @property
    def ids(self) -> list[str]:
        return [story.story_id for story in self.stories if story.story_id]


def read_postings(doc: Document, state_json_ld: str | None) -> Postings:
    """Postings of the state's ``seoMetaTags.jsonLd`` (first), then of the page's JSON-LD;
    one story per id (the first posting of an id wins)."""
    pages = [*_state_collections(doc, state_json_ld)]
    pages += [obj for obj in doc.json_ld if _is_collection(obj)]
    found = Postings()
    seen: set[str] = set()
    for page in pages:
        for posting in _postings_of(page):
            story = posting_story(posting, doc)
            if story is None or story.story_id in seen:
                continue
            seen.add(str(story.story_id))
            found.stories.append(story)
            found.links += _posting_links(posting, story, doc)
    return found


def posting_story(posting: Node, doc: Document) -> Story | None:
    """The partial story one posting describes, or None without a post id."""
    addresses = [text for name in _URL_MEMBERS for text in _addresses(posting, name)]
    story_id = _posting_id(posting, addresses)
    if story_id is None:
        return None
    medium_url = next((url for url in addresses if _is_story_on_medium(url, story_id, doc)), None)
    author = next(iter(posting.objects("author")), None)
    image = _image_url(next(iter(posting.texts("image")), None) or _image_object_url(posting))
    free = posting.bool("isAccessibleForFree")
    publisher = _publication_link(posting, doc)
    return Story(
        story_id=story_id,
        url=medium_url or post_url(story_id),
        canonical_url=next(
            (u for u in addresses if cross_post_url(u, story_id, doc.medium_domains)), None
        ),
        title=one_line(posting.str("headline") or posting.str("name")),
        author_username=_username(author),
        author_name=clean_text(author.str("name")) if author is not None else None,
        publication_slug=publisher.key if publisher and "." not in publisher.key else None,
        publication_name=clean_text(_publisher(posting).str("name")) if publisher else None,
        published_at=parse_timestamp(posting.str("datePublished"))[0],
        updated_at=parse_timestamp(posting.str("dateModified"))[0],
        is_member_only=(not free) if free is not None else None,
        image_url=image,
        data_source="jsonld",
        scraped_at=doc.scraped_at,
    )


# --- where postings are -----------------------------------------------------------------


def _state_collections(doc: Document, text: str | None) -> list[Node]:
    """The collection pages in a ``seoMetaTags.jsonLd`` string (broken JSON is noted)."""
    if not text or not text.strip():
        return []
    try:
        value = load_json(text)
    except StateError as exc:
        doc.error(f"Tag.seoMetaTags.jsonLd: {exc}")
        return []
    holder = Node(State(notes=doc.note, source="seoMetaTags.jsonLd"), {"jsonLd": value}, "")
    return [obj for obj in holder.objects("jsonLd") if _is_collection(obj)]


def _is_collection(obj: Node) -> bool:
    return any(kind in COLLECTION_TYPES for kind in obj.texts("@type"))


def _postings_of(page: Node) -> list[Node]:
    """The page's postings (a ``ListItem`` wrapping its ``item`` is unwrapped)."""
    out = []
    for member in POSTING_MEMBERS:
        for entry in page.objects(member):
            inner = entry.node("item") if isinstance(entry.value("item"), dict) else None
            out.append(inner if inner is not None else entry)
    return out


# --- one posting -------------------------------------------------------------------------


def _addresses(posting: Node, name: str) -> list[str]:
    """The URLs a member gives: a string, or an object's ``@id`` / ``url``."""
    value = posting.value(name)
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        inner = posting.node(name)
        return [u for u in (inner.str("@id"), inner.str("url")) if u] if inner else []
    return []


def _posting_id(posting: Node, addresses: list[str]) -> str | None:
    raw = posting.scalar("identifier")
    identifier = lower_id(raw) if isinstance(raw, str) else None
    if identifier and POST_ID_RE.match(identifier):
        return identifier
    return next((pid for url in addresses if (pid := post_id_from_url(url))), None)


def _is_story_on_medium(url: str, story_id: str, doc: Document) -> bool:
    link = classify_url(url, custom_domains=doc.medium_domains)
    return link is not None and link.kind == "story" and link.key == story_id


def _username(author: Node | None) -> str | None:
    """The author's username: ``identifier``, else the ``/@user`` of its URL."""
    if author is None:
        return None
    name = clean_text(author.str("identifier"))
    if name:
        return name.lstrip("@")
    for url in (author.str("url"), author.str("@id")):
        link = classify_url(url) if url else None
        if link is not None and link.kind == "author":
            return link.url.rsplit("/@", 1)[-1]
    return None


def _image_object_url(posting: Node) -> str | None:
    image = next(iter(posting.objects("image")), None)
    return image.str("url") if image is not None else None


def _image_url(url: str | None) -> str | None:
    """An image URL that names an image (``https://miro.medium.com/`` alone names none)."""
    parts = split_url(url.strip()) if url else None
    return url.strip() if url and parts is not None and parts.path.strip("/") else None


def _publisher(posting: Node) -> Node:
    return next(iter(posting.objects("publisher")), None) or Node(posting.state, {}, "")


def _publication_link(posting: Node, doc: Document) -> MediumLink | None:
    """The publisher when it is a Medium publication (Medium itself is not one)."""
    publisher = _publisher(posting)
    for url in (publisher.str("@id"), publisher.str("url")):
        link = classify_url(url, custom_domains=doc.medium_domains) if url else None
        if link is not None and link.kind == "publication":
            return link
    return None


def _posting_links(posting: Node, story: Story, doc: Document) -> list[MediumLink]:
    """The story, its author and its publication, as links to follow."""
    links = [classify_url(story.url) if story.url else None]
    if story.author_username:
        links.append(classify_url(author_url(story.author_username)))
    links.append(_publication_link(posting, doc))
    return [link for link in links if link is not None]
