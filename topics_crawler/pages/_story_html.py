"""Story fields from the HTML around the state: JSON-LD, meta tags, DOM hooks, the URL.

Each function returns one :func:`pick` layer (Story field → value). They are
slower or less precise than the embedded state and only fill what it lacks.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable, Iterator
from typing import Any
from urllib.parse import unquote

from topics_crawler.items.access import access_level
from topics_crawler.items.values import (
    clean_text,
    parse_reading_time,
    parse_timestamp,
    read_count,
    shown_time,
    tag_slug,
    unique,
)
from topics_crawler.pages._body import count_words, render_paragraphs
from topics_crawler.pages._document import Document
from topics_crawler.pages._markdown_dom import dom_blocks
from topics_crawler.pages.markdown import render_markdown
from topics_crawler.pages.state import Node
from topics_crawler.urls import (
    MEDIUM_HOST,
    MEDIUM_ROOT,
    RESERVED_SEGMENTS,
    MediumLink,
    classify_url,
    post_id_from_url,
    split_url,
)

ARTICLE_TYPES = ("NewsArticle", "Article", "BlogPosting", "SocialMediaPosting")
APP_LINK_KEYS = ("al:ios:url", "al:android:url", "twitter:app:url:iphone")
_SITE_SUFFIXES = (" - Medium", " – Medium", " | Medium")


def is_legacy_markup(doc: Document) -> bool:
    """True for 2015–2018 server-rendered pages (``postArticle`` / ``graf`` markup)."""
    return doc.contains("postArticle")


def _false(value: Any) -> bool:
    return value is False or (isinstance(value, str) and value.strip().lower() == "false")


# --- JSON-LD ---------------------------------------------------------------------------


def _ld_person(article: Node, name: str) -> Node | None:
    """``author`` / ``publisher``: one object, or the first of a list."""
    people = article.objects(name)
    return people[0] if people else None


def _ld_title(article: Node) -> str | None:
    """``headline``, unless it is the page title with `` - Author - Medium`` appended."""
    headline = clean_text(article.str("headline") or article.str("name"))
    if headline and headline.endswith(_SITE_SUFFIXES):
        return None
    return headline


def _ld_tags(article: Node) -> list[str]:
    """Tags from ``keywords``: plain names (2017) or ``"Tag:Name"`` entries (2020–2021),
    one comma-separated string or a list."""
    keywords = article.texts("keywords")
    if len(keywords) == 1 and not isinstance(article.value("keywords"), list):
        keywords = [k for k in keywords[0].split(",") if k.strip()]
    slugs: list[str | None] = []
    for text in keywords:
        prefix, _, rest = text.partition(":")
        if rest and prefix != "Tag":
            continue  # Publication:…, Lite:…, LockedPostSource:… are not tags
        slugs.append(tag_slug(rest or text))
    return unique([slug for slug in slugs if slug])


def _ld_publisher(article: Node) -> str | None:
    publisher = _ld_person(article, "publisher")
    name = clean_text(publisher.str("name")) if publisher is not None else None
    return None if name == "Medium" else name


def json_ld_layer(doc: Document) -> dict[str, Any]:
    """Story fields from the ``NewsArticle`` / ``SocialMediaPosting`` JSON-LD object, read
    through the state reader's typed accessors (a wrong-typed value is a noted gap)."""
    article = doc.json_ld_of(*ARTICLE_TYPES)
    if article is None:
        return {}
    author = _ld_person(article, "author")
    identifier = clean_text(article.str("identifier"))
    return {
        "story_id": identifier.lower() if identifier else None,
        "title": _ld_title(article),
        "author_name": clean_text(author.str("name")) if author is not None else None,
        "author_username": clean_text(author.str("identifier")) if author is not None else None,
        "publication_name": _ld_publisher(article),
        "published_at": parse_timestamp(article.scalar("datePublished"))[0],
        "updated_at": parse_timestamp(article.scalar("dateModified"))[0],
        "tags": _ld_tags(article),
        "is_member_only": True if _false(article.scalar("isAccessibleForFree")) else None,
        "image_url": _ld_image(article),
    }


def _ld_image(article: Node) -> str | None:
    """``image``: a URL, an ``ImageObject`` with a ``url``, or a list of either (the first)."""
    value = article.value("image")
    if isinstance(value, list):
        first = article.list("image")[:1]
        value = first[0] if first else None
    if isinstance(value, dict):
        url = clean_text(Node(article.state, value).str("url"))
    else:
        url = clean_text(value) if isinstance(value, str) else None
    parts = split_url(url) if url else None
    return url if parts is not None and parts.path not in ("", "/") else None


# --- meta tags ---------------------------------------------------------------------------


def app_link_post_id(doc: Document) -> str | None:
    """Post id of the ``medium://p/<id>`` app deep link in the meta tags."""
    for key in APP_LINK_KEYS:
        value = doc.meta.get(key)
        if value and value.startswith("medium:"):
            post_id = post_id_from_url(value)
            if post_id:
                return post_id
    return None


def username_from_profile_url(url: str | None) -> str | None:
    """Username of a ``https://medium.com/@user`` or ``/@user`` profile link, else None."""
    if not url:
        return None
    link = classify_url(url, base=f"https://{MEDIUM_HOST}")
    return link.url.rsplit("/@", 1)[1] if link and link.kind == "author" else None


def meta_layer(doc: Document) -> dict[str, Any]:
    """Story fields from Open Graph, ``article:*``, ``author`` and Twitter meta tags.

    ``article:published_time`` is the first publication only on 2015–2018 pages;
    later pages put the latest publication there, so it is not used for them.
    """
    meta = doc.meta
    published = meta.get("article:published_time") if is_legacy_markup(doc) else None
    return {
        "story_id": app_link_post_id(doc),
        "title": clean_text(meta.get("og:title") or meta.get("twitter:title")),
        "author_name": clean_text(meta.get("author")),
        "author_username": username_from_profile_url(meta.get("article:author")),
        "published_at": parse_timestamp(published)[0],
        "reading_time_min": parse_reading_time(_reading_time_text(meta.get("twitter:data1"))),
        "image_url": clean_text(meta.get("og:image") or meta.get("twitter:image:src")),
    }


def _reading_time_text(value: str | None) -> str | None:
    """``"7 min read"`` / ``"3 mins"`` → ``"7 min"``; other ``twitter:data1`` values → None."""
    if not value or "min" not in value.lower():
        return None
    return value


#: Story fields :func:`meta_layer` gives (it runs only when a better layer left one empty).
META_FIELDS = frozenset(
    {
        "story_id",
        "title",
        "author_name",
        "author_username",
        "published_at",
        "reading_time_min",
        "image_url",
    }
)


def legacy_markup_layer(doc: Document) -> dict[str, Any]:
    """The ``graf--title`` heading of a 2015–2018 page: its ``og:title`` may carry
    `` – <Publication>`` after the title, the heading never does."""
    if not is_legacy_markup(doc):
        return {}
    return {"title": _first_text(doc, _class_hook("graf--title"))}


#: The layers below JSON-LD, in order, with the fields each can give: they read only the
#: tree and the meta tags (no notes), so one whose fields the better layers all filled is
#: not run — :func:`~topics_crawler.items.layers.pick` would take none of its values.
HTML_LAYERS: tuple[tuple[frozenset[str], str, Callable[[Document], dict[str, Any]]], ...] = (
    (frozenset({"title"}), "dom", legacy_markup_layer),
    (META_FIELDS, "meta", meta_layer),
)


# --- DOM hooks -----------------------------------------------------------------------------


Hook = tuple[str | None, Callable[[Document], Iterable[Any]]]
"""``(marker, find)``: ``find`` runs only when ``marker`` occurs in the page text (None:
always), so hooks of other page generations cost a substring search, not a walk."""


def _class_hook(name: str) -> Hook:
    """Elements with the class ``name`` (:meth:`Document.with_class`: one shared walk)."""
    return None, lambda doc: doc.with_class(name)


def _testid_hook(value: str) -> Hook:
    return f'data-testid="{value}"', lambda doc: doc.xpath(f"//*[@data-testid='{value}']")


def _first_text(doc: Document, *hooks: Hook) -> str | None:
    for marker, find in hooks:
        if marker is not None and not doc.contains(marker):
            continue
        for element in find(doc):
            text = clean_text(element.text_content())
            if text:
                return text
    return None


def classify_href(href: str, base: str) -> MediumLink | None:
    """:func:`classify_url` of an anchor; a relative ``/@user`` or ``/tag/<slug>`` link on a
    custom-domain page points at medium.com, as Medium serves those paths from there."""
    link = classify_url(href, base=base)
    if link is None and href.startswith(("/@", "/tag/")):
        link = classify_url(href, base=MEDIUM_ROOT)
    return link


def page_anchor_links(doc: Document) -> Iterator[MediumLink]:
    """Every anchor of the page that :func:`classify_href` recognises, page order (a page
    repeats many links — bylines, tag lists —, each distinct href is classified once)."""
    return iter(_anchor_links(doc))


def _anchor_links(doc: Document) -> list[MediumLink]:
    cached = doc.memo.get("anchor_links")
    if isinstance(cached, list):
        return cached
    links: list[MediumLink] = []
    known: dict[str, MediumLink | None] = {}
    for href in doc.hrefs:
        if href not in known:
            known[href] = classify_href(href, doc.url)
        link = known[href]
        if link is not None:
            links.append(link)
    doc.memo["anchor_links"] = links
    return links


def _dom_title(doc: Document) -> dict[str, Any]:
    hooks = (
        _testid_hook("storyTitle"),
        _class_hook("pw-post-title"),
        ("<h1", lambda doc: doc.iter_tags("h1")),  # lazy: the walk stops at the first title
    )
    return {"title": _first_text(doc, *hooks)}


def _dom_subtitle(doc: Document) -> dict[str, Any]:
    hooks = (_class_hook("pw-subtitle-paragraph"), _class_hook("graf--subtitle"))
    return {"subtitle": _first_text(doc, *hooks)}


def _dom_author(doc: Document) -> dict[str, Any]:
    hooks = (_testid_hook("authorName"), _class_hook("pw-author-name"))
    return {"author_name": _first_text(doc, *hooks)}


def _dom_published(doc: Document) -> dict[str, Any]:
    text = _first_text(doc, _testid_hook("storyPublishDate"), _class_hook("pw-published-date"))
    if text is not None:
        published, raw = shown_time(text, doc.now)
    elif doc.contains("postMetaInline"):
        times = [t for e in doc.with_class("postMetaInline") for t in e.xpath(".//time/@datetime")]
        published, raw = shown_time(str(times[0]) if times else None)
    else:
        published, raw = None, None
    return {"published_at": published, "published_at_raw": raw}


def _dom_reading_time(doc: Document) -> dict[str, Any]:
    text = _first_text(doc, _testid_hook("storyReadTime"), _class_hook("pw-reading-time"))
    return {"reading_time_min": parse_reading_time(text)}


def _dom_claps(doc: Document) -> dict[str, Any]:
    claps, raw = read_count(_first_text(doc, _class_hook("pw-multi-vote-count")))
    return {"claps": claps, "claps_raw": raw}


def _dom_responses(doc: Document) -> dict[str, Any]:
    responses, raw = read_count(_first_text(doc, _class_hook("pw-responses-count")))
    return {"responses": responses, "responses_raw": raw}


def _dom_tags(doc: Document) -> dict[str, Any]:
    return {"tags": unique([ln.key for ln in page_anchor_links(doc) if ln.kind == "tag"])}


def _dom_body(doc: Document) -> dict[str, Any]:
    locked = doc.contains("meteredContent") and bool(
        doc.xpath("//article[contains(@class, 'meteredContent')]")
    )
    blocks = dom_blocks(doc.tree, doc.url, grafs=doc.with_class("graf"))
    text = render_paragraphs([(block.kind, block.text) for block in blocks])
    return {
        "is_member_only": True if locked else None,
        "text": text,
        "markdown": render_markdown(blocks, preview=locked),
        "text_is_preview": locked if text else None,
        "access": access_level(bool(text), locked),
        "word_count": count_words(text) if text and not locked else None,
    }


#: DOM readers by the Story fields they fill; :func:`dom_layer` runs only those needed.
DOM_READERS: tuple[tuple[frozenset[str], Callable[[Document], dict[str, Any]]], ...] = (
    (frozenset({"title"}), _dom_title),
    (frozenset({"subtitle"}), _dom_subtitle),
    (frozenset({"author_name"}), _dom_author),
    (frozenset({"published_at"}), _dom_published),
    (frozenset({"reading_time_min"}), _dom_reading_time),
    (frozenset({"claps"}), _dom_claps),
    (frozenset({"responses"}), _dom_responses),
    (frozenset({"tags"}), _dom_tags),
    (frozenset({"is_member_only", "text", "markdown"}), _dom_body),
)


def dom_layer(doc: Document, wanted: Collection[str] | None = None) -> dict[str, Any]:
    """Story fields from stable markup (``data-testid``, ``pw-*`` classes, ``graf`` blocks);
    with ``wanted``, only the readers that can fill one of those fields run."""
    layer: dict[str, Any] = {}
    for fields, reader in DOM_READERS:
        if wanted is None or not fields.isdisjoint(wanted):
            layer.update(reader(doc))
    return layer


# --- the URL itself ------------------------------------------------------------------------


def url_layer(url: str | None) -> dict[str, Any]:
    """Post id, author username or publication slug spelled out in a story URL."""
    if not url:
        return {}
    parts = split_url(url)
    if parts is None:  # a broken canonical link says nothing
        return {}
    segments = [unquote(s) for s in parts.path.split("/") if s]
    layer: dict[str, Any] = {"story_id": post_id_from_url(url)}
    if parts.netloc == MEDIUM_HOST and len(segments) == 2:
        head = segments[0]
        if head.startswith("@"):
            layer["author_username"] = head[1:]
        elif head.lower() not in RESERVED_SEGMENTS:
            layer["publication_slug"] = head.lower()
    return layer
