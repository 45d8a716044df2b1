"""The default site with a related-tag graph four hops deep, with cycles and a missing tag.

Related tags, in page order (``*`` the tag has no page: a 404)::

    distributed-training → deep-learning, pytorch, gpu*, machine-learning      (the seed)
    deep-learning        → machine-learning, transformers                      (hop 1)
    pytorch              → deep-learning, gpu*                                 (hop 1)
    machine-learning     → deep-learning, data-science, artificial-intelligence,
                           distributed-training                                (hop 1)
    transformers         → deep-learning                                       (hop 2)
    data-science         → statistics, machine-learning                        (hop 2)
    artificial-intelligence → machine-learning, deep-learning                  (hop 2)
    statistics           → probability*                                        (hop 3)

Machine learning points back at the seed and deep learning ↔ machine learning is a
cycle; :data:`BREADTH_FIRST` is the order a breadth-first walk requests them in.
Stories, authors and publications are the default site's; only tags are added or changed.
"""

from __future__ import annotations

from topics_crawler.site.entities import SiteTag, TopicRef
from topics_crawler.site.model import SiteContent
from topics_crawler.site.seed import (
    ARTIFICIAL_INTELLIGENCE,
    DATA_SCIENCE,
    DEEP_LEARNING,
    DISTRIBUTED_TRAINING,
    MACHINE_LEARNING,
    PYTORCH,
    default_site,
)

TRANSFORMERS = TopicRef("transformers", "Transformers")
STATISTICS = TopicRef("statistics", "Statistics")
PROBABILITY = TopicRef("probability", "Probability")
GPU = TopicRef("gpu", "GPU")

#: ``(tag, depth)`` in the order a breadth-first walk from the seed requests them.
BREADTH_FIRST = (
    ("distributed-training", 0),
    ("deep-learning", 1),
    ("pytorch", 1),
    ("gpu", 1),
    ("machine-learning", 1),
    ("transformers", 2),
    ("data-science", 2),
    ("artificial-intelligence", 2),
    ("statistics", 3),
)
#: Tags of the walk with no page on the site.
MISSING = frozenset({"gpu", "probability"})
SEED = DISTRIBUTED_TRAINING.slug


def topic_graph_site() -> SiteContent:
    """A fresh default site with the related-tag graph of this module."""
    site = default_site()
    ids = list(site.stories)
    site.tags[MACHINE_LEARNING.slug].related = [
        DEEP_LEARNING, DATA_SCIENCE, ARTIFICIAL_INTELLIGENCE, DISTRIBUTED_TRAINING,
    ]  # fmt: skip
    site.tags[DISTRIBUTED_TRAINING.slug].related = [DEEP_LEARNING, PYTORCH, GPU, MACHINE_LEARNING]
    graph = {
        DEEP_LEARNING: [MACHINE_LEARNING, TRANSFORMERS],
        PYTORCH: [DEEP_LEARNING, GPU],
        TRANSFORMERS: [DEEP_LEARNING],
        DATA_SCIENCE: [STATISTICS, MACHINE_LEARNING],
        ARTIFICIAL_INTELLIGENCE: [MACHINE_LEARNING, DEEP_LEARNING],
        STATISTICS: [PROBABILITY],
    }
    for index, (topic, related) in enumerate(graph.items()):
        site.add_tag(
            SiteTag(
                topic.slug,
                topic.name,
                followers=20_000 + index,
                story_count=3_000 + index,
                parents=[MACHINE_LEARNING] if topic != MACHINE_LEARNING else [],
                sections={"Popular this week": ids[index : index + 2]},
                related=related,
                who_to_follow=[("author", "meetvaddoriya")],  # all over HTTP: no browser
            )
        )
    return site
