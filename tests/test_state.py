"""Embedded state decoding (Apollo 2/3, legacy GLOBALS/obvInit, JSON payloads) and Document."""

from __future__ import annotations

import pytest

from topics_crawler.pages._cards import PageLinks
from topics_crawler.pages._document import Document
from topics_crawler.pages.state import (
    State,
    StateError,
    find_apollo_state,
    find_legacy_state,
    parse_json_payload,
    strip_xssi,
)
from topics_crawler.pages.state.decode import _legacy_fast

APOLLO3 = (
    '<script>window.__APOLLO_STATE__ = {"ROOT_QUERY":{"postResult({\\"id\\":\\"abc\\"})":'
    '{"__ref":"Post:abc"}},"Post:abc":{"id":"abc","title":"</script> inside",'
    '"creator":{"__ref":"User:u1"},"tags":[{"__ref":"Tag:ai"}],'
    '"content({\\"postMeteringOptions\\":{}})":{"isLockedPreviewOnly":true}},'
    '"User:u1":{"id":"u1","name":"Ann"},"Tag:ai":{"id":"ai"}};window.x=1</script>'
)
APOLLO2 = (
    '<script>window.__APOLLO_STATE__ = {"Post:abc":{"id":"abc","creator":{"type":"id",'
    '"generated":false,"id":"User:u1","typename":"User"},"previewContent":{"type":"id",'
    '"generated":true,"id":"$Post:abc.previewContent"}},"$Post:abc.previewContent":'
    '{"subtitle":"Sub"},"User:u1":{"id":"u1","name":"Ann"}}</script>'
)


def test_apollo3_references_and_field_calls() -> None:
    data = find_apollo_state(APOLLO3)
    assert data is not None
    state = State.from_apollo(data)
    post = state.root.node("postResult")
    assert post is not None
    assert post.str("title") == "</script> inside"
    creator = post.node("creator")
    assert creator is not None
    assert creator.str("name") == "Ann"
    assert [tag.raw for tag in post.nodes("tags")] == [{"id": "ai"}]
    content = post.node("content")
    assert content is not None
    assert content.bool("isLockedPreviewOnly") is True
    assert [call.args for call in state.root.calls("postResult")] == [{"id": "abc"}]
    assert [user.key for user in state.entities("User")] == ["User:u1"]


def test_apollo2_references() -> None:
    data = find_apollo_state(APOLLO2)
    assert data is not None
    post = State.from_apollo(data).entity("Post", "abc")
    assert post is not None
    creator, preview = post.node("creator"), post.node("previewContent")
    assert creator is not None
    assert creator.str("name") == "Ann"
    assert preview is not None
    assert preview.str("subtitle") == "Sub"


def test_broken_apollo_state_raises_state_error() -> None:
    with pytest.raises(StateError, match="broken JSON"):
        find_apollo_state('<script>window.__APOLLO_STATE__ = {"ROOT_QUERY": {"a": </script>')


def test_document_records_broken_state_instead_of_raising() -> None:
    doc = Document(
        '<html><script>window.__APOLLO_STATE__ = {"a": [1, </script></html>', "https://medium.com/x"
    )
    assert doc.apollo_state is None
    assert any("broken Apollo state" in e for e in doc.errors)


def test_legacy_globals_and_obvinit() -> None:
    globals_page = (
        '<script>var GLOBALS = {"baseUrl":"x","embedded":{"value":{"id":"p1"}}};</script>'
    )
    assert find_legacy_state(globals_page) == {"value": {"id": "p1"}}
    obv = (
        '<script>// <![CDATA[\nwindow["obvInit"] = function (opt_embedded) {}\n'
        '// ]]></script><script>// <![CDATA[\nwindow["obvInit"]({"value":{"id":"p2"},'
        '"references":{}})\n// ]]></script>'
    )
    assert find_legacy_state(obv) == {"value": {"id": "p2"}, "references": {}}
    assert find_legacy_state("<html>no state</html>") is None


def test_escaped_cdata_end_is_read_by_the_fast_way() -> None:
    """A re-serialised page writes the script's ``// ]]>`` as ``// ]]&gt;``: the orjson way
    reads the payload from the bytes (it used to fall back to decoding a text copy)."""
    page = (
        b'<script>// &lt;![CDATA[\nwindow["obvInit"]({"value":{"id":"p3"},"references":{}})'
        b"\n        // ]]&gt;\n</script>"
    )
    assert _legacy_fast(page) == {"value": {"id": "p3"}, "references": {}}
    assert find_legacy_state(None, page) == find_legacy_state(page.decode())


def test_markers_after_an_earlier_mention_of_their_stem_are_found() -> None:
    """The finders look for each marker from its stem's first occurrence on: a stem named
    earlier in the page (a comment, a string) must not hide the marker after it."""
    apollo = (
        b"<html><!-- __APOLLO_STATE__ __APOLLO_STATE__ --><script>x=1</script>"
        b'<script>window.__APOLLO_STATE__ = {"ROOT_QUERY":{}}</script></html>'
    )
    assert find_apollo_state(None, apollo) == {"ROOT_QUERY": {}}
    assert find_apollo_state(apollo.decode()) == {"ROOT_QUERY": {}}
    legacy = (
        b"<html><!-- GLOBALS obvInit --><script>var GLOBALS = "
        b'{"embedded":{"value":{"id":"p4"}}};</script></html>'
    )
    assert find_legacy_state(None, legacy) == {"value": {"id": "p4"}}
    assert find_legacy_state(legacy.decode()) == {"value": {"id": "p4"}}
    assert find_legacy_state(None, b"<html>GLOBALS, obvInit: words only</html>") is None


def test_xssi_guard() -> None:
    assert strip_xssi('])}while(1);</x>{"a":1}') == '{"a":1}'
    assert parse_json_payload('])}while(1);</x>{"success":true}') == {"success": True}
    with pytest.raises(StateError):
        parse_json_payload("])}while(1);</x>{broken")


def test_document_meta_json_ld_and_value_attribute() -> None:
    html = (
        '<html><head><meta property="og:title" content="T">'
        '<meta name="author" value="Someone">'
        '<link rel="canonical" href="https://medium.com/@a/t-0123456789ab">'
        '<script type="application/ld+json"><![CDATA[{"@type":"NewsArticle","headline":"H"}]]>'
        "</script>"
        '<script type="application/ld+json">{"@graph":[{"@type":"BreadcrumbList"}]}</script>'
        "</head><body></body></html>"
    )
    doc = Document(html, "https://medium.com/x")
    assert doc.meta["og:title"] == "T"
    assert doc.meta["author"] == "Someone"
    assert doc.canonical_link == "https://medium.com/@a/t-0123456789ab"
    article, crumbs = doc.json_ld_of("NewsArticle"), doc.json_ld_of("BreadcrumbList")
    assert article is not None
    assert article.raw == {"@type": "NewsArticle", "headline": "H"}
    assert crumbs is not None
    assert crumbs.raw == {"@type": "BreadcrumbList"}


def test_document_survives_empty_and_binary_bodies() -> None:
    empty = Document(b"", "https://medium.com/x")
    assert empty.tree is None
    assert "empty body" in empty.errors
    binary = Document(b"\xff\xfe\x00garbage\x00", "https://medium.com/x")
    assert binary.meta == {}
    assert binary.apollo_state is None


def test_document_classify_uses_declared_custom_domains() -> None:
    html = (
        '<script>window.__APOLLO_STATE__ = {"Collection:c1":{"id":"c1","domain":"wtfeconomy.com"},'
        '"Collection:c2":{"id":"c2","domain":"humanparts.medium.com"}}</script>'
    )
    doc = Document(html, "https://medium.com/tag/x")
    assert doc.medium_domains == frozenset({"wtfeconomy.com"})
    links = PageLinks(doc.url, sorted(doc.medium_domains))  # as the tag parser classifies
    link = links("https://wtfeconomy.com/wtf-whats-the-future-e52ab9515573?source=x")
    assert link is not None
    assert link.key == "e52ab9515573"
    assert links("https://other.com/wtf-whats-the-future-e52ab9515573") is None
