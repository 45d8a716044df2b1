"""Markdown bodies of every real story capture, checked against the page itself.

For each capture the story's ``markdown`` is parsed by a CommonMark reader and
compared with what the page shows, found independently of the parser: Medium
anchors every body paragraph by its name (a 4-hex ``id``), so the page's headings,
links and code blocks are the ``h1``–``h4``, ``a[href]`` and ``pre`` among those.
``?format=json`` captures are checked against their paragraph list. The captures
are read from ``../shared/medium-pages`` (``TOPICS_CRAWLER_PAGES``); each test
skips when they are absent.
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

import lxml.etree
import lxml.html
import pytest

from tests.fixture_cases import real_pages_dir
from tests.markdown_readback import ReadBack, read_back
from topics_crawler.items import Story
from topics_crawler.pages import parse_page
from topics_crawler.pages._document import Document
from topics_crawler.pages.markdown import PREVIEW_NOTICE
from topics_crawler.pages.state import parse_json_payload

pytestmark = pytest.mark.real_pages

_NAME = re.compile(r"[0-9a-f]{4}")
_FOLDER = real_pages_dir()
HTML_CAPTURES = sorted(p.name for p in _FOLDER.glob("story_*.html")) if _FOLDER.is_dir() else []
JSON_CAPTURES = sorted(p.name for p in _FOLDER.glob("json_post_*.json")) if _FOLDER.is_dir() else []
LOCKED = "story_humanparts_the-mtg-color-wheel-c9700a7cf36d__postlight-2023.html"


def norm(text: str) -> str:
    return " ".join(text.split())


def story_of(path: Path, url: str) -> Story:
    kind = "story" if path.suffix == ".html" else "json"
    result = parse_page(path.read_bytes(), url, kind=kind)
    story = next(item for item in result.items if isinstance(item, Story))
    assert story.markdown, f"{path.name}: no markdown"
    return story


def capture(real_pages: Path, name: str) -> Path:
    path = real_pages / name
    if not path.exists():
        pytest.skip(f"{name} not in {real_pages}")
    return path


def body_blocks(tree: lxml.html.HtmlElement) -> list[lxml.html.HtmlElement]:
    """The page's named body paragraphs (a code line's ``<span id>`` counts for its ``pre``)."""
    blocks: list[lxml.html.HtmlElement] = []
    for element in tree.iter("*"):
        if not isinstance(element.tag, str) or not _NAME.fullmatch(element.get("id") or ""):
            continue
        if element.tag == "span":
            pre = next((a for a in element.iterancestors() if a.tag == "pre"), None)
            if pre is not None and pre not in blocks:
                blocks.append(pre)
            continue
        blocks.append(element)
    return blocks


def pre_text(element: lxml.html.HtmlElement) -> str:
    """A ``pre``'s text as a reader copies it: ``<br>`` is a line break."""
    parts = [element.text or ""]
    for child in element:
        parts.append("\n" if child.tag == "br" else pre_text(child))
        parts.append(child.tail or "")
    return "".join(parts)


def code_of(seen: ReadBack) -> str:
    return "\n".join(content for _, content in seen.code_blocks)


@pytest.mark.parametrize("name", HTML_CAPTURES or ["(no captures)"])
def test_markdown_holds_the_pages_headings_links_and_code(real_pages: Path, name: str) -> None:
    path = capture(real_pages, name)
    doc = Document(path.read_bytes(), "https://medium.com/p/capture")
    story = story_of(path, doc.url)
    assert story.markdown is not None
    seen = read_back(story.markdown)
    tree = doc.tree
    assert tree is not None
    blocks = body_blocks(tree)
    page_headings = [norm(b.text_content()) for b in blocks if b.tag in {"h1", "h2", "h3", "h4"}]
    page_headings = [h for h in page_headings if h]
    ours = [norm(text) for _, text in seen.headings]
    page_links = [
        (urljoin(doc.url, a.get("href")), norm(a.text_content()))
        for block in blocks
        for a in block.iter("a")
        if a.get("href") and norm(a.text_content())
    ]
    our_links = [(href, norm(text)) for href, text in seen.links]
    code = code_of(seen)
    page_code = [pre_text(b) for b in blocks if b.tag == "pre"]
    if name == LOCKED:
        # The page shows more than the state's preview: the preview's parts are on the page.
        assert story.text_is_preview is True
        assert story.markdown.endswith(PREVIEW_NOTICE)
        assert ours, "the preview has its headings"
        assert all(h in page_headings for h in ours), (ours, page_headings)
        every_link = {
            (urljoin(doc.url, a.get("href")), norm(a.text_content())) for a in tree.iter("a")
        }
        assert all(link in every_link for link in our_links), our_links
        return
    assert not story.markdown.endswith(PREVIEW_NOTICE)
    assert [h for h in page_headings if h not in ours] == []
    assert [link for link in page_links if link not in our_links] == []
    assert [c for c in page_code if c not in code] == [], "code blocks byte for byte"
    assert len(seen.code_blocks) <= len(page_code)
    every_text = norm(tree.text_content())
    assert all(h in every_text for h in ours), "every heading is on the page"


def paragraphs_of(path: Path) -> list[dict]:
    payload = parse_json_payload(path.read_text(encoding="utf-8"))["payload"]
    return payload["value"]["content"]["bodyModel"]["paragraphs"]


@pytest.mark.parametrize("name", JSON_CAPTURES or ["(no captures)"])
def test_json_markdown_holds_its_paragraphs(real_pages: Path, name: str) -> None:
    path = capture(real_pages, name)
    story = story_of(path, "https://medium.com/p/capture?format=json")
    assert story.markdown is not None
    seen = read_back(story.markdown)
    paragraphs = paragraphs_of(path)
    headings = [
        norm(p["text"]) for p in paragraphs if p["type"] in {2, 3, 13} and p["text"].strip()
    ]
    assert [norm(text) for _, text in seen.headings] == headings
    links = [
        (m["href"], norm(p["text"][m["start"] : m["end"]]))
        for p in paragraphs
        for m in p.get("markups", [])
        if m["type"] == 3 and m.get("href")
    ]
    our_links = [(href, norm(text)) for href, text in seen.links]
    assert [link for link in links if link not in our_links] == []
    code = code_of(seen)
    assert all(p["text"] in code for p in paragraphs if p["type"] == 8)
    assert len([p for p in paragraphs if p["type"] == 4]) == len(seen.images)


FEED_CAPTURES = sorted(p.name for p in _FOLDER.glob("feed_*.xml")) if _FOLDER.is_dir() else []
_CONTENT = "{http://purl.org/rss/1.0/modules/content/}encoded"


@pytest.mark.parametrize("name", FEED_CAPTURES or ["(no captures)"])
def test_feed_markdown_holds_each_items_headings_links_and_code(
    real_pages: Path, name: str
) -> None:
    """Each full-content item's Markdown against the item's own HTML (``content:encoded``)."""
    path = capture(real_pages, name)
    result = parse_page(path.read_bytes(), "https://medium.com/feed/capture", kind="feed")
    stories = {s.story_id: s for s in result.items if isinstance(s, Story)}
    checked = 0
    for item in lxml.etree.fromstring(path.read_bytes()).iter("item"):
        content = item.find(_CONTENT)
        if content is None or not (content.text or "").strip():
            continue
        guid = item.findtext("guid") or ""
        story = stories[guid.rsplit("/", 1)[-1]]
        assert story.markdown, guid
        seen = read_back(story.markdown)
        html = lxml.html.fragment_fromstring(content.text, create_parent="div")
        pixel = next((i for i in html if i.tag == "img" and "/_/stat?" in i.get("src", "")), None)
        for after in [pixel, *pixel.itersiblings()] if pixel is not None else []:
            html.remove(after)  # Medium's tracking pixel and "originally published in" footer
        headings = [norm(h.text_content()) for h in html.iter("h1", "h2", "h3", "h4")]
        assert [norm(text) for _, text in seen.headings] == [h for h in headings if h]
        links = [
            (a.get("href"), norm(a.text_content()))
            for a in html.iter("a")
            if a.get("href") and norm(a.text_content()) and a.getparent() is not html
        ]
        our_links = [(href, norm(text)) for href, text in seen.links]
        assert [link for link in links if link not in our_links] == []
        code = code_of(seen)
        assert [pre_text(p) for p in html.iter("pre") if pre_text(p) not in code] == []
        checked += 1
    assert checked
