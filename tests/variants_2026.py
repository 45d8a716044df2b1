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
The model and the state are in :mod:`tests.variants_2026_state`, the cases' data in
:mod:`tests.variants_2026_cases`; this module writes the pages.

    python -m tests.variants_2026        # rewrite the inputs; then ``make fixtures``
"""

from __future__ import annotations

import json
from html import escape
from pathlib import Path
from typing import Any

from tests.fixture_cases import FIXTURES
from tests.variants_2026_cases import ADA, OXI, P3, P5, P6, TAG_CASES
from tests.variants_2026_state import (
    Post,
    Pub,
    TagCase,
    Writer,
    collection_page,
    ms,
    ref,
    tag_state,
)

#: The frozen fetch time of every case (relative card dates are read against it).
SCRAPED_AT = "2026-09-16T12:00:00Z"


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
