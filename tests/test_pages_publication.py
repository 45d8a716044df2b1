"""Publication parser: what the fixtures do not show (address forms, collection lookup)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from topics_crawler.items import Publication
from topics_crawler.pages import Document, parse_page
from topics_crawler.pages.publication import PageHome, find_collection, page_home
from topics_crawler.pages.state import State


@pytest.mark.parametrize(
    ("url", "canonical", "home"),
    [
        ("https://medium.com/Cold-Brew?source=x", None, PageHome("cold-brew", None)),
        ("https://humanparts.medium.com/", None, PageHome(None, "humanparts.medium.com")),
        ("https://www.wtfeconomy.com/", None, PageHome(None, "wtfeconomy.com")),
        (
            "http://127.0.0.1:8080/cold-brew",
            "https://medium.com/cold-brew",
            PageHome("cold-brew", None),
        ),
        ("https://medium.com/tag/coffee", None, PageHome(None, None)),
        ("https://medium.com/@sam", None, PageHome(None, None)),
        ("https://medium.com/cold-brew/a-story-0123456789ab", None, PageHome(None, None)),
    ],
)
def test_page_home(url: str, canonical: str | None, home: PageHome) -> None:
    link = f'<link rel="canonical" href="{canonical}">' if canonical else ""
    assert page_home(Document(f"<html><head>{link}</head></html>", url)) == home


def collection(cid: str, slug: str, domain: str | None = None) -> dict[str, Any]:
    return {"__typename": "Collection", "id": cid, "slug": slug, "name": slug, "domain": domain}


def test_collection_found_by_query_argument() -> None:
    state = State.from_apollo(
        {
            "ROOT_QUERY": {
                'collectionByDomainOrSlug({"domainOrSlug":"other"})': {"__ref": "Collection:a"},
                'collectionByDomainOrSlug({"domainOrSlug":"brew.example.org"})': {
                    "__ref": "Collection:b"
                },
            },
            "Collection:a": collection("a", "other"),
            "Collection:b": collection("b", "cold-brew", "brew.example.org"),
        }
    )
    found = find_collection(state, PageHome(None, "brew.example.org"))
    assert found is not None
    assert found.id == "b"


def test_collection_found_by_slug_among_card_collections() -> None:
    state = State.from_apollo(
        {"Collection:a": collection("a", "other"), "Collection:b": collection("b", "brew")}
    )
    found = find_collection(state, PageHome("brew", None))
    assert found is not None
    assert found.id == "b"
    assert find_collection(state, PageHome("nothing", None)) is None


def test_state_wins_over_page_text_and_custom_domain_becomes_the_url() -> None:
    state = {
        "ROOT_QUERY": {
            'collectionByDomainOrSlug({"domainOrSlug":"cold-brew"})': {"__ref": "Collection:9c"}
        },
        "Collection:9c": {
            **collection("9c0ffee12ab3", "cold-brew", "brew.example.org"),
            "name": "Cold Brew",
            "subscriberCount": 3391,
        },
    }
    body = (
        "<html><body><h1>Cold Brew (old name)</h1><p>Tagline</p><span>3.3K followers</span>"
        f"<script>window.__APOLLO_STATE__ = {json.dumps(state)}</script></body></html>"
    )
    result = parse_page(body, "https://medium.com/cold-brew", kind="publication")
    publication = result.items[0]
    assert isinstance(publication, Publication)
    assert (publication.name, publication.url, publication.domain) == (
        "Cold Brew",
        "https://brew.example.org/",
        "brew.example.org",
    )
    assert (publication.followers, publication.followers_raw) == (3391, None)
    assert publication.description == "Tagline"


def test_page_without_publication_data_is_an_error() -> None:
    result = parse_page(
        "<html><body></body></html>", "https://medium.com/cold-brew", kind="publication"
    )
    assert result.items == []
    assert "no publication data found" in result.errors
