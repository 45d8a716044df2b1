"""Story parser details the fixtures do not show clearly: id sources, layer priority,
locked stories, paragraph rendering, ``?format=json`` payloads, crash containment."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from typing import Any

import pytest

from topics_crawler.items import Story
from topics_crawler.pages import PARSERS, PageResult, parse_page
from topics_crawler.pages._body import render_paragraphs
from topics_crawler.pages._document import Document
from topics_crawler.pages._markdown_state import legacy_body
from topics_crawler.pages._story_html import HTML_LAYERS
from topics_crawler.pages.json_payload import parse_json
from topics_crawler.pages.state import State
from topics_crawler.pages.story import parse_story

NOW = datetime(2026, 11, 30, 12, tzinfo=UTC)
POST_ID = "0123456789ab"
URL = f"https://medium.com/@writer/a-story-{POST_ID}"


def apollo_script(post: dict[str, Any], extra: dict[str, Any] | None = None) -> str:
    """``window.__APOLLO_STATE__`` with one Post behind ``ROOT_QUERY.postResult``."""
    state = {
        "ROOT_QUERY": {f'postResult({{"id":"{post["id"]}"}})': {"__ref": f"Post:{post['id']}"}},
        f"Post:{post['id']}": post,
        **(extra or {}),
    }
    return f"<script>window.__APOLLO_STATE__ = {json.dumps(state)}</script>"


def page(head: str = "", body: str = "") -> str:
    return f"<!DOCTYPE html><html><head>{head}</head><body>{body}</body></html>"


def story_of(html: str, url: str = URL) -> Story:
    result = parse_story(Document(html, url, scraped_at=NOW))
    story = result.items[0]
    assert isinstance(story, Story)
    return story


# --- post id -------------------------------------------------------------------------------


def test_post_id_prefers_state_over_app_link_and_url() -> None:
    html = page(
        '<meta property="al:ios:url" content="medium://p/bbbbbbbbbbbb">',
        apollo_script({"id": "cccccccccccc", "title": "T"}),
    )
    assert story_of(html, "https://medium.com/@w/x-aaaaaaaaaaaa").story_id == "cccccccccccc"


def test_post_id_from_app_link_when_state_is_absent() -> None:
    html = page('<meta property="al:android:url" content="medium://p/bbbbbbbbbbbb">')
    assert story_of(html, "https://medium.com/@w/x-aaaaaaaaaaaa").story_id == "bbbbbbbbbbbb"


def test_post_id_from_2015_single_slash_app_link() -> None:
    html = page('<meta property="al:ios:url" content="medium:/p/429fab868ca8">')
    assert story_of(html, "https://example.org/x").story_id == "429fab868ca8"


def test_post_id_from_url_when_nothing_else_says() -> None:
    assert story_of(page("<title>x</title>")).story_id == POST_ID


def test_page_without_any_post_id_is_no_story() -> None:
    result = parse_story(Document(page("<title>Garden</title>"), "https://example.org/garden"))
    assert result.items == []
    assert len(result.errors) == 1
    assert "no Medium story" in result.errors[0]


# --- layer priority --------------------------------------------------------------------------


def test_state_beats_json_ld_beats_meta_beats_dom() -> None:
    json_ld = {"@type": "NewsArticle", "headline": "From JSON-LD", "datePublished": "2020-01-01"}
    head = (
        f'<script type="application/ld+json">{json.dumps(json_ld)}</script>'
        '<meta property="og:title" content="From meta">'
        '<meta name="author" content="Meta Author">'
    )
    body = '<h1 data-testid="storyTitle">From DOM</h1><span class="pw-multi-vote-count">1.2K</span>'
    html = page(head, body + apollo_script({"id": POST_ID, "title": "From state"}))
    story = story_of(html)
    assert story.title == "From state"
    assert story.author_name == "Meta Author"
    assert story.published_at == "2020-01-01T00:00:00Z"
    assert story.published_at_raw is None  # the raw text belongs to no layer that won
    assert (story.claps, story.claps_raw) == (1200, "1.2K")


def test_raw_text_is_dropped_when_a_better_layer_gives_the_count() -> None:
    body = '<span class="pw-multi-vote-count">1.2K</span>'
    story = story_of(page("", body + apollo_script({"id": POST_ID, "clapCount": 1234})))
    assert (story.claps, story.claps_raw) == (1234, None)


def test_json_ld_headline_with_site_suffix_gives_way_to_og_title() -> None:
    json_ld = {"@type": "NewsArticle", "headline": "Title - Author - Medium"}
    head = (
        f'<script type="application/ld+json">{json.dumps(json_ld)}</script>'
        '<meta property="og:title" content="Title">'
    )
    assert story_of(page(head)).title == "Title"


def test_canonical_link_to_another_site_is_not_the_story_url() -> None:
    head = '<link rel="canonical" href="https://someblog.example/original-post">'
    assert story_of(page(head)).url == URL


def test_custom_domain_canonical_link_is_kept() -> None:
    head = f'<link rel="canonical" href="https://wtfeconomy.com/wtf-{POST_ID}">'
    assert story_of(page(head)).url == f"https://wtfeconomy.com/wtf-{POST_ID}"


def test_published_time_meta_is_ignored_on_2019_and_later_pages() -> None:
    head = '<meta property="article:published_time" content="2018-01-19T17:06:07.358Z">'
    assert story_of(page(head)).published_at is None


def test_published_time_meta_is_first_publication_on_legacy_pages() -> None:
    head = '<meta property="article:published_time" content="2016-08-08T14:26:01.601Z">'
    body = '<article class="postArticle"><p class="graf graf--p">Text</p></article>'
    assert story_of(page(head, body)).published_at == "2016-08-08T14:26:01Z"


# --- locked stories ----------------------------------------------------------------------------


def test_locked_from_state_with_preview_body() -> None:
    post = {
        "id": POST_ID,
        "isLocked": True,
        "wordCount": 900,
        'content({"postMeteringOptions":{}})': {
            "isLockedPreviewOnly": True,
            "bodyModel": {"paragraphs": [{"__ref": "Paragraph:p0"}]},
        },
    }
    extra = {"Paragraph:p0": {"type": "P", "text": "First lines only."}}
    story = story_of(page("", apollo_script(post, extra)))
    assert story.is_member_only is True
    assert story.text == "First lines only."
    assert story.text_is_preview is True
    assert story.word_count == 900


def test_locked_from_json_ld_string_false() -> None:
    json_ld = {"@type": "NewsArticle", "isAccessibleForFree": "False"}
    head = f'<script type="application/ld+json">{json.dumps(json_ld)}</script>'
    assert story_of(page(head)).is_member_only is True


def test_locked_from_metered_content_markup_marks_dom_text_as_preview() -> None:
    body = '<article class="meteredContent"><p>Hi there</p></article>'
    story = story_of(page("", body))
    assert story.is_member_only is True
    assert story.text_is_preview is True
    assert story.word_count is None  # never counted from a preview


def test_free_story_counts_words_of_full_dom_text() -> None:
    body = "<article><p>One two three.</p><p>Four five.</p></article>"
    story = story_of(page("", body))
    assert story.is_member_only is None
    assert (story.text, story.word_count, story.text_is_preview) == (
        "One two three.\n\nFour five.",
        5,
        False,
    )


# --- paragraph rendering -----------------------------------------------------------------------


def test_render_paragraphs_markdown_flavour() -> None:
    paragraphs = [
        ("H3", "Title"),
        ("H4", "Sub"),
        ("P", "  Plain   text  "),
        ("ULI", "one"),
        ("ULI", "two"),
        ("OLI", "first"),
        ("OLI", "second"),
        ("PRE", "a = 1"),
        ("PRE", "b = 2"),
        ("BQ", "quoted"),
        ("IFRAME", ""),
        ("IMG", "A caption"),
        ("P", ""),
    ]
    assert render_paragraphs(paragraphs) == (
        "### Title\n\n#### Sub\n\nPlain text\n\n- one\n- two\n\n1. first\n2. second"
        "\n\n```\na = 1\nb = 2\n```\n\n> quoted\n\nA caption"
    )


def test_render_nothing_is_none() -> None:
    assert render_paragraphs([("P", " "), ("IFRAME", "")]) is None


def test_legacy_int_types_map_to_names() -> None:
    body = {"paragraphs": [{"type": t, "text": str(t)} for t in (1, 3, 4, 8, 9, 11, 13, 99)]}
    kinds = [kind for kind, _ in legacy_body(State.from_payload(body).root).paragraphs]
    assert kinds == ["P", "H3", "IMG", "PRE", "ULI", "IFRAME", "H4", "P"]


# --- ?format=json payloads -------------------------------------------------------------------


def post_payload() -> dict[str, Any]:
    return {
        "success": True,
        "payload": {
            "value": {
                "id": POST_ID,
                "type": "Post",
                "title": "Hello",
                "creatorId": "u1",
                "homeCollectionId": "",
                "firstPublishedAt": 1424449029094,
                "content": {"bodyModel": {"paragraphs": [{"type": 1, "text": "Hi."}]}},
                "virtuals": {"wordCount": 1, "recommends": 3},
            },
            "references": {"User": {"u1": {"userId": "u1", "username": "w", "name": "W"}}},
        },
    }


@pytest.mark.parametrize("guard", ["])}while(1);</x>", ""])
def test_post_payload_with_and_without_xssi_guard(guard: str) -> None:
    body = guard + json.dumps(post_payload())
    result = parse_json(Document(body, URL + "?format=json", scraped_at=NOW))
    assert result.errors == []
    story, author = result.items
    assert isinstance(story, Story)
    assert (story.story_id, story.title, story.url) == (POST_ID, "Hello", URL)
    assert (story.author_username, story.claps, story.text) == ("w", 3, "Hi.")
    assert author.item_type == "author"


def test_broken_json_payload_is_an_error() -> None:
    result = parse_json(Document("])}while(1);</x>{broken", URL))
    assert result.items == []
    assert result.errors[0].startswith("broken JSON payload")


def test_unrecognised_payload_is_an_error() -> None:
    result = parse_json(Document(json.dumps({"payload": {"something": 1}}), URL))
    assert result.errors == ["unrecognised JSON payload"]


def test_json_detected_and_parsed_through_parse_page() -> None:
    result = parse_page("])}while(1);</x>" + json.dumps(post_payload()), URL, scraped_at=NOW)
    assert result.kind == "json"
    assert result.items[0].item_type == "story"


# --- containment ---------------------------------------------------------------------------------


def test_a_crashing_parser_is_caught_by_parse_page(monkeypatch: pytest.MonkeyPatch) -> None:
    def explode(doc: Document) -> PageResult:
        raise RuntimeError("boom")

    monkeypatch.setitem(PARSERS, "story", explode)
    result = parse_page(page(), URL, kind="story")
    assert result.items == []
    assert result.errors == ["parser crashed: RuntimeError('boom')"]


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"\xff\xfe\x00garbage",
        b"<html><head><script>window.__APOLLO_STATE__ = [1, 2]</script>",
        b'<script>window.__APOLLO_STATE__ = {"ROOT_QUERY": {"postResult({})": 7}}</script>',
        b'<script>window["obvInit"]({"value": {"id": 5}, "references": []})</script>',
    ],
)
def test_odd_inputs_never_raise(body: bytes) -> None:
    result = parse_story(Document(body, URL, scraped_at=NOW))
    assert result.kind == "story"


def ld_script(value: Any) -> str:
    return f'<script type="application/ld+json">{json.dumps(value)}</script>'


def test_json_ld_read_one_or_many_through_the_typed_accessors() -> None:
    article = {
        "@type": ["WebPage", "NewsArticle"],
        "headline": "Typed",
        "author": [{"@type": "Person", "name": "Ada", "identifier": "ada"}],
        "publisher": {"@type": "Organization", "name": "Zig Weekly"},
        "keywords": ["Tag:Systems Programming", "Publication:zig-weekly"],
        "image": [{"@type": "ImageObject", "url": "https://miro.medium.com/x.png"}],
        "identifier": POST_ID.upper(),
    }
    result = parse_page(page(ld_script({"@graph": [article]})).encode(), URL, kind="story")
    story = result.items[0]
    assert isinstance(story, Story)
    assert (story.title, story.author_name, story.author_username) == ("Typed", "Ada", "ada")
    assert story.publication_name == "Zig Weekly"
    assert story.tags == ["systems-programming"]
    assert story.image_url == "https://miro.medium.com/x.png"
    assert story.story_id == POST_ID
    assert result.errors == []


def test_wrong_typed_json_ld_values_are_noted_gaps_never_exceptions() -> None:
    article = {
        "@type": "NewsArticle",
        "headline": 42,
        "author": "Ada",
        "publisher": [7],
        "keywords": {"Tag": "x"},
        "image": 3.5,
        "identifier": ["x"],
        "datePublished": {"at": 1},
        "isAccessibleForFree": [False],
    }
    crumbs = {"@type": "BreadcrumbList", "itemListElement": {"position": 1, "name": "A"}}
    html = page(ld_script([article, crumbs, 12, "text"]) + "<title>Fallback</title>")
    result = parse_page(html.encode(), URL, kind="story", scraped_at=NOW)
    story = result.items[0]
    assert isinstance(story, Story)
    assert (story.title, story.author_name, story.tags, story.image_url) == (None, None, [], None)
    assert story.is_member_only is None
    noted = " ".join(result.errors)
    for field in ("headline", "author", "publisher[]", "keywords", "identifier", "datePublished"):
        assert f".{field} is " in noted, (field, result.errors)
    medium = html.replace("<head>", '<head><meta property="og:site_name" content="Medium">')
    tag = parse_page(medium.encode(), "https://medium.com/tag/zig", kind="tag", scraped_at=NOW)
    assert "itemListElement is an object, not a list" in " ".join(tag.errors), tag.errors


def test_html_layers_declare_the_fields_they_give() -> None:
    """A layer below JSON-LD is skipped when its declared fields are all filled: the
    declaration must name every field it returns, or a skip would drop a value."""
    html = page(
        '<meta property="og:title" content="T"><meta name="author" content="A">'
        '<meta property="al:ios:url" content="medium://p/0123456789ab">'
        '<meta property="article:author" content="https://medium.com/@writer">'
        '<meta name="twitter:data1" content="3 min read">'
        '<meta property="og:image" content="https://miro.medium.com/i.png">'
        '<link rel="stylesheet" href="x.css"><script>var postArticle;</script>',
        '<h1 class="graf graf--h3 graf--title">Title</h1>',
    )
    doc = Document(html, URL, scraped_at=NOW)
    for gives, _name, layer in HTML_LAYERS:
        returned = layer(doc)
        assert returned, layer.__name__
        assert returned.keys() <= gives, layer.__name__


def test_meta_layer_is_skipped_only_when_the_state_filled_its_fields() -> None:
    post = {"id": POST_ID, "title": "From state", "firstPublishedAt": 1700000000000}
    html = page(
        '<meta property="og:title" content="From meta">'
        '<meta property="og:image" content="https://miro.medium.com/i.png">',
        apollo_script(post),
    )
    story = story_of(html)
    assert story.title == "From state"
    assert story.image_url == "https://miro.medium.com/i.png"  # only the meta tags give it
