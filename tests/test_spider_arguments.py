"""Spider arguments: parsed once, bad ones refused with one clear line and exit status 2."""

from __future__ import annotations

import pytest

from tests.in_process import python_m
from topics_crawler.spiders._argument_values import SpiderArgumentError
from topics_crawler.spiders._arguments import CrawlOptions
from topics_crawler.spiders.topics import TopicsSpider


def test_tags_and_start_urls_combine_in_order() -> None:
    options = CrawlOptions.from_arguments(
        tags="distributed-training, Machine-Learning",
        start_urls="https://medium.com/tag/llm?source=x",
    )
    assert options.tag_urls == {
        "distributed-training": "https://medium.com/tag/distributed-training",
        "machine-learning": "https://medium.com/tag/machine-learning",
        "llm": "https://medium.com/tag/llm",
    }
    assert options.max_stories is None
    assert options.follow == {"stories", "authors", "publications"}


def test_responses_default_to_none_and_take_a_count() -> None:
    assert CrawlOptions.from_arguments(tags="ai").responses == 0
    assert CrawlOptions.from_arguments(tags="ai", responses="25").responses == 25
    assert CrawlOptions.from_arguments(tags="ai", responses="0").responses == 0


def test_follow_and_max_stories() -> None:
    options = CrawlOptions.from_arguments(tags="ai", max_stories="25", follow="stories")
    assert options.max_stories == 25
    assert options.follow == {"stories"}
    assert CrawlOptions.from_arguments(tags="ai", follow="none").follow == frozenset()


def test_follow_and_cards_name_the_exported_types() -> None:
    default = CrawlOptions.from_arguments(tags="ai")
    assert (default.cards, default.item_types) == (
        frozenset(),
        {"tag_page", "tag_edge", "story", "tag_story", "author", "publication"},
    )
    assert CrawlOptions.from_arguments(tags="ai", follow="none").item_types == {
        "tag_page", "tag_edge"
    }  # fmt: skip
    options = CrawlOptions.from_arguments(tags="ai", follow="authors", cards="stories")
    assert (options.cards, options.item_types) == (
        {"stories"}, {"tag_page", "tag_edge", "story", "tag_story", "author"}
    )  # fmt: skip
    with_responses = CrawlOptions.from_arguments(tags="ai", follow="stories", responses="3")
    assert "response" in with_responses.item_types
    assert (
        "response"
        not in CrawlOptions.from_arguments(
            tags="ai", follow="none", cards="stories", responses="3"
        ).item_types
    )


def test_topic_graph_and_archive_arguments() -> None:
    assert (CrawlOptions.from_arguments(tags="ai").related_depth, CrawlOptions.from_arguments(
        tags="ai").max_tags) == (0, None)  # fmt: skip
    options = CrawlOptions.from_arguments(tags="ai,llm", related_depth="2", max_tags="2")
    assert (options.related_depth, options.max_tags) == (2, 2)  # the seeds count
    assert CrawlOptions.from_arguments(tags="ai").author_stories == 0
    assert CrawlOptions.from_arguments(tags="ai", author_stories="40").author_stories == 40
    spider = TopicsSpider(tags="ai", related_depth="1", _job="abc123")
    assert spider.arguments == {"tags": "ai", "related_depth": "1"}


def test_scrapyds_own_arguments_are_left_alone() -> None:
    """Scrapyd passes ``_job`` always and ``_version`` when the job names one (scrapyd's
    launcher turns every field of the schedule request but its own into ``-a``)."""
    spider = TopicsSpider(tags="ai", _job="abc123", _version="r1")
    assert spider.options.tag_urls == {"ai": "https://medium.com/tag/ai"}
    assert spider.arguments == {"tags": "ai"}


@pytest.mark.parametrize(
    ("arguments", "line"),
    [
        ({"max_storys": "2"}, "unknown argument max_storys: did you mean max_stories?"),
        ({"Tags": "llm"}, "unknown argument Tags: did you mean tags?"),
        ({"histroy": "newest"}, "unknown argument histroy: did you mean history?"),
        (
            {"colour": "blue"},
            "unknown argument colour (the arguments: access, author_stories, cards, follow, "
            "history, max_stories, max_tags, related_depth, responses, since, source, start_urls, "
            "tags, until)",
        ),
        (
            {"max_story": "2", "colour": "blue"},
            "unknown arguments colour; max_story: did you mean max_stories? (the arguments: ",
        ),
    ],
)
def test_an_unknown_argument_is_refused_with_the_closest_name(
    arguments: dict[str, str], line: str
) -> None:
    with pytest.raises(SpiderArgumentError) as refused:
        TopicsSpider.check_arguments(tags="ai", **arguments)
    assert str(refused.value).startswith(line)
    with pytest.raises(SpiderArgumentError):  # a crawl started another way refuses it too
        TopicsSpider(tags="ai", **arguments)


@pytest.mark.parametrize(
    ("tags", "meant"),
    [
        ("Machine Learning", "machine-learning"),
        ("ai,Deep  Learning", "deep-learning"),
        ("Not A Slug!", "not-a-slug"),
    ],
)
def test_a_tag_with_a_space_is_refused_with_the_slug_it_probably_meant(
    tags: str, meant: str
) -> None:
    with pytest.raises(SpiderArgumentError) as refused:
        CrawlOptions.from_arguments(tags=tags)
    assert f"has a space, a tag slug has none: did you mean {meant}?" in str(refused.value)
    assert "separate tags with commas" in str(refused.value)


def test_tags_are_separated_by_commas_with_spaces_around_them() -> None:
    options = CrawlOptions.from_arguments(tags=" ai , machine-learning,llm ")
    assert list(options.tag_urls) == ["ai", "machine-learning", "llm"]


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        ({}, "give at least one tag"),
        ({"tags": "Not-A-Slug!"}, "is not a tag slug"),
        ({"start_urls": "https://example.com/tag/ai"}, "is not a Medium tag page URL"),
        ({"start_urls": "https://medium.com/@ev"}, "is not a Medium tag page URL"),
        ({"tags": "ai", "max_stories": "ten"}, "is not a whole number"),
        ({"tags": "ai", "max_stories": "0"}, "must be 1 or more"),
        ({"tags": "ai", "max_stories": "-3"}, "must be 1 or more"),
        ({"tags": "ai", "follow": "stories,comments"}, "unknown value"),
        ({"tags": "ai", "responses": "some"}, "responses: 'some' is not a whole number"),
        ({"tags": "ai", "responses": "-1"}, "responses: must be 0 to 1000"),
        ({"tags": "ai", "responses": "5000"}, "responses: must be 0 to 1000"),
        ({"tags": "ai", "related_depth": "deep"}, "related_depth: 'deep' is not a whole number"),
        ({"tags": "ai", "related_depth": "-1"}, "related_depth: must be 0 to 10"),
        ({"tags": "ai", "related_depth": "11"}, "related_depth: must be 0 to 10"),
        ({"tags": "ai", "related_depth": "1", "source": "feed"}, "drop -a source=feed"),
        ({"tags": "ai", "max_tags": "5"}, "max_tags: only applies with -a related_depth"),
        ({"tags": "ai", "related_depth": "1", "max_tags": "0"}, "max_tags: must be 1 to"),
        ({"tags": "ai,llm,gpu", "related_depth": "1", "max_tags": "2"}, "fewer than the 3"),
        ({"tags": "ai", "author_stories": "all"}, "author_stories: 'all' is not a whole"),
        ({"tags": "ai", "author_stories": "-5"}, "author_stories: must be 0 to"),
        ({"tags": "ai", "follow": "none", "cards": "comments"}, "cards: unknown value"),
        ({"tags": "ai", "cards": "stories"}, "cards: stories followed already"),
        ({"tags": "ai", "follow": "stories", "cards": "stories,authors"}, "stories followed"),
        ({"tags": "ai", "source": "feed", "follow": "authors"}, "source=feed lists stories"),
    ],
)
def test_bad_arguments(arguments: dict[str, str], message: str) -> None:
    with pytest.raises(SpiderArgumentError, match=message):
        TopicsSpider.check_arguments(**arguments)


@pytest.mark.parametrize(
    "arguments",
    [
        ["-a", "max_stories=0", "-a", "tags=ai"],
        ["-a", "tags=ai", "-a", "follow=bogus"],
        ["-a", "tags=ai", "-a", "responses=lots"],
        ["-a", "tags=ai", "-a", "related_depth=1", "-a", "max_tags=none"],
        ["-a", "tags=ai", "-a", "max_storys=2"],
        ["-a", "tags=Machine Learning"],
        [],
    ],
)
def test_scrapy_crawl_exits_2_with_one_line(arguments: list[str]) -> None:
    process = python_m("scrapy", "crawl", "topics", *arguments)
    assert process.returncode == 2
    assert process.stdout == ""
    errors = process.stderr.splitlines()  # no start-up banner, no traceback: the error alone
    assert len(errors) == 1, process.stderr
    assert errors[0].startswith("scrapy crawl topics: error: ")
