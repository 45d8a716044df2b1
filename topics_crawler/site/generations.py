"""The default site plus one tag page of each generation the tag parser reads.

* ``pytorch`` — a 2022 page: state only (``tagFeed`` and friends), no cards in the DOM;
* ``deep-learning`` — today's page as ``seed-tag-page.txt`` shows it, in a markup variant
  (``aria-label="breadcrumb"`` in lower case, no ``data-testid`` hooks) with sub-topic
  clusters that list their own stories;
* ``gpu``, ``llm``, ``mlops`` — today's pages after a redesign the parser does not know
  (the cards' story links are gone): what the drift alarm must notice.

Stories, authors and publications are the default site's; only tags are added.
"""

from __future__ import annotations

from topics_crawler.site.entities import SiteCluster, SiteTag, TopicRef
from topics_crawler.site.model import SiteContent
from topics_crawler.site.seed import (
    ARTIFICIAL_INTELLIGENCE,
    DATA_SCIENCE,
    DEEP_LEARNING,
    GPU,
    LLM,
    MACHINE_LEARNING,
    MLOPS,
    PYTORCH,
    default_site,
)

CHANGED_TAGS = (GPU, LLM, MLOPS)


def generations_site() -> SiteContent:
    """A fresh default site with the generation tags added."""
    site = default_site()
    ids = list(site.stories)
    site.add_tag(
        SiteTag(
            PYTORCH.slug,
            PYTORCH.name,
            story_count=38_412,
            sections={"Trending": ids[2:9]},
            related=[DEEP_LEARNING, MACHINE_LEARNING, GPU],
            generation="2022",
            writers=4_210,
            top_writers=["varuntej", "rishikumar", "lenaokafor"],
        )
    )
    site.add_tag(
        SiteTag(
            DEEP_LEARNING.slug,
            DEEP_LEARNING.name,
            followers=902_000,
            story_count=118_000,
            parents=[ARTIFICIAL_INTELLIGENCE, MACHINE_LEARNING],
            clusters=[
                SiteCluster(
                    "Training at Scale",
                    "Parallelism, memory and the hardware under large models.",
                    [TopicRef("model-parallelism", "Model Parallelism"), GPU],
                    stories=ids[0:2],
                ),
                SiteCluster(
                    "Architectures",
                    "Transformers, mixtures of experts and what comes after.",
                    [TopicRef("transformers", "Transformers")],
                    stories=[ids[3]],
                ),
            ],
            sections={
                "Popular this week": [ids[4], ids[0], ids[5]],
                "Selected by Medium": [ids[6]],
                "Latest stories": ids[7:12],
            },
            who_to_follow=[("author", "saurabharora"), ("publication", "pinterest-engineering")],
            related=[MACHINE_LEARNING, PYTORCH, DATA_SCIENCE],
            lowercase_breadcrumb=True,
        )
    )
    for index, topic in enumerate(CHANGED_TAGS):
        site.add_tag(
            SiteTag(
                topic.slug,
                topic.name,
                followers=10_000 + index,
                story_count=5_000 + index,
                parents=[MACHINE_LEARNING],
                sections={"Popular this week": ids[index : index + 3], "Latest stories": ids[-3:]},
                generation="changed",
            )
        )
    return site
