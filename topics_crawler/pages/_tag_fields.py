"""A tag page's own fields from the layers below its state: JSON-LD ``BreadcrumbList``
(name, parent topics), meta tags (the title's name, the description or the related tags of
Medium's "Read stories about …" boilerplate) and the page as a reader sees it (name,
breadcrumb, related topics, counts). :mod:`topics_crawler.pages.tag` picks among them.
"""

from __future__ import annotations

import re
from typing import Any

from topics_crawler.items.values import clean_text, tag_slug, unique
from topics_crawler.pages._document import Document
from topics_crawler.pages._tag_dom import RELATED_KEYS, TagOutline
from topics_crawler.pages.state import Node
from topics_crawler.urls import classify_url

_TITLE_RE = re.compile(r"^(?:The most insightful stories about\s+)?(?P<name>.+?)\s+[-–—]\s+Medium$")
_BOILERPLATE_RE = re.compile(
    r"^Read stories about (?P<name>.+?) on Medium\.\s+Discover smart, unique perspectives on .+?"
    r"(?: like (?P<related>.+?))?\.?$",
    re.DOTALL,
)
_RELATED_SPLIT_RE = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
#: Longest title / description the patterns look at (their lazy groups backtrack).
MAX_META_TEXT = 1_000


def json_ld_fields(doc: Document, slug: str | None) -> dict[str, Any]:
    """Name and parent topics from a ``BreadcrumbList`` (the last crumb is the tag)."""
    crumbs = doc.json_ld_of("BreadcrumbList")
    entries = sorted(crumbs.nodes("itemListElement"), key=_crumb_position) if crumbs else []
    named = [(_crumb_name(e), _crumb_url(e)) for e in entries]
    named = [(name, url) for name, url in named if name]
    if not named:
        return {}
    last_name, last_url = named[-1]
    last_link = classify_url(last_url) if last_url else None
    if last_link is not None and last_link.key != slug:
        return {"parent_topics": [name for name, _ in named]}
    return {"name": last_name, "parent_topics": [name for name, _ in named[:-1]]}


def _crumb_position(entry: Node) -> int:
    return entry.int("position") or 0


def _crumb_name(entry: Node) -> str | None:
    """A crumb's ``name``, else its ``item``'s (``item`` is an object or a URL)."""
    item = entry.node("item") if isinstance(entry.value("item"), dict) else None
    return clean_text(entry.str("name") or (item.str("name") if item is not None else None))


def _crumb_url(entry: Node) -> str | None:
    if not isinstance(entry.value("item"), dict):
        return entry.str("item")
    item = entry.node("item")
    return (item.str("@id") or item.str("url")) if item is not None else None


def meta_fields(doc: Document) -> dict[str, Any]:
    """Name from the title; description, or related tags from Medium's boilerplate."""
    fields: dict[str, Any] = {}
    titles = [*(str(t) for t in doc.xpath("//title/text()")), doc.meta.get("og:title", "")]
    for title in titles:
        match = _TITLE_RE.match(clean_text(title[:MAX_META_TEXT]) or "")
        if match:
            fields["name"] = clean_text(match.group("name"))
            break
    text = clean_text(doc.meta.get("description") or doc.meta.get("og:description"))
    if not text or len(text) > MAX_META_TEXT:  # Medium's boilerplate is a sentence or two
        return fields
    boilerplate = _BOILERPLATE_RE.match(text)
    if boilerplate:
        fields["related_tags"] = _related_from_boilerplate(boilerplate.group("related") or "")
    elif fields.get("name"):
        fields["description"] = clean_text(text.removeprefix(f"{fields['name']} on Medium:"))
    return fields


def _related_from_boilerplate(listing: str) -> list[str]:
    """``"Deep Learning, Pytorch, and more"`` → ``["deep-learning", "pytorch"]``."""
    names = [clean_text(part) for part in _RELATED_SPLIT_RE.split(listing)]
    slugs = [tag_slug(name) for name in names if name and name.lower() != "more"]
    return unique([s for s in slugs if s])


def dom_fields(outline: TagOutline) -> dict[str, Any]:
    crumbs = outline.breadcrumb or outline.above_title
    related = list(outline.marked_related)
    for block in outline.blocks:
        if block.key in RELATED_KEYS:
            related += block.all_links("tag")
    return {
        "name": outline.name,
        "parent_topics": unique([text for text, _ in crumbs if text]),
        "related_tags": unique([link.key for _, link in related]),
        **outline.counts,
    }
