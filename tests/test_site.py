"""The local Medium-like site: routes, markup contract, access log, content model."""

from __future__ import annotations

import http.client
import json
import time
from collections import deque
from collections.abc import Iterator
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest

from topics_crawler.pages import Document
from topics_crawler.pages.state import State, find_apollo_state
from topics_crawler.site.content import (
    CUSTOM_DOMAIN,
    SiteContent,
    default_site,
    expected_entities,
    reachable,
)
from topics_crawler.site.server import SiteServer
from topics_crawler.urls import classify_url

TAGS = ["distributed-training", "machine-learning"]
VOID_ELEMENTS = {"meta", "link", "img", "br", "hr", "input", "source", "wbr"}


@pytest.fixture(scope="session")
def content() -> SiteContent:
    return default_site()


@pytest.fixture(scope="session")
def site(content: SiteContent) -> Iterator[SiteServer]:
    """One read-only server for the whole session (tests that mutate start their own)."""
    with SiteServer(content) as server:
        yield server


def fetch(server: SiteServer, path: str, method: str = "GET") -> tuple[int, dict[str, str], bytes]:
    """``(status, headers, body)`` without following redirects."""
    connection = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    try:
        connection.request(method, path)
        response = connection.getresponse()
        return response.status, dict(response.getheaders()), response.read()
    finally:
        connection.close()


def page_paths(content: SiteContent) -> dict[str, str]:
    """Local path → canonical URL of every page of the site."""
    pages = {f"/tag/{slug}": tag.url for slug, tag in content.tags.items()}
    pages.update({f"/@{name}": author.url for name, author in content.authors.items()})
    pages.update({pub.path: pub.url for pub in content.publications.values()})
    pages.update({content.story_path(s): content.story_url(s) for s in content.stories.values()})
    return pages


def mirror_path(url: str) -> str:
    """Local path of a canonical URL, the way the crawler's mirror middleware maps it."""
    parts = urlsplit(url)
    if parts.netloc == "medium.com":
        return parts.path or "/"
    return f"/_host/{parts.netloc}{parts.path or '/'}"


class TagBalance(HTMLParser):
    """Records tags closed out of order or left open (a cheap well-formedness check)."""

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.problems: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag not in VOID_ELEMENTS:
            self.stack.append(tag)

    def handle_endtag(self, tag: str) -> None:
        if not self.stack or self.stack[-1] != tag:
            self.problems.append(f"</{tag}> closes {self.stack[-1:] or 'nothing'}")
            return
        self.stack.pop()


# --- routes ------------------------------------------------------------------------


def test_every_page_kind_is_served_with_its_canonical_url(
    site: SiteServer, content: SiteContent
) -> None:
    kinds = {"article": 0, "profile": 0, "website": 0}
    for path, canonical in page_paths(content).items():
        status, headers, body = fetch(site, path)
        assert status == 200, path
        assert headers["Content-Type"] == "text/html; charset=utf-8"
        doc = Document(body, canonical)
        assert doc.canonical_link == canonical, path
        kinds[doc.meta["og:type"]] += 1
    assert kinds == {
        "article": len(content.stories),
        "profile": len(content.authors),
        "website": len(content.tags) + len(content.publications),
    }


def test_robots_txt_is_shaped_like_mediums(site: SiteServer) -> None:
    status, headers, body = fetch(site, "/robots.txt")
    lines = body.decode().splitlines()
    assert status == 200
    assert headers["Content-Type"].startswith("text/plain")
    for rule in ("Disallow: /*/*source=", "Disallow: /m/", "Disallow: /_/", "Allow: /_/graphql"):
        assert rule in lines
    assert not any(line.lower().startswith("crawl-delay") for line in lines)


@pytest.mark.parametrize(
    "path",
    [
        "/tag/no-such-tag",
        "/@nobody",
        "/@varuntej/made-up-story-0123456789ab",
        "/p/0123456789ab",
        "/no-such-publication",
        "/a/b/c",
        "/_host/unknown.example/",
        f"/_host/{CUSTOM_DOMAIN}/a/b",
    ],
)
def test_unknown_paths_are_404(site: SiteServer, path: str) -> None:
    assert fetch(site, path)[0] == 404


def test_post_id_path_redirects_to_the_story(site: SiteServer, content: SiteContent) -> None:
    for story in content.stories.values():
        status, headers, _ = fetch(site, f"/p/{story.id}")
        assert (status, headers["Location"]) == (301, content.story_path(story))


def test_custom_domain_pages_live_under_host_prefix(site: SiteServer, content: SiteContent) -> None:
    publication = content.publications["tensorbeat"]
    status, headers, _ = fetch(site, "/tensorbeat")
    assert (status, headers["Location"]) == (301, f"/_host/{CUSTOM_DOMAIN}/")
    status, _, body = fetch(site, f"/_host/{CUSTOM_DOMAIN}/")
    assert status == 200
    assert Document(body, publication.url).canonical_link == f"https://{CUSTOM_DOMAIN}/"
    story = content.stories_in("tensorbeat")[0]
    assert content.story_path(story) == f"/_host/{CUSTOM_DOMAIN}/{story.unique_slug}"
    assert fetch(site, f"/_host/medium.com/@{story.author}")[0] == 200


def test_query_strings_are_ignored(site: SiteServer, content: SiteContent) -> None:
    story = next(iter(content.stories.values()))
    path = content.story_path(story) + "?source=topic_page---------1----"
    assert fetch(site, path)[0] == 200


def test_head_has_headers_and_no_body(site: SiteServer) -> None:
    get_status, get_headers, get_body = fetch(site, "/tag/machine-learning")
    head_status, head_headers, head_body = fetch(site, "/tag/machine-learning", "HEAD")
    assert (head_status, head_body) == (get_status, b"")
    assert head_headers["Content-Length"] == get_headers["Content-Length"] == str(len(get_body))


# --- access log, mutation, latency -----------------------------------------------------


def test_access_log_counts_requests(tmp_path: Path) -> None:
    log_file = tmp_path / "access.log"
    with SiteServer(default_site(), access_log=log_file) as server:
        fetch(server, "/tag/distributed-training")
        fetch(server, "/tag/distributed-training?source=x")
        fetch(server, "/tag/distributed-training", "HEAD")
        fetch(server, "/nope")
        assert server.count("/tag/distributed-training") == 3
        assert server.count("/tag/distributed-training", method="HEAD") == 1
        assert server.requests[-1] == ("GET", "/nope", 404)
        assert server.url("/tag/x") == f"{server.base_url}/tag/x"
    assert log_file.read_text().splitlines() == [
        "GET /tag/distributed-training 200",
        "GET /tag/distributed-training?source=x 200",
        "HEAD /tag/distributed-training 200",
        "GET /nope 404",
    ]


def test_content_change_shows_in_next_response() -> None:
    content = default_site()
    story = content.stories_by("rishikumar")[0]
    with SiteServer(content) as server:
        before = find_apollo_state(fetch(server, content.story_path(story))[2].decode())
        story.claps += 1000
        after = find_apollo_state(fetch(server, content.story_path(story))[2].decode())
    assert before is not None
    assert after is not None
    key = f"Post:{story.id}"
    assert after[key]["clapCount"] == before[key]["clapCount"] + 1000


def test_latency_delays_responses() -> None:
    with SiteServer(default_site(), latency=0.2) as server:
        started = time.monotonic()
        fetch(server, "/robots.txt")
        assert time.monotonic() - started >= 0.2


def test_server_refuses_base_url_when_stopped() -> None:
    server = SiteServer(default_site())
    with pytest.raises(RuntimeError):
        _ = server.base_url


# --- markup contract -------------------------------------------------------------------


def test_pages_are_balanced_html_with_decodable_state_and_json_ld(
    site: SiteServer, content: SiteContent
) -> None:
    for path, canonical in page_paths(content).items():
        text = fetch(site, path)[2].decode()
        checker = TagBalance()
        checker.feed(text)
        assert not checker.problems, (path, checker.problems[:3])
        assert checker.stack == [], (path, checker.stack)
        assert "https://" not in text[text.index("__APOLLO_STATE__") :].split("</script>")[0]
        state = find_apollo_state(text)
        assert state is not None, path
        assert "ROOT_QUERY" in state, path
        doc = Document(text, canonical)
        assert doc.json_ld, path
        assert not doc.errors, path


def css(doc: Document, selector: str) -> list[Any]:
    """Elements of the page matching a CSS selector (lxml's ``cssselect``)."""
    assert doc.tree is not None
    return list(doc.tree.cssselect(selector))


def test_story_state_follows_markup_contract(site: SiteServer, content: SiteContent) -> None:
    for story in content.stories.values():
        text = fetch(site, content.story_path(story))[2].decode()
        post = State.from_apollo(find_apollo_state(text) or {}).root.node("postResult")
        assert post is not None
        assert post.str("id") == story.id
        assert post.str("mediumUrl") == content.story_url(story)
        creator = post.node("creator")
        assert creator is not None
        assert creator.str("username") == story.author
        assert [t.str("normalizedTagSlug") for t in post.nodes("tags")] == [
            t.slug for t in story.tags
        ]
        body = post.dig("content", "bodyModel")
        assert body is not None
        blocks = body.nodes("paragraphs")
        assert [p.str("text") for p in blocks if p.str("type") == "P"] == story.preview_paragraphs
        shown = [b for b in story.body() if not isinstance(b, str)]
        figures = [p.node("metadata").str("id") for p in blocks if p.str("type") == "IMG"]
        assert figures == [figure.image_id for figure in shown]
        doc = Document(text, content.story_url(story))
        article = doc.json_ld_of("NewsArticle", "SocialMediaPosting")
        assert article is not None
        assert article.str("identifier") == story.id
        assert article.bool("isAccessibleForFree") is (not story.member_only)
        assert doc.meta["al:ios:url"] == f"medium://p/{story.id}"
        assert bool(css(doc, "article.meteredContent")) is story.member_only
        assert len(css(doc, "p.pw-post-body-paragraph")) == len(story.preview_paragraphs)
        assert len(css(doc, "figure img")) == len(shown)


def test_member_only_story_shows_only_its_preview(content: SiteContent) -> None:
    locked = [s for s in content.stories.values() if s.member_only]
    assert locked
    assert all(len(s.preview_paragraphs) < len(s.paragraphs) for s in locked)


def test_tag_page_follows_markup_contract(site: SiteServer, content: SiteContent) -> None:
    tag = content.tags["distributed-training"]
    doc = Document(fetch(site, "/tag/distributed-training")[2], tag.url)
    crumbs = doc.xpath("//nav[@aria-label='Breadcrumb']/a/text()")
    assert crumbs == ["Machine Learning", "Artificial Intelligence", "Distributed Systems"]
    headings = doc.xpath("//section/h2/text()")
    assert headings == [
        "Explore recommended reads, summarized by AI",
        "Popular this week",
        "Selected by Medium",
        "Latest stories",
        "Who to follow",
    ]
    cards = css(doc, "article[data-testid='post-preview']")
    assert len(cards) == sum(len(ids) for ids in tag.sections.values())
    links = [classify_url(a.get("href"), tag.url) for a in cards[0].iter("a")]
    assert {link.kind for link in links if link} == {"story", "author", "publication"}
    locks = css(doc, "button[aria-label='Member-only story']")
    assert len(locks) == sum(
        content.stories[sid].member_only for ids in tag.sections.values() for sid in ids
    )
    tag_node = State.from_apollo(find_apollo_state(doc.text) or {}).root.node("tagFromSlug")
    assert tag_node is not None
    assert tag_node.int("followerCount") == tag.followers
    breadcrumb = doc.json_ld_of("BreadcrumbList")
    assert breadcrumb is not None
    assert breadcrumb.nodes("itemListElement")[-1].str("item") == tag.url


def test_following_links_reaches_what_the_model_says(
    site: SiteServer, content: SiteContent
) -> None:
    """Walk the rendered links like a crawler; the model's ``reachable`` must agree."""
    found: dict[str, set[str]] = {"story": set(), "author": set(), "publication": set()}
    queue = deque(content.tags[slug].url for slug in TAGS)
    seen = set(queue)
    while queue:
        url = queue.popleft()
        status, _, body = fetch(site, mirror_path(url))
        assert status == 200, url
        for href in Document(body, url).xpath("//a/@href"):
            link = classify_url(href, url, custom_domains=[CUSTOM_DOMAIN])
            if link is None or link.kind == "tag" or link.url in seen:
                continue
            seen.add(link.url)
            found[link.kind].add(link.key)
            queue.append(link.url)
    stories, authors, publications = reachable(content, TAGS)
    assert found["story"] == stories
    assert found["author"] == authors
    assert found["publication"] == {"pinterest-engineering", CUSTOM_DOMAIN}
    assert publications == {"pinterest-engineering", "tensorbeat"}


# --- content model ---------------------------------------------------------------------


def test_default_site_has_what_the_brief_needs(content: SiteContent) -> None:
    assert len(content.stories) >= 12
    assert any(s.member_only for s in content.stories.values())
    assert any(p.domain for p in content.publications.values())
    shared = set(content.tags["distributed-training"].sections["Latest stories"]) & set(
        content.tags["machine-learning"].sections["Latest stories"]
    )
    assert shared
    assert all(len(s.id) == 12 and int(s.id, 16) >= 0 for s in content.stories.values())


def test_with_archive_is_deterministic_and_reachable(content: SiteContent) -> None:
    first = content.with_archive("distributed-training", 40, seed=7)
    again = content.with_archive("distributed-training", 40, seed=7)
    other = content.with_archive("distributed-training", 40, seed=8)
    new_ids = set(first.stories) - set(content.stories)
    assert len(new_ids) == 40
    assert [(s.id, s.title, s.author, s.claps) for s in first.stories.values()] == [
        (s.id, s.title, s.author, s.claps) for s in again.stories.values()
    ]
    assert set(other.stories) - set(content.stories) != new_ids
    assert (
        first.tags["distributed-training"].sections == content.tags["distributed-training"].sections
    )
    assert len(content.stories) == 13, "the original site is left unchanged"
    stories, _, _ = reachable(first, ["distributed-training"])
    assert new_ids <= stories


def test_expected_entities_come_from_the_model(content: SiteContent) -> None:
    expected = expected_entities(content, TAGS)
    assert set(expected["tag_pages"]) == set(TAGS)
    assert set(expected["publications"]) == {"pinterest-engineering", "tensorbeat"}
    story = content.stories_by("saurabharora")[0]
    values = expected["stories"][story.id]
    assert values["is_member_only"] is True
    assert values["author_username"] == "saurabharora"
    assert values["published_at"] == "2025-11-22T14:20:00Z"
    sections = expected["tag_pages"]["machine-learning"]["sections"]
    assert list(sections) == [
        "popular_this_week",
        "selected_by_medium",
        "latest_stories",
        "recommended",
    ]
    assert json.loads(json.dumps(expected)) == expected


def test_archive_of_two_thousand_stories_is_served_and_reachable(content: SiteContent) -> None:
    big = content.with_archive("distributed-training", 2000, seed=0)
    stories, authors, _ = reachable(big, ["distributed-training"])
    assert len(stories) + len(authors) >= 2000
    last = big.stories_by(
        big.stories[max(stories, key=lambda s: big.stories[s].published_at)].author
    )
    with SiteServer(big) as server:
        assert fetch(server, big.story_path(last[0]))[0] == 200
        author_page = fetch(server, f"/@{last[0].author}")[2].decode()
    assert all(story.unique_slug in author_page for story in last)
