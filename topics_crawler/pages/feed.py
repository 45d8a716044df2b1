"""Medium RSS 2.0 feeds: ``/feed/@user``, ``/@user/feed``, ``/feed/<pub>``,
``/feed/<pub>/tagged/<tag>``.

Each ``<item>`` becomes a :class:`~topics_crawler.items.Story`; the channel
becomes the :class:`Author` (user feed) or :class:`Publication` (publication
feed) that owns it. The XML is parsed with entity expansion, DTD loading and
network access switched off, so a hostile feed cannot read local files or
blow up memory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from urllib.parse import parse_qs, urlsplit

import lxml.html
from lxml import etree

from topics_crawler.items import Author, Item, Publication, Story
from topics_crawler.items.access import access_level
from topics_crawler.items.values import clean_text, parse_timestamp, tag_slug, unique
from topics_crawler.pages._body import Paragraph, render_paragraphs
from topics_crawler.pages._document import Document
from topics_crawler.pages._markdown_dom import fragment_blocks
from topics_crawler.pages._result import PageResult, unique_links
from topics_crawler.pages.markdown import Block, render_markdown
from topics_crawler.urls import (
    MEDIUM_HOST,
    MEDIUM_ROOT,
    RESERVED_SEGMENTS,
    MediumLink,
    author_url,
    canonical_url,
    classify_url,
    is_medium_domain,
    post_id_from_url,
    publication_url,
    split_url,
)

NAMESPACES = {
    "dc": "http://purl.org/dc/elements/1.1/",
    "content": "http://purl.org/rss/1.0/modules/content/",
    "atom": "http://www.w3.org/2005/Atom",
}

#: ``?source=rss-<userId>------2`` (user feed), ``rss----<collectionId>--<tag>`` (publication).
_USER_SOURCE_RE = re.compile(r"^rss-([0-9a-f]{8,16})-")
_COLLECTION_SOURCE_RE = re.compile(r"^rss----([0-9a-f]{8,16})-")
_USER_TITLE_RE = re.compile(r"^Stories by (?P<name>.+) on Medium$")
_TAGGED_TITLE_RE = re.compile(r"^.+? in (?P<name>.+) on Medium$")
_PUBLICATION_TITLE_RE = re.compile(r"^(?P<name>.+) [-–] Medium$")

#: Block elements of feed HTML and the paragraph type each renders as.
_BLOCK_TYPES = {
    "p": "P",
    "h1": "H1",
    "h2": "H2",
    "h3": "H3",
    "h4": "H4",
    "blockquote": "BQ",
    "pre": "PRE",
    "li": "ULI",
    "figcaption": "P",
}
_STAT_PIXEL = "/_/stat?"


def xml_parser() -> etree.XMLParser:
    """An XML parser that never expands entities, loads DTDs or touches the network."""
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        huge_tree=False,
        remove_pis=True,
        encoding="utf-8",
    )


#: Who a feed belongs to, read from the channel ``<link>`` and ``<title>``.
FeedOwner = Author | Publication


def parse_feed(doc: Document) -> PageResult:
    """Stories of a Medium RSS feed, preceded by the Author or Publication owning it."""
    result = PageResult(kind="feed", url=doc.url)
    channel = _channel(doc)
    if channel is None:
        return result
    owner = _feed_owner(channel, doc.scraped_at)
    items: list[Item] = [owner] if owner is not None else []
    for element in channel.iterfind("item"):
        story = _story(element, owner, doc.scraped_at)
        if story is None:
            doc.error("feed item without a story id")
            continue
        items.append(story)
    result.items = items
    feed_parts = split_url(doc.url)
    feed_host = (feed_parts.hostname or "").lower() if feed_parts is not None else ""
    result.links = unique_links(
        _story_link(item, feed_host) for item in items if isinstance(item, Story)
    )
    return result


def _story_link(story: Story, feed_host: str) -> MediumLink | None:
    """Link to a feed story. A feed Medium serves lists a publication's stories under the
    publication's own domain: that domain counts as Medium's. A feed served from a custom
    domain vouches for that domain only."""
    parts = split_url(story.url) if story.url else None
    if parts is None:
        return None
    vouched = is_medium_domain(feed_host) or (parts.hostname or "") == feed_host
    return classify_url(str(story.url), custom_domains=[parts.netloc] if vouched else [])


def _channel(doc: Document) -> etree._Element | None:
    """The ``<channel>`` of an RSS 2.0 document; records why when there is none."""
    if doc.is_blank():
        doc.error("empty body")
        return None
    try:
        root = etree.fromstring(doc.text.encode("utf-8"), parser=xml_parser())
    except etree.XMLSyntaxError as exc:
        doc.error(f"broken feed XML: {exc.msg}")
        return None
    if root is None or root.tag != "rss":
        doc.error("not an RSS feed")
        return None
    channel = root.find("channel")
    if channel is None:
        doc.error("RSS feed without a channel")
    return channel


def _text(element: etree._Element, path: str) -> str | None:
    """Trimmed text of the first ``path`` match; entity references are dropped, not expanded."""
    found = element.find(path, NAMESPACES)
    return clean_text(_plain_text(found)) if found is not None else None


def _plain_text(element: etree._Element) -> str:
    """Text of ``element`` and its child elements, skipping entity references and comments."""
    parts = [element.text or ""]
    for child in element:
        if isinstance(child.tag, str):
            parts.append(_plain_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def _source_param(link: str) -> str:
    """The ``source`` query parameter of a feed link (``rss-8717e15cbfc4------2``)."""
    parts = split_url(link)
    values = parse_qs(parts.query).get("source", []) if parts is not None else []
    return values[0] if values else ""


def _feed_owner(channel: etree._Element, scraped_at: str) -> FeedOwner | None:
    """The Author or Publication a feed belongs to, from the channel link and title."""
    link = _text(channel, "link") or ""
    canonical = canonical_url(link)
    if canonical is None:
        return None
    title = _text(channel, "title") or ""
    source = _source_param(link)
    parts = urlsplit(canonical)
    segments = [s for s in parts.path.split("/") if s]
    user_title = _USER_TITLE_RE.match(title)
    if parts.netloc == MEDIUM_HOST and segments and segments[0].startswith("@"):
        return _feed_author(segments[0], user_title, source, scraped_at)
    if parts.netloc == MEDIUM_HOST:
        if not segments or segments[0].lower() in RESERVED_SEGMENTS:
            return None
        return _feed_publication(segments, None, title, source, scraped_at)
    if user_title is not None:
        return None  # a user's own subdomain: the username is not in the feed
    return _feed_publication([], parts.netloc, title, source, scraped_at)


def _feed_author(
    segment: str, user_title: re.Match[str] | None, source: str, scraped_at: str
) -> Author:
    username = segment.lstrip("@")
    user_id = _USER_SOURCE_RE.match(source)
    return Author(
        author_id=user_id.group(1) if user_id else None,
        username=username,
        name=clean_text(user_title.group("name")) if user_title else None,
        url=author_url(username),
        scraped_at=scraped_at,
    )


def _feed_publication(
    segments: list[str], domain: str | None, title: str, source: str, scraped_at: str
) -> Publication:
    slug = segments[0].lower() if segments else None
    tagged = len(segments) >= 3 and segments[1] == "tagged"
    title_match = (_TAGGED_TITLE_RE if tagged else _PUBLICATION_TITLE_RE).match(title)
    collection_id = _COLLECTION_SOURCE_RE.match(source)
    return Publication(
        publication_id=collection_id.group(1) if collection_id else None,
        slug=slug,
        name=clean_text(title_match.group("name")) if title_match else None,
        url=publication_url(slug or "", domain),
        domain=domain,
        scraped_at=scraped_at,
    )


def _story(element: etree._Element, owner: FeedOwner | None, scraped_at: str) -> Story | None:
    """One ``<item>`` as a Story; None when neither guid nor link gives a post id."""
    link = _text(element, "link")
    url = canonical_url(link) if link else None
    guid = _text(element, "guid")
    story_id = (post_id_from_url(guid) if guid else None) or (
        post_id_from_url(url) if url else None
    )
    if story_id is None:
        return None
    published_at, published_raw = parse_timestamp(_text(element, "pubDate"))
    updated_at, _ = parse_timestamp(_text(element, "atom:updated"))
    body = _item_body(element)
    story = Story(
        story_id=story_id,
        url=url,
        title=_text(element, "title"),
        author_name=_text(element, "dc:creator"),
        published_at=published_at,
        published_at_raw=published_raw,
        updated_at=updated_at,
        tags=unique([tag_slug(_plain_text(c)) or "" for c in element.iterfind("category")]),
        image_url=body.image_url,
        text=body.text,
        text_is_preview=body.is_preview if body.text else None,
        access=access_level(bool(body.text), body.is_preview),
        markdown=body.markdown,
        publication_name=body.publication_name,
        scraped_at=scraped_at,
    )
    _apply_owner(story, owner)
    return story


def _apply_owner(story: Story, owner: FeedOwner | None) -> None:
    """Every story of a user feed is by that user; of a publication feed, in that publication."""
    if owner is None:
        return
    if isinstance(owner, Author):
        story.author_id = owner.author_id
        story.author_username = owner.username
        story.author_name = story.author_name or owner.name
    else:
        story.publication_id = owner.publication_id
        story.publication_slug = owner.slug
        story.publication_name = owner.name or story.publication_name


@dataclass(frozen=True)
class ItemBody:
    """What the HTML of one feed item says: its text and whether that is only a snippet."""

    text: str | None
    is_preview: bool
    image_url: str | None = None
    publication_name: str | None = None
    markdown: str | None = None


def _item_body(element: etree._Element) -> ItemBody:
    """Body of one item: ``content:encoded`` (full HTML) or ``description``, which for
    locked or cross-posted stories is only a ``medium-feed-item`` snippet."""
    for path in ("content:encoded", "description"):
        found = element.find(path, NAMESPACES)
        markup = _plain_text(found) if found is not None else None
        if not markup or not markup.strip():
            continue
        root = _fragment(markup)
        if root is None:
            continue
        if root.xpath(_class_xpath("medium-feed-item")):
            return _snippet_body(root)
        return _full_body(root)
    return ItemBody(text=None, is_preview=False)


def _class_xpath(name: str) -> str:
    return f".//*[contains(concat(' ', normalize-space(@class), ' '), ' {name} ')]"


def _fragment(markup: str) -> lxml.html.HtmlElement | None:
    try:
        return lxml.html.fragment_fromstring(markup, create_parent="div")
    except (etree.ParserError, ValueError):
        return None


def _full_body(root: lxml.html.HtmlElement) -> ItemBody:
    """Text of a full body; Medium's tracking pixel and footer after it are not text."""
    footer = _cut_at_stat_pixel(root)
    markdown = render_markdown(fragment_blocks(root, MEDIUM_ROOT))  # before the text marks <br>
    return ItemBody(
        text=html_to_text(root),
        is_preview=False,
        publication_name=_originally_in(footer),
        markdown=markdown,
    )


def _cut_at_stat_pixel(root: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """Remove the ``/_/stat?`` pixel and everything after it; returns the removed elements."""
    children = list(root)
    for index, child in enumerate(children):
        if child.tag == "img" and _STAT_PIXEL in (child.get("src") or ""):
            removed = children[index:]
            for element in removed:
                root.remove(element)
            return removed
    return []


def _originally_in(footer: list[lxml.html.HtmlElement]) -> str | None:
    """Publication name from "<story> was originally published in <pub> on Medium"."""
    for element in footer:
        text = element.text_content() if isinstance(element, lxml.html.HtmlElement) else ""
        if "was originally published in" not in text:
            continue
        anchors = element.xpath(".//a")
        if len(anchors) >= 2:
            return clean_text(anchors[-1].text_content())
    return None


def _snippet_body(root: lxml.html.HtmlElement) -> ItemBody:
    """A ``<div class="medium-feed-item">`` snippet: preview text and preview image."""
    snippet = root.xpath(_class_xpath("medium-feed-snippet"))
    images = root.xpath(_class_xpath("medium-feed-image") + "//img/@src")
    text = clean_text(snippet[0].text_content()) if snippet else None
    return ItemBody(
        text=text,
        is_preview=True,
        image_url=canonical_image(str(images[0])) if images else None,
        markdown=render_markdown([Block("P", text)], preview=True) if text else None,
    )


def canonical_image(src: str) -> str | None:
    """An image URL as found, made absolute https; None for non-http(s) sources."""
    parts = split_url(src.strip())
    if parts is None or parts.scheme not in ("http", "https") or not parts.netloc:
        return None
    return parts._replace(scheme="https").geturl()


def html_to_text(root: lxml.html.HtmlElement) -> str | None:
    """Markdown-flavoured text of a feed item's HTML, rendered like every other story body
    (:func:`~topics_crawler.pages._body.render_paragraphs`)."""
    return render_paragraphs(feed_paragraphs(root))


def feed_paragraphs(root: lxml.html.HtmlElement) -> list[Paragraph]:
    """``(type, text)`` pairs of the outermost blocks of a feed item's HTML, in order."""
    paragraphs: list[Paragraph] = []
    for element in root.iter(*_BLOCK_TYPES):
        if _inside_block(element, root):
            continue
        for br in element.iter("br"):
            br.tail = "\n" + (br.tail or "")
        paragraphs.append((_block_type(element), element.text_content()))
    return paragraphs


def _block_type(element: lxml.html.HtmlElement) -> str:
    if element.tag == "li":
        parent = element.getparent()
        return "OLI" if parent is not None and parent.tag == "ol" else "ULI"
    return _BLOCK_TYPES[element.tag]


def _inside_block(element: lxml.html.HtmlElement, root: lxml.html.HtmlElement) -> bool:
    parent = element.getparent()
    while parent is not None and parent is not root:
        if parent.tag in _BLOCK_TYPES:
            return True
        parent = parent.getparent()
    return False
