"""The default site: the "Distributed Training" tag page of ``seed-tag-page.txt`` and a
smaller "Machine Learning" tag, with their stories, authors and publications.

Titles and author names of the distributed-training cards follow the seed page;
every other value (bios, counts, dates, paragraphs) is made up for the tests.
"""

from __future__ import annotations

from topics_crawler.site.entities import (
    SiteAuthor,
    SiteCluster,
    SitePublication,
    SiteStory,
    SiteTag,
    TopicRef,
    utc,
)
from topics_crawler.site.images import add_figures
from topics_crawler.site.model import SiteContent
from topics_crawler.site.threads import add_threads

DISTRIBUTED_TRAINING = TopicRef("distributed-training", "Distributed Training")
MACHINE_LEARNING = TopicRef("machine-learning", "Machine Learning")
ARTIFICIAL_INTELLIGENCE = TopicRef("artificial-intelligence", "Artificial Intelligence")
DISTRIBUTED_SYSTEMS = TopicRef("distributed-systems", "Distributed Systems")
DEEP_LEARNING = TopicRef("deep-learning", "Deep Learning")
PYTORCH = TopicRef("pytorch", "PyTorch")
GPU = TopicRef("gpu", "GPU")
LLM = TopicRef("llm", "LLM")
MLOPS = TopicRef("mlops", "MLOps")
DATA_SCIENCE = TopicRef("data-science", "Data Science")

#: Publication on a custom domain (served locally under ``/_host/tensorbeat.example/``).
CUSTOM_DOMAIN = "tensorbeat.example"


def default_site() -> SiteContent:
    """A fresh copy of the default site (tests may mutate it freely)."""
    site = SiteContent()
    _add_people(site)
    _add_publications(site)
    for story in _stories():
        site.add_story(story)
    site.add_tag(_distributed_training(site))
    site.add_tag(_machine_learning(site))
    add_threads(site)
    add_figures(site)
    return site


def _add_people(site: SiteContent) -> None:
    people = [
        SiteAuthor("pinterest_engineering", "Pinterest Engineering",
                   "Inventive engineers building the first visual discovery engine.",
                   followers=48_300, following=12, is_member=False),
        SiteAuthor("varuntej", "Varuntej", "ML systems engineer. Collectives, kernels, clusters.",
                   followers=912, following=88, is_member=True),
        SiteAuthor("meetvaddoriya", "Meet Vaddoriya",
                   "Writing about GPUs, memory budgets and the cost of scale.",
                   followers=2_460, following=130, is_member=True),
        SiteAuthor("rishikumar", "Rishi Kumar", "Applied scientist. Large models, small budgets.",
                   followers=15_800, following=41, is_member=False),
        SiteAuthor("pelinbalci", "Pelin Balci", "Data scientist who likes hands-on tutorials.",
                   followers=1_204, following=310, is_member=True),
        SiteAuthor("saurabharora", "Saurabh Arora", "Infrastructure for training at scale.",
                   followers=730, following=55, is_member=False),
        SiteAuthor("samueladeyeye", "Samuel Adeyeye", "Fine-tuning open models in public.",
                   followers=388, following=97, is_member=False),
        SiteAuthor("lenaokafor", "Lena Okafor", "Feature platforms and the people who run them.",
                   followers=6_050, following=203, is_member=True),
        SiteAuthor("tomasruiz", "Tomás Ruiz", "Compilers turned ML engineer.",
                   followers=1_999, following=20, is_member=False),
        SiteAuthor("hannahlindqvist", "Hannah Lindqvist", "",
                   followers=27, following=3, is_member=False),
    ]  # fmt: skip
    for person in people:
        site.add_author(person)


def _add_publications(site: SiteContent) -> None:
    site.add_publication(
        SitePublication(
            "pinterest-engineering",
            "Pinterest Engineering Blog",
            "Inventive engineers building the first visual discovery engine.",
            followers=52_100,
        )
    )
    site.add_publication(
        SitePublication(
            "tensorbeat",
            "Tensorbeat",
            "Field notes from teams that train and ship models.",
            followers=3_420,
            domain=CUSTOM_DOMAIN,
        )
    )


def _stories() -> list[SiteStory]:
    return [
        SiteStory(
            "achieving-near-linear-training-scalability-for-pinterests-foundation-models",
            "Achieving Near-Linear Training Scalability for Pinterest’s Foundation Models",
            "How we kept every GPU busy while the model and the cluster grew",
            "pinterest_engineering", utc(2025, 10, 28, 16, 5),
            [
                "Our foundation models outgrew a single host last year.",
                "We describe the sharding plan, the input pipeline and the collective schedule.",
                "Overlapping communication with compute recovered most of the lost throughput.",
                "The result is close to linear scaling up to several hundred accelerators.",
            ],
            publication="pinterest-engineering", updated_at=utc(2025, 10, 30, 8, 0),
            claps=1_240, voters=301, responses=14,
            tags=[DISTRIBUTED_TRAINING, MACHINE_LEARNING, DEEP_LEARNING],
        ),
        SiteStory(
            "why-all-reduce-is-reduce-scatter-plus-all-gather",
            "Why All-Reduce is Reduce-Scatter + All-Gather? and Why is the Cost 2(N-1), "
            "Not (N-1)??",
            "A step-by-step walk through the ring algorithm",
            "varuntej", utc(2025, 11, 2, 7, 30),
            [
                "Every data-parallel step ends with an all-reduce of the gradients.",
                "Split it in two phases and the factor of two stops being a mystery.",
                "Each phase moves N-1 chunks per worker, so the total is 2(N-1).",
            ],
            claps=486, voters=97, responses=6, tags=[DISTRIBUTED_TRAINING, DISTRIBUTED_SYSTEMS],
        ),
        SiteStory(
            "why-one-gpu-isnt-enough-the-memory-math-of-giant-ai-models",
            "Why One GPU Isn’t Enough: The Memory Math of Giant AI Models",
            "Weights, gradients, optimizer states and activations, added up",
            "meetvaddoriya", utc(2025, 11, 25, 12, 0),
            [
                "A seven billion parameter model needs far more memory than its weights.",
                "Adam keeps two extra values per parameter, in full precision.",
                "Activations grow with batch size and sequence length.",
                "Add it up and the case for sharding makes itself.",
            ],
            claps=3_150, voters=644, responses=41,
            tags=[DISTRIBUTED_TRAINING, GPU, MACHINE_LEARNING],
        ),
        SiteStory(
            "how-are-large-language-models-trained-at-scale",
            "How Are Large Language Models Trained at Scale?",
            "Data, tensor, pipeline and expert parallelism in one picture",
            "rishikumar", utc(2025, 11, 19, 10, 15),
            [
                "Training a large language model is mostly a scheduling problem.",
                "Each form of parallelism trades memory for communication.",
                "Real systems combine three or four of them at once.",
            ],
            updated_at=utc(2025, 11, 21, 9, 40), claps=12_600, voters=2_210, responses=187,
            tags=[LLM, DISTRIBUTED_TRAINING, MACHINE_LEARNING],
        ),
        SiteStory(
            "hands-on-distributed-training-from-single-gpu-to-multi-gpu-with-lightning-ai",
            "Hands-On Distributed Training: From Single GPU to Multi-GPU with Lightning.ai",
            "A small training script, moved from one device to four",
            "pelinbalci", utc(2025, 8, 3, 18, 45),
            [
                "We start from a plain training loop on one GPU.",
                "Two changes to the trainer configuration are enough for four GPUs.",
                "Watch the effective batch size and the learning rate when you scale.",
            ],
            claps=212, voters=58, responses=3, tags=[DISTRIBUTED_TRAINING, PYTORCH],
        ),
        SiteStory(
            "train-infer-serve-and-how-to-know-when-you-actually-need-distribution",
            "Train, Infer, Serve: And How to Know When You Actually Need Distribution",
            "A checklist before you rent a cluster",
            "meetvaddoriya", utc(2025, 11, 27, 6, 10),
            [
                "Most models in production never need more than one machine.",
                "Measure memory headroom and step time before reaching for more.",
                "Serving has different limits than training; treat them apart.",
            ],
            claps=57, voters=19, responses=0, tags=[DISTRIBUTED_TRAINING, MLOPS],
        ),
        SiteStory(
            "distributed-training-data-tensor-and-pipeline-parallelism",
            "Distributed Training: Data, Tensor and Pipeline Parallelism",
            "Three ways to split the work, and when each one pays off",
            "saurabharora", utc(2025, 11, 22, 14, 20),
            [
                "Data parallelism copies the model and splits the batch.",
                "Tensor parallelism splits single layers across devices.",
                "Pipeline parallelism splits the stack of layers into stages.",
                "Bubbles in the pipeline are the price of that last split.",
            ],
            claps=1_020, voters=250, responses=9, tags=[DISTRIBUTED_TRAINING, DEEP_LEARNING],
            member_only=True,
        ),
        SiteStory(
            "inside-a-live-35b-moe-fine-tune",
            "Inside a Live 35B MoE Fine-Tune: What Qwen3.5–35B-A3B Training Logs Really Tell You",
            "Reading loss curves, router statistics and throughput in real time",
            "samueladeyeye", utc(2025, 11, 16, 21, 0),
            [
                "Mixture-of-experts runs log more than a loss curve.",
                "Router load balance tells you early when experts collapse.",
                "Tokens per second per GPU is the number that pays the bill.",
            ],
            claps=8, voters=4, responses=1, tags=[DISTRIBUTED_TRAINING, LLM],
        ),
        SiteStory(
            "feature-stores-without-the-hype",
            "Feature Stores Without the Hype",
            "What a feature platform must do, and what it need not",
            "lenaokafor", utc(2025, 7, 14, 11, 0),
            [
                "A feature store is a cache with a contract.",
                "Point-in-time correctness matters more than the serving latency.",
                "Start with one offline table and one online key-value store.",
            ],
            publication="tensorbeat", claps=4_480, voters=930, responses=52,
            tags=[MACHINE_LEARNING, MLOPS], member_only=True,
        ),
        SiteStory(
            "gradient-checkpointing-explained-with-a-whiteboard",
            "Gradient Checkpointing, Explained with a Whiteboard",
            "Trading compute for memory, one layer at a time",
            "tomasruiz", utc(2025, 10, 2, 9, 30),
            [
                "Backpropagation needs the activations of every layer.",
                "Keep only some of them and recompute the rest when needed.",
                "The square-root rule gives a good first choice of checkpoints.",
            ],
            publication="tensorbeat", claps=730, voters=160, responses=12,
            tags=[MACHINE_LEARNING, DEEP_LEARNING, GPU],
        ),
        SiteStory(
            "what-your-validation-curve-is-trying-to-tell-you",
            "What Your Validation Curve Is Trying to Tell You",
            "Overfitting, leakage and the flat line that means a bug",
            "hannahlindqvist", utc(2025, 11, 28, 8, 0),
            [
                "A validation curve that beats the training curve is a warning.",
                "Check the split before you tune anything else.",
            ],
            claps=0, voters=0, responses=0, tags=[MACHINE_LEARNING, DATA_SCIENCE],
        ),
        SiteStory(
            "a-practical-guide-to-mixed-precision-training",
            "A Practical Guide to Mixed Precision Training",
            "bf16, fp16 and loss scaling without surprises",
            "varuntej", utc(2025, 6, 9, 13, 0),
            [
                "Half precision halves memory traffic for most of the network.",
                "Loss scaling keeps small gradients from vanishing in fp16.",
                "bf16 keeps the exponent range and usually needs no scaling.",
            ],
            claps=2_049, voters=420, responses=17, tags=[MACHINE_LEARNING, GPU, PYTORCH],
        ),
        SiteStory(
            "scaling-ads-ranking-models-at-pinterest",
            "Scaling Ads Ranking Models at Pinterest",
            "From hand-tuned features to a shared sequence model",
            "pinterest_engineering", utc(2025, 5, 22, 17, 30),
            [
                "Ads ranking at Pinterest runs many models over one request.",
                "A shared user sequence model replaced a dozen feature pipelines.",
                "Serving cost was the constraint that shaped the design.",
            ],
            publication="pinterest-engineering", claps=980, voters=210, responses=5,
            tags=[MACHINE_LEARNING],
        ),
    ]  # fmt: skip


def _ids(site: SiteContent, *slugs: str) -> list[str]:
    by_slug = {story.slug: story.id for story in site.stories.values()}
    return [by_slug[slug] for slug in slugs]


def _distributed_training(site: SiteContent) -> SiteTag:
    popular = _ids(
        site,
        "achieving-near-linear-training-scalability-for-pinterests-foundation-models",
        "why-all-reduce-is-reduce-scatter-plus-all-gather",
        "why-one-gpu-isnt-enough-the-memory-math-of-giant-ai-models",
        "how-are-large-language-models-trained-at-scale",
        "hands-on-distributed-training-from-single-gpu-to-multi-gpu-with-lightning-ai",
    )
    latest = _ids(
        site,
        "train-infer-serve-and-how-to-know-when-you-actually-need-distribution",
        "why-one-gpu-isnt-enough-the-memory-math-of-giant-ai-models",
        "distributed-training-data-tensor-and-pipeline-parallelism",
        "how-are-large-language-models-trained-at-scale",
        "inside-a-live-35b-moe-fine-tune",
    )
    return SiteTag(
        DISTRIBUTED_TRAINING.slug,
        DISTRIBUTED_TRAINING.name,
        followers=12_400,
        story_count=1_870,
        parents=[MACHINE_LEARNING, ARTIFICIAL_INTELLIGENCE, DISTRIBUTED_SYSTEMS],
        clusters=[
            SiteCluster(
                "Implementation and Infrastructure",
                "Technical approaches to building, scaling, and troubleshooting distributed "
                "training systems in production.",
                [TopicRef("distributed-training-systems", "Distributed Training Systems")],
            )
        ],
        sections={
            "Popular this week": popular,
            "Selected by Medium": popular[:1],
            "Latest stories": latest,
        },
        who_to_follow=[
            ("publication", "pinterest-engineering"),
            ("author", "meetvaddoriya"),
            ("author", "rishikumar"),
        ],
        related=[DEEP_LEARNING, PYTORCH, GPU, MACHINE_LEARNING],
    )


def _machine_learning(site: SiteContent) -> SiteTag:
    return SiteTag(
        MACHINE_LEARNING.slug,
        MACHINE_LEARNING.name,
        followers=1_340_000,
        story_count=412_000,
        description="The science of getting computers to learn from data.",
        parents=[ARTIFICIAL_INTELLIGENCE],
        clusters=[
            SiteCluster(
                "Training and Optimization",
                "How models learn: losses, optimizers, precision and memory.",
                [
                    TopicRef("model-training", "Model Training"),
                    TopicRef("optimization", "Optimization"),
                ],
            ),
            SiteCluster(
                "Machine Learning in Production",
                "Serving, monitoring and the platforms around models.",
                [MLOPS, TopicRef("feature-engineering", "Feature Engineering")],
            ),
        ],
        sections={
            "Popular this week": _ids(
                site,
                "feature-stores-without-the-hype",
                "how-are-large-language-models-trained-at-scale",
                "gradient-checkpointing-explained-with-a-whiteboard",
                "scaling-ads-ranking-models-at-pinterest",
            ),
            "Selected by Medium": _ids(site, "what-your-validation-curve-is-trying-to-tell-you"),
            "Latest stories": _ids(
                site,
                "what-your-validation-curve-is-trying-to-tell-you",
                "why-one-gpu-isnt-enough-the-memory-math-of-giant-ai-models",
                "gradient-checkpointing-explained-with-a-whiteboard",
                "feature-stores-without-the-hype",
                "a-practical-guide-to-mixed-precision-training",
            ),
            "Recommended stories": _ids(
                site, "achieving-near-linear-training-scalability-for-pinterests-foundation-models"
            ),
        },
        who_to_follow=[
            ("publication", "tensorbeat"),
            ("author", "hannahlindqvist"),
            ("author", "varuntej"),
        ],
        related=[DEEP_LEARNING, DATA_SCIENCE, ARTIFICIAL_INTELLIGENCE, DISTRIBUTED_TRAINING],
    )
