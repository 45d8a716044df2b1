"""The local site's tag archive (``site/day_archive.py``) and its GraphQL-refused mode,
served over HTTP as Medium serves them in 2026."""

from __future__ import annotations

import urllib.error
import urllib.request
from collections.abc import Iterator

import pytest

from tests.archive_facts import payload_of
from topics_crawler.graphql import REQUEST_HEADERS, TimeRange, tag_archive_body
from topics_crawler.items import Story
from topics_crawler.pages import parse_page
from topics_crawler.site.content import default_site
from topics_crawler.site.day_archive import archive_paths, story_days, tagged
from topics_crawler.site.model import SiteContent
from topics_crawler.site.server import SiteServer

TAG = "distributed-training"


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def get(site: SiteServer, path: str) -> tuple[int, str, str]:
    """``(status, body, Location)`` of a GET, redirects not followed."""
    opener = urllib.request.build_opener(NoRedirect)
    try:
        with opener.open(site.url(path), timeout=10) as response:
            return response.status, response.read().decode(), ""
    except urllib.error.HTTPError as error:
        with error:
            return error.code, error.read().decode(), error.headers.get("Location") or ""


@pytest.fixture(scope="module")
def content() -> SiteContent:
    site = default_site().with_archive(TAG, 300)
    site.archive_page_size = 2
    return site


@pytest.fixture(scope="module")
def site(content: SiteContent) -> Iterator[SiteServer]:
    with SiteServer(content) as server:
        yield server


def test_day_pages_list_every_story_of_the_tag_once(site: SiteServer, content: SiteContent) -> None:
    ids: list[str] = []
    for path in archive_paths(content, TAG):
        status, body, _ = get(site, path)
        assert status == 200, path
        if path.count("/") == 6:  # /tag/<t>/archive/YYYY/MM/DD[?page=N]
            payload = payload_of(body)
            ids += [item["postPreview"]["postId"] for item in payload["streamItems"]]
    assert sorted(ids) == sorted(s.id for s in tagged(content, TAG))


def test_a_day_is_split_in_pages_of_the_page_size(site: SiteServer, content: SiteContent) -> None:
    year, month, day = next(d for d in story_days(content, TAG) if d[:2] == (2024, 1))
    path = f"/tag/{TAG}/archive/{year}/{month:02d}/{day:02d}"
    first = payload_of(get(site, path)[1])
    assert len(first["streamItems"]) == 2
    assert first["paging"]["next"] == {"page": 2, "limit": 2}
    second = payload_of(get(site, path + "?page=2")[1])
    assert second["paging"]["previous"] == {"page": 1, "limit": 2}
    assert get(site, path + "?page=9")[0] == 404


def test_a_day_without_stories_redirects_to_its_month(site: SiteServer) -> None:
    status, _, location = get(site, f"/tag/{TAG}/archive/2023/05/17")
    assert (status, location) == (302, f"/tag/{TAG}/archive/2023/05")
    month = payload_of(get(site, location)[1])
    assert month["streamItems"] == []
    assert month["archiveIndex"]["timeBucket"] == {
        "year": "2023", "month": "05", "day": "", "hasStories": False
    }  # fmt: skip
    assert len(month["archiveIndex"]["dailyBuckets"]) == 31


@pytest.mark.parametrize(
    "path",
    [f"/tag/{TAG}/archive/2024/02/30", f"/tag/{TAG}/archive/2024/13", "/tag/nope/archive"],
)
def test_impossible_dates_and_unknown_tags_are_404(site: SiteServer, path: str) -> None:
    assert get(site, path)[0] == 404


def test_the_index_marks_what_has_stories(site: SiteServer, content: SiteContent) -> None:
    index = payload_of(get(site, f"/tag/{TAG}/archive/2024")[1])["archiveIndex"]
    assert [b["year"] for b in index["yearlyBuckets"]] == ["2024", "2025"]
    months = {b["month"]: b["hasStories"] for b in index["monthlyBuckets"]}
    assert months["01"] is True
    assert months["12"] is False
    assert index["dailyBuckets"] == []


def test_archive_posts_carry_what_the_real_page_carries(
    site: SiteServer, content: SiteContent
) -> None:
    year, month, day = story_days(content, TAG)[-1]
    payload = payload_of(get(site, f"/tag/{TAG}/archive/{year}/{month:02d}/{day:02d}")[1])
    post = next(iter(payload["references"]["Post"].values()))
    story = content.stories[post["id"]]
    assert post["mediumUrl"] == ""
    assert post["firstPublishedAt"] == str(int(story.published_at.timestamp() * 1000))
    assert post["virtuals"]["totalClapCount"] == story.claps
    assert post["virtuals"]["recommends"] == story.voters != story.claps
    parsed = parse_page(
        get(site, f"/tag/{TAG}/archive/{year}/{month:02d}/{day:02d}")[1].encode(),
        f"https://medium.com/tag/{TAG}/archive/{year}/{month:02d}/{day:02d}",
    )
    stories = [s for s in parsed.items if isinstance(s, Story)]
    assert stories[0].url == content.story_url(story)
    assert parsed.errors == []


def test_graphql_refused_while_pages_are_served(content: SiteContent) -> None:
    refused = default_site()
    refused.graphql_refused = True
    with SiteServer(refused) as server:
        request = urllib.request.Request(
            server.url("/_/graphql"),
            data=tag_archive_body(TAG, TimeRange.all_time(), "NEWEST"),
            headers=REQUEST_HEADERS,
            method="POST",
        )
        with pytest.raises(urllib.error.HTTPError) as refusal:
            urllib.request.urlopen(request, timeout=10)
        refusal.value.close()
        assert refusal.value.code == 403
        assert get(server, f"/tag/{TAG}")[0] == 200
        assert get(server, f"/tag/{TAG}/archive")[0] == 200
