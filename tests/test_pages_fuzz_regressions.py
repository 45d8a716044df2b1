"""Inputs fuzzing found that crashed a parser: each now gives an item and no crash."""

from __future__ import annotations

import json

from topics_crawler.items import Story
from topics_crawler.pages import PageResult, parse_page

STORY_URL = "https://medium.com/the-delta/salt-and-silt-0f1e2d3c4b5a"


def assert_parsed(result: PageResult) -> None:
    assert not [e for e in result.errors if e.startswith("parser crashed")], result.errors
    assert result.items_of("story")


def story_tags(result: PageResult) -> list[str]:
    story = result.items_of("story")[0]
    assert isinstance(story, Story)
    return story.tags


def test_canonical_link_with_a_broken_ipv6_host() -> None:
    page = (
        '<html><head><link rel="canonical" href="https://[medium.com/x-0f1e2d3c4b5a">'
        "<title>Salt and silt</title></head><body><article><h1>Salt and silt</h1>"
        "<p>Text.</p></article></body></html>"
    )
    assert_parsed(parse_page(page.encode(), STORY_URL, kind="story"))


def test_apollo_post_whose_tags_are_a_number() -> None:
    state = {
        "Post:0f1e2d3c4b5a": {"__typename": "Post", "id": "0f1e2d3c4b5a", "title": "T", "tags": 1.5}
    }
    page = (
        f"<html><head><script>window.__APOLLO_STATE__ = {json.dumps(state)}</script></head></html>"
    )
    result = parse_page(page.encode(), STORY_URL, kind="story")
    assert_parsed(result)
    assert story_tags(result) == []


def test_legacy_json_post_whose_tags_are_a_number() -> None:
    post = {"id": "0f1e2d3c4b5a", "title": "T", "virtuals": {"tags": 1.5}}
    body = "])}while(1);</x>" + json.dumps({"success": True, "payload": {"value": post}})
    result = parse_page(body.encode(), STORY_URL + "?format=json", kind="json")
    assert_parsed(result)
    assert story_tags(result) == []


def test_feed_whose_channel_link_is_a_broken_ipv6_url() -> None:
    feed = (
        '<?xml version="1.0"?><rss version="2.0"><channel><title>Stories by Ann on Medium</title>'
        "<link>https://[medium.com/@ann?source=rss-0123456789ab------2</link>"
        "<item><title>Salt</title><link>https://medium.com/@ann/salt-0f1e2d3c4b5a</link>"
        '<guid isPermaLink="false">https://medium.com/p/0f1e2d3c4b5a</guid>'
        '<description><![CDATA[<div class="medium-feed-item"><div class="medium-feed-image">'
        '<img src="http://[::1/x.png"></div></div>]]></description></item></channel></rss>'
    )
    result = parse_page(feed.encode(), "https://medium.com/feed/@ann", kind="feed")
    assert_parsed(result)


def test_json_ld_nested_too_deeply_is_a_recorded_error() -> None:
    page = (
        '<html><head><script type="application/ld+json">' + "[" * 100_000 + "</script>"
        '<meta property="og:title" content="Salt and silt"></head><body></body></html>'
    )
    result = parse_page(page.encode(), STORY_URL, kind="story")
    assert_parsed(result)
    assert "broken JSON-LD" in result.errors


def test_app_link_with_a_broken_ipv6_url() -> None:
    page = (
        '<html><head><meta property="al:ios:url" content="medium://[p/0f1e2d3c4b5a">'
        "<title>Salt and silt</title></head><body><article><h1>Salt and silt</h1>"
        "<p>Text.</p></article></body></html>"
    )
    assert_parsed(parse_page(page.encode(), STORY_URL, kind="story"))


def test_follower_label_inside_huge_nested_containers_is_still_found() -> None:
    """A page of many nested containers around a huge text used to clean every container's
    whole text (quadratic: a mutated profile took 44 s); containers are skipped by length."""
    filler = "word " * 50_000
    page = (
        '<html><head><meta property="og:type" content="profile">'
        '<meta property="profile:username" content="ann">'
        '<meta property="og:title" content="Ann – Medium"></head>'
        "<body>" + "<div>" * 200 + f"<p>{filler}</p><span>12K followers</span>"
        + "</div>" * 200 + "</body></html>"
    )  # fmt: skip
    result = parse_page(page.encode(), "https://medium.com/@ann", kind="author")
    author = result.items_of("author")[0]
    assert getattr(author, "followers", None) == 12_000
