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
