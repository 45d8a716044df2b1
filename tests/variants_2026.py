"""Our own pages in the shape of the 2026 captures: variants, not copies.

``../shared/medium-pages/tag_python__2scraper-2026-trimmed.html`` (a tag page) and what the
same public source measured about publication homes and cross-posts are the evidence
(``STRUCTURE.md``, "2026"). Each case here is built from data of its own — other tags,
ids, names, counts, dates, URLs — and in the same key forms: ``relatedTags`` as ``Tag``
references with and without entities, aliased ``tagFeed:<alias>(…)`` keys (both argument
forms), ``Tag.posts:{"sortOrder":…}`` listings naming posts the state does not hold,
``Tag.seoMetaTags.jsonLd`` postings (cross-posts off Medium among them), 2026 cards,
"Who to follow" names as headings in their links; a publication home whose posts are
``{__typename, id}`` stubs; a cross-posted story whose ``rel=canonical`` is off Medium.
The state's keys are shuffled (seeded) so no reader depends on their order.

    python -m tests.variants_2026        # rewrite the inputs; then ``make fixtures``
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass, field
from datetime import datetime
from html import escape
from pathlib import Path
from typing import Any

from tests.fixture_cases import FIXTURES

#: The frozen fetch time of every case (relative card dates are read against it).
SCRAPED_AT = "2026-09-16T12:00:00Z"
Entity = dict[str, Any]


@dataclass
class Writer:
    user_id: str
    username: str
    name: str
    image_id: str
    subdomain: bool = False

    @property
    def url(self) -> str:
        return f"https://medium.com/@{self.username}"


@dataclass
class Pub:
    collection_id: str
    slug: str
    name: str
    domain: str | None = None

    @property
    def url(self) -> str:
        return f"https://{self.domain}" if self.domain else f"https://medium.com/{self.slug}"


@dataclass
class Post:
    post_id: str
    title: str
    slug: str
    writer: Writer
    published: str  # ISO, UTC
    updated: str
    claps: int
    responses: int
    locked: bool
    tags: list[str]
    image_id: str
    subtitle: str = ""
    pub: Pub | None = None
    canonical: str | None = None  # a cross-post's original, off Medium

    @property
    def medium_url(self) -> str:
        if self.pub is not None:
            return f"{self.pub.url}/{self.slug}-{self.post_id}"
        if self.writer.subdomain:
            return f"https://{self.writer.username}.medium.com/{self.slug}-{self.post_id}"
        return f"https://medium.com/@{self.writer.username}/{self.slug}-{self.post_id}"


@dataclass
class TagCase:
    name: str
    slug: str
    title: str
    post_count: int
    related: list[tuple[str, str | None]]  # (slug, display title or None: no entity)
    feed_key: str  # the tagFeed key as stored, aliased
    feed_ids: list[str]  # posts the feed lists (those not in ``posts`` have no entity)
    newest_ids: list[str]  # Tag.posts:{NEWEST}
    posts: list[Post]  # entities in the state
    cards: list[Post]
    postings: list[Post]  # Tag.seoMetaTags.jsonLd
    page_postings: list[Post]  # the page's own ld+json
    follow: list[Writer | Pub] = field(default_factory=list)
    seed: int = 0


def ms(iso: str) -> int:
    return int(datetime.fromisoformat(iso.replace("Z", "+00:00")).timestamp() * 1000)


def ref(key: str) -> dict[str, str]:
    return {"__ref": key}


def shuffled(entity: Entity, rng: random.Random) -> Entity:
    """The same object with its keys in another (seeded) order, nested objects too."""
    keys = list(entity)
    rng.shuffle(keys)
    return {k: shuffled(entity[k], rng) if isinstance(entity[k], dict) else entity[k] for k in keys}


# --- the state ------------------------------------------------------------------------------


def tag_state(case: TagCase) -> dict[str, Any]:
    rng = random.Random(case.seed)
    viewer = f"lo_{case.seed:012x}"
    state: dict[str, Entity] = {}

    def tag(slug: str, title: str) -> str:
        state[f"Tag:{slug}"] = {
            "__typename": "Tag",
            "viewerEdge": ref(f"TagViewerEdge:tagSlug:{slug}-viewerId:{viewer}"),
            "id": slug,
            "displayTitle": title,
            "normalizedTagSlug": slug,
        }
        return f"Tag:{slug}"

    def user(writer: Writer) -> str:
        state[f"User:{writer.user_id}"] = {
            "__typename": "User",
            "id": writer.user_id,
            "customDomainState": (
                {
                    "__typename": "CustomDomainState",
                    "live": {
                        "__typename": "CustomDomain",
                        "domain": f"{writer.username}.medium.com",
                    },
                }
                if writer.subdomain
                else None
            ),
            "hasSubdomain": writer.subdomain,
            "username": writer.username,
            "imageId": writer.image_id,
            "name": writer.name,
        }
        return f"User:{writer.user_id}"

    def collection(pub: Pub) -> str:
        state[f"Collection:{pub.collection_id}"] = {
            "__typename": "Collection",
            "id": pub.collection_id,
            "domain": pub.domain,
            "slug": pub.slug,
            "name": pub.name,
        }
        return f"Collection:{pub.collection_id}"

    for post in case.posts:
        state[f"Post:{post.post_id}"] = {
            "__typename": "Post",
            "id": post.post_id,
            "title": post.title,
            "previewImage": {"__typename": "ImageMetadata", "id": post.image_id},
            "extendedPreviewContent": {"__typename": "PreviewContent", "isFullContent": False,
                                       "subtitle": post.subtitle},
            "visibility": "LOCKED" if post.locked else "PUBLIC",
            "creator": ref(user(post.writer)),
            "collection": ref(collection(post.pub)) if post.pub else None,
            "mediumUrl": post.medium_url,
            "uniqueSlug": f"{post.slug}-{post.post_id}",
            "firstPublishedAt": ms(post.published),
            "latestPublishedAt": ms(post.updated),
            "isPublished": True,
            "tags": [ref(tag(slug, slug.replace("-", " ").title())) for slug in post.tags],
            "clapCount": post.claps,
            "isLocked": post.locked,
            "postResponses": {"__typename": "PostResponses", "count": post.responses},
        }  # fmt: skip
    for slug, title in case.related:
        if title is not None:
            tag(slug, title)
    for account in case.follow:
        user(account) if isinstance(account, Writer) else collection(account)
    json_ld = collection_page(case, case.postings)
    state[f"Tag:{case.slug}"] = {
        "__typename": "Tag",
        "id": case.slug,
        "displayTitle": case.title,
        "normalizedTagSlug": case.slug,
        "postCount": case.post_count,
        "posts:{\"sortOrder\":\"NEWEST\",\"timeRange\":{\"kind\":\"ALL_TIME\"}}": {
            "__typename": "TagPostConnection",
            "edges": [{"__typename": "TagPostEdge", "node": ref(f"Post:{pid}")}
                      for pid in case.newest_ids],
            "pageInfo": {"hasNextPage": True, "endCursor": ""},
        },
        "seoMetaTags": {"__typename": "SEOMetaTags", "robots": "index,follow",
                        "jsonLd": json.dumps(json_ld)},
    }  # fmt: skip
    root = {
        "__typename": "Query",
        "viewer": None,
        f'tagFromSlug({{"tagSlug":"{case.slug}"}})': ref(f"Tag:{case.slug}"),
        f'relatedTags({{"tagSlug":"{case.slug}"}})': [ref(f"Tag:{s}") for s, _ in case.related],
        case.feed_key: {
            "__typename": "TagFeedResult",
            "items": [{"__typename": "TagFeedItem", "feedId": f"feed-{case.seed}", "reason": 85,
                       "post": ref(f"Post:{pid}")} for pid in case.feed_ids],
        },
    }  # fmt: skip
    entries = list(state.items())
    rng.shuffle(entries)
    return {"ROOT_QUERY": shuffled(root, rng), **{k: shuffled(v, rng) for k, v in entries}}


def collection_page(case: TagCase, postings: list[Post]) -> dict[str, Any]:
    url = f"https://medium.com/tag/{case.slug}"
    return {
        "@context": "https://schema.org",
        "@id": url,
        "@type": "CollectionPage",
        "name": f"The most insightful stories about {case.title} - Medium",
        "url": url,
        "mainEntity": [posting(post) for post in postings],
    }


def posting(post: Post) -> dict[str, Any]:
    address = post.canonical or post.medium_url
    person = {"@context": "https://schema.org", "@id": post.writer.url, "@type": "Person",
              "identifier": post.writer.username, "name": post.writer.name,
              "url": post.writer.url}  # fmt: skip
    publisher = (
        {"@type": "Organization", "@id": post.pub.url, "name": post.pub.name, "url": post.pub.url}
        if post.pub
        else {"@type": "Organization", "@id": "https://medium.com", "name": "Medium",
              "url": "https://medium.com"}
    )  # fmt: skip
    return {
        "@context": "https://schema.org",
        "@id": address,
        "@type": "SocialMediaPosting",
        "author": person,
        "creator": person,
        "dateCreated": post.published,
        "dateModified": post.updated,
        "datePublished": post.published,
        "description": f"{post.title} The first lines of the story go here, cut short …",
        "headline": post.title,
        "identifier": post.post_id,
        "image": [f"https://miro.medium.com/{post.image_id}"],
        "isAccessibleForFree": not post.locked,
        "mainEntityOfPage": address,
        "name": post.title,
        "publisher": publisher,
        "url": address,
    }


# --- the HTML -------------------------------------------------------------------------------


def card(post: Post, position: int, slug: str) -> str:
    source = f"?source=topic_portal---selected_stories---{slug}---{position}-93----------------"
    writer = post.writer
    if post.pub is not None:  # as the capture: a publication's story under its path
        path = post.medium_url if post.pub.domain else f"/{post.pub.slug}/{post.slug}"
        story = f"{path}-{post.post_id}{source}" if not post.pub.domain else path + source
    else:  # a writer's story under /@user, even when they have a subdomain
        story = f"/@{writer.username}/{post.slug}-{post.post_id}{source}"
    lock = '<button class="e cf" aria-label="Member-only story"><svg></svg></button>'
    return (
        f'<article aria-label="{escape(post.title)}" class="al" data-testid="post-preview">'
        f'<div class="al mq"><a tabindex="-1" rel="noopener follow" href="/@{writer.username}'
        f'{source}"><img alt="{escape(writer.name)}" width="20" height="20" '
        f'src="https://miro.medium.com/v2/resize:fill:20:20/{writer.image_id}"></a>'
        f'<a rel="noopener follow" href="/@{writer.username}{source}"><p class="z b">'
        f"{escape(writer.name)}</p></a></div>"
        f'<a rel="noopener follow" href="{escape(story)}"><h2 class="z nu">'
        f"{escape(post.title)}</h2><div><h3>{escape(post.subtitle)}</h3></div></a>"
        f'<img alt="{escape(post.title)}" width="80" height="53" '
        f'src="https://miro.medium.com/v2/resize:fill:80:53/{post.image_id}">'
        f"{lock if post.locked else ''}"
        f'<a tabindex="-1" href="{escape(story)}"><span>{post.responses}</span></a>'
        "</article>"
    )


def who_to_follow(accounts: list[Writer | Pub]) -> str:
    if not accounts:
        return ""
    entries = "".join(
        f'<div><a href="{escape(a.url if isinstance(a, Pub) else "/@" + a.username)}">'
        f"<h2>{escape(a.name)}</h2></a><p>About them.</p><button>Follow</button></div>"
        for a in accounts
    )
    return f"<section><h2>Who to follow</h2>{entries}</section>"


def tag_page(case: TagCase) -> str:
    state = json.dumps(tag_state(case), ensure_ascii=False)
    page_ld = json.dumps(collection_page(case, case.page_postings), ensure_ascii=False)
    cards = "".join(card(post, i, case.slug) for i, post in enumerate(case.cards))
    return (
        '<!DOCTYPE html><html lang="en"><head>'
        f"<title>The most insightful stories about {escape(case.title)} - Medium</title>"
        '<link rel="stylesheet" href="https://cdn-client.medium.com/lite/main.css"></head><body>'
        "<script>window.__CF$cv$params={r:'0f1e2d3c4b5a6978',t:'MTc4OTU2MDAwMA=='};</script>"
        f"<script>window.__APOLLO_STATE__ = {state};</script>"
        f'<script type="application/ld+json">{page_ld}</script>'
        f"{cards}{who_to_follow(case.follow)}</body></html>"
    )


# --- the cases ------------------------------------------------------------------------------

ADA = Writer("5a1e0c9d2b34", "ada-kowalska", "Ada Kowalska", "1*Qw3rTy9UiOp1AsDfGh2JkL.png")
BEN = Writer("c0ffee12ab9", "benoit-r", "Benoît Rousseau", "0*ZxCvBnM4567LkJhG", subdomain=True)
CHO = Writer("77d3a9e10b5c", "cho.min", "Cho Min-jun", "1*PoIuYtReWq0987LkJh6G.jpeg")
DEV = Writer("e41b2c3d4f50", "devika-n", "Devika Nair", "1*MnBvCxZ1234AsDfGhJkL.png")
EMI = Writer("9a8b7c6d5e4f", "emil_s", "Emil Sørensen", "0*AbCdEfGh12345678")
SYS = Pub("3c2b1a0f9e8d", "systems-weekly", "Systems Weekly")
OXI = Pub("0a9b8c7d6e5f", "oxidized", "Oxidized", domain="oxidized.dev")

P1 = Post("1a2b3c4d5e6f", "Why Our Borrow Checker Errors Halved After One Refactor", "why-our-"
          "borrow-checker-errors-halved-after-one-refactor", ADA, "2026-09-12T08:15:02Z",
          "2026-09-13T10:00:00Z", 312, 7, True, ["rust", "programming", "compilers"],
          "1*R1u2s3T4a5B6c7D8e9F0gH.png", "Lifetimes were never the problem; ownership of "
          "the cache was.", SYS)  # fmt: skip
P2 = Post("2b3c4d5e6f70", "Async Rust Without Tears", "async-rust-without-tears", BEN,
          "2026-09-14T21:40:59Z", "2026-09-14T21:40:59Z", 48, 0, False, ["rust", "async"],
          "0*TeArS0123456789a", "A field guide to executors for people who ship.")  # fmt: skip
P3 = Post("3c4d5e6f7081", "Zero-Copy Parsing in Practice", "zero-copy-parsing-in-practice", CHO,
          "2026-09-09T02:03:04Z", "2026-09-10T05:06:07Z", 1534, 21, True, ["rust", "parsing"],
          "1*ZeroCopy9876543210AbC.jpeg", "Borrowing from the input buffer, safely.",
          OXI)  # fmt: skip
# postings only (no entity, no card): a cross-post on Substack, one on a custom domain
P4 = Post("4d5e6f708192", "What I Learned Porting a Game Engine", "what-i-learned-porting-a-game-"
          "engine", DEV, "2026-09-15T06:00:00Z", "2026-09-15T07:30:00Z", 0, 0, False, [],
          "1*Engine4321DcBa8765HgFe.png",
          canonical="https://devika.substack.com/p/what-i-learned-porting-a-game")  # fmt: skip
P5 = Post("5e6f708192a3", "Traits, Generics and the Cost of Abstraction", "traits-generics-and-"
          "the-cost-of-abstraction", EMI, "2026-09-15T05:10:11Z", "2026-09-15T05:10:11Z", 0, 0,
          True, [], "0*Traits00Generics11", pub=OXI)  # fmt: skip
P6 = Post("6f708192a3b4", "Embedded Rust on a Budget", "embedded-rust-on-a-budget", ADA,
          "2026-09-15T04:00:00Z", "2026-09-15T04:00:00Z", 0, 0, False, [],
          "1*Budget55Embedded66Rust.png",
          canonical="https://dev.to/ada_kowalska/embedded-rust-on-a-budget-4k2j")  # fmt: skip

RUST = TagCase(
    name="rust-2026",
    slug="rust",
    title="Rust",
    post_count=48213,
    related=[("programming", None), ("rust-lang", "Rust Lang"), ("webassembly", None),
             ("systems-programming", "Systems Programming"), ("golang", None)],
    feed_key="tagFeed:trendingStories(mode:TOP_MONTH,tagSlug:rust,limit:4)",
    feed_ids=["3c4d5e6f7081", "a0b1c2d3e4f5", "1a2b3c4d5e6f", "b1c2d3e4f5a6"],
    newest_ids=["2b3c4d5e6f70", "c2d3e4f5a6b7"],
    posts=[P1, P2, P3],
    cards=[P2, P1],
    postings=[P4, P5, P2, P6],
    page_postings=[P2],
    follow=[CHO, SYS, DEV],
    seed=2026,
)  # fmt: skip

REFS_ONLY = TagCase(
    name="webassembly-2026-refs-only",
    slug="webassembly",
    title="WebAssembly",
    post_count=6120,
    related=[("rust", None), ("javascript", None), ("wasi", None)],
    feed_key='tagFeed:popularStories({"mode":"TOP_WEEK","tagSlug":"webassembly","limit":3})',
    feed_ids=["d3e4f5a6b7c8", "e4f5a6b7c8d9", "f5a6b7c8d9e0"],
    newest_ids=["a6b7c8d9e0f1", "d3e4f5a6b7c8"],
    posts=[],
    cards=[],
    postings=[],
    page_postings=[P6, P4],
    seed=7,
)  # fmt: skip

KUBE = TagCase(
    name="kubernetes-2026-entities",
    slug="kubernetes",
    title="Kubernetes",
    post_count=91004,
    related=[("docker", "Docker"), ("devops", "DevOps"), ("cloud-computing", "Cloud Computing")],
    feed_key="tagFeed:editorsPicks(limit:2,tagSlug:kubernetes,mode:HOT)",
    feed_ids=["708192a3b4c5"],
    newest_ids=[],
    posts=[Post("708192a3b4c5", "Pods, Plainly", "pods-plainly", EMI, "2026-08-30T11:11:11Z",
                "2026-09-01T00:00:00Z", 2048, 33, False, ["kubernetes", "devops"],
                "1*Pods1Plainly2Kube3.png", "What a pod is once you stop drawing boxes.")],
    cards=[],
    postings=[],
    page_postings=[],
    follow=[EMI, OXI],
    seed=11,
)  # fmt: skip

TAG_CASES = (RUST, REFS_ONLY, KUBE)


def publication_home() -> str:
    """``oxidized.dev`` as a 2026 home: ``Post`` stubs in the state, stories in its cards."""
    stories = [P3, P5]
    state: dict[str, Any] = {
        "ROOT_QUERY": {
            "__typename": "Query",
            'collectionByDomainOrSlug({"domainOrSlug":"oxidized.dev"})': ref(
                f"Collection:{OXI.collection_id}"
            ),
        },
        f"Collection:{OXI.collection_id}": {
            "__typename": "Collection", "id": OXI.collection_id, "slug": OXI.slug,
            "name": OXI.name, "domain": OXI.domain,
            "description": "Rust, down to the metal.",
        },
        **{f"Post:{p.post_id}": {"__typename": "Post", "id": p.post_id} for p in stories},
    }  # fmt: skip
    links = "".join(
        f'<div><a href="https://oxidized.dev/{p.slug}-{p.post_id}?source=collection_home---4">'
        f"<h2>{escape(p.title)}</h2></a></div>"
        for p in stories
    )
    return (
        '<!DOCTYPE html><html lang="en"><head><title>Oxidized</title>'
        '<meta property="og:site_name" content="Medium"><meta property="og:title" '
        'content="Oxidized"><link rel="canonical" href="https://oxidized.dev/"></head><body>'
        f"<script>window.__APOLLO_STATE__ = {json.dumps(state)};</script>"
        f"<main><h1>Oxidized</h1><p>Rust, down to the metal.</p>{links}</main></body></html>"
    )


def cross_post_story() -> str:
    """P6 on Medium, whose ``rel=canonical`` is its original on dev.to."""
    post = P6
    state = {
        "ROOT_QUERY": {"__typename": "Query",
                       f'postResult({{"id":"{post.post_id}"}})': ref(f"Post:{post.post_id}")},
        f"User:{ADA.user_id}": {"__typename": "User", "id": ADA.user_id,
                                "username": ADA.username, "name": ADA.name},
        f"Post:{post.post_id}": {
            "__typename": "Post", "id": post.post_id, "title": post.title,
            "mediumUrl": post.medium_url, "canonicalUrl": post.canonical,
            "firstPublishedAt": ms(post.published), "creator": ref(f"User:{ADA.user_id}"),
            "clapCount": 3, "isLocked": False,
        },
    }  # fmt: skip
    return (
        '<!DOCTYPE html><html lang="en"><head>'
        f"<title>{escape(post.title)} | by {escape(ADA.name)} | Medium</title>"
        '<meta property="og:site_name" content="Medium"><meta property="og:type" '
        f'content="article"><link rel="canonical" href="{escape(str(post.canonical))}">'
        f'<meta property="al:android:url" content="medium://p/{post.post_id}"></head><body>'
        f"<script>window.__APOLLO_STATE__ = {json.dumps(state)};</script>"
        f"<article><h1>{escape(post.title)}</h1></article></body></html>"
    )


def left_medium_story() -> str:
    """What a story link to a publication that left Medium now answers: a WordPress page."""
    return (
        '<!DOCTYPE html><html lang="en-US"><head><meta charset="UTF-8">'
        "<title>Pods, Plainly | Cloud Native Notes</title>"
        '<meta name="generator" content="WordPress 6.8.1">'
        '<meta property="og:site_name" content="Cloud Native Notes">'
        '<meta property="og:type" content="article"><script type="application/ld+json">'
        '{"@context":"https://schema.org","@type":"Article","headline":"Pods, Plainly",'
        '"datePublished":"2026-08-30T11:11:11+00:00"}</script></head>'
        '<body class="post-template-default"><article><h1>Pods, Plainly</h1>'
        "<p>What a pod is once you stop drawing boxes.</p></article></body></html>"
    )


def write_case(folder: Path, name: str, text: str, url: str, kind: str) -> None:
    case = folder / name
    case.mkdir(parents=True, exist_ok=True)
    (case / "input.html").write_text(text, encoding="utf-8")
    meta = {"url": url, "kind": kind, "scraped_at": SCRAPED_AT}
    (case / "meta.json").write_text(json.dumps(meta, indent=2) + "\n", encoding="utf-8")
    print(f"wrote {case.relative_to(FIXTURES)}/input.html")


def main() -> int:
    own = FIXTURES / "own"
    for case in TAG_CASES:
        write_case(own / "tag", case.name, tag_page(case), f"https://medium.com/tag/{case.slug}",
                   "tag")  # fmt: skip
    write_case(own / "publication", "oxidized-2026-id-only-posts", publication_home(),
               "https://oxidized.dev/", "publication")  # fmt: skip
    write_case(own / "story", "embedded-rust-2026-cross-post", cross_post_story(),
               P6.medium_url, "story")  # fmt: skip
    write_case(own / "story", "towardsdatascience-2026-left-medium", left_medium_story(),
               "https://towardsdatascience.com/pods-plainly-708192a3b4c5", "story")  # fmt: skip
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
