"""HTML of a tag page (``/tag/<slug>``), today's shape as in ``seed-tag-page.txt``.

Breadcrumb, name and counts, sub-topic clusters, the card sections, "Who to
follow" and related tags, with a ``BreadcrumbList`` JSON-LD and an Apollo state
holding the tag, the who-to-follow accounts and the first section's posts.
"""

from __future__ import annotations

import re
from typing import Any

from topics_crawler.site.apollo import StateBuilder, ref, root_call
from topics_crawler.site.cards import card
from topics_crawler.site.entities import SiteCluster, SiteTag
from topics_crawler.site.markup import esc, href, page, short_count
from topics_crawler.site.model import SiteContent
from topics_crawler.site.tag_page_2022 import tag_page_2022

_HOST = "medium.com"
#: Story links of a card (title and footer links); "changed" pages open stories by script.
_STORY_HREF_RE = re.compile(r'href="[^"]*-[0-9a-f]{12}\?[^"]*"')


def tag_page(content: SiteContent, tag: SiteTag) -> str:
    """The tag page of ``tag`` in its generation (see :data:`~.model.TagGeneration`)."""
    if tag.generation == "2022":
        return tag_page_2022(content, tag)
    return page(
        title=f"The most insightful stories about {tag.name} - Medium",
        canonical=tag.url,
        properties={
            "og:type": "website",
            "og:title": f"The most insightful stories about {tag.name} - Medium",
            "og:description": _description(tag),
            "og:url": tag.url,
            "og:image": "https://miro.medium.com/v2/resize:fit:1200/1*medium-topic-card.png",
        },
        names={
            "description": _description(tag),
            "twitter:card": "summary",
            "twitter:title": f"The most insightful stories about {tag.name} - Medium",
            "twitter:description": _description(tag),
        },
        json_ld=_breadcrumb_json_ld(tag),
        state=_state(content, tag),
        body=_body(content, tag),
    )


def _description(tag: SiteTag) -> str:
    text = f"Read stories about {tag.name} on Medium. Discover smart, unique perspectives on "
    text += f"{tag.name} and the topics that matter most to you"
    if tag.related:
        text += " like " + ", ".join(t.name for t in tag.related[:4]) + ", and more"
    return text + "."


def _breadcrumb_json_ld(tag: SiteTag) -> dict[str, Any]:
    trail = [(p.name, f"https://medium.com/tag/{p.slug}") for p in tag.parents]
    trail.append((tag.name, tag.url))
    return {
        "@context": "https://schema.org",
        "@type": "BreadcrumbList",
        "itemListElement": [
            {"@type": "ListItem", "position": i, "name": name, "item": url}
            for i, (name, url) in enumerate(trail, start=1)
        ],
    }


def _state(content: SiteContent, tag: SiteTag) -> dict[str, Any]:
    state = StateBuilder(content)
    state.query(root_call("tagFromSlug", tagSlug=tag.slug), ref(state.tag_page(tag)))
    first_section = next(iter(tag.sections.values()), [])
    for story_id in first_section:
        state.post(content.stories[story_id])
    for kind, key in tag.who_to_follow:
        if kind == "author":
            state.user(content.authors[key])
        else:
            state.collection(content.publications[key])
    return state.to_dict()


def _body(content: SiteContent, tag: SiteTag) -> str:
    crumbs = "".join(
        f'<a href="/tag/{esc(p.slug)}">{esc(p.name)}</a><span aria-hidden="true"> › </span>'
        for p in tag.parents
    )
    label = "breadcrumb" if tag.lowercase_breadcrumb else "Breadcrumb"
    parts = [
        f'<nav aria-label="{label}">{crumbs}<span>{esc(tag.name)}</span></nav>',
        f'<div class="ab"><h1 class="ac">{esc(tag.name)}</h1>'
        f'<div class="ad"><span>{short_count(tag.followers)} followers</span> · '
        f"<span>{short_count(tag.story_count)} stories</span></div></div>",
        _subtopics(content, tag),
        *(_section(content, tag, heading, ids) for heading, ids in tag.sections.items()),
        _who_to_follow(content, tag),
        _related(tag),
    ]
    return "<main>" + "".join(parts) + "</main>"


def _subtopics(content: SiteContent, tag: SiteTag) -> str:
    if not tag.clusters:
        return ""
    blocks = "".join(_cluster(content, tag, cluster) for cluster in tag.clusters)
    hook = "" if tag.lowercase_breadcrumb else ' data-testid="subtopics"'
    return f"<section{hook}><h2>Explore recommended reads, summarized by AI</h2>{blocks}</section>"


def _cluster(content: SiteContent, tag: SiteTag, cluster: SiteCluster) -> str:
    topics = "".join(f'<a href="/tag/{esc(t.slug)}">{esc(t.name)}</a>' for t in cluster.topics)
    return (
        f"<div><h3>{esc(cluster.name)}</h3><p>{esc(cluster.description)}</p>{topics}"
        f"{_cards(content, tag, cluster.stories)}</div>"
    )


def _cards(content: SiteContent, tag: SiteTag, story_ids: list[str]) -> str:
    now = content.clock()
    cards = [
        card(content, content.stories[sid], page_host=_HOST, placement="topic_page",
             position=i, now=now)
        for i, sid in enumerate(story_ids, start=1)
    ]  # fmt: skip
    if tag.generation == "changed":  # a redesign: stories open by script, no story links
        cards = [
            _STORY_HREF_RE.sub('href="#"', c).replace("data-href=", "data-story=") for c in cards
        ]
    return "".join(cards)


def _section(content: SiteContent, tag: SiteTag, heading: str, story_ids: list[str]) -> str:
    cards = _cards(content, tag, story_ids)
    more = ""
    if heading == "Latest stories":
        more = f'<a href="/tag/{esc(tag.slug)}/archive">See more stories</a>'
    return f'<section><h2 class="pw-section-heading">{esc(heading)}</h2>{cards}{more}</section>'


def _who_to_follow(content: SiteContent, tag: SiteTag) -> str:
    if not tag.who_to_follow:
        return ""
    entries = []
    for kind, key in tag.who_to_follow:
        if kind == "author":
            author = content.authors[key]
            url, name, about = author.url, author.name, author.bio
        else:
            publication = content.publications[key]
            url, name, about = publication.url, publication.name, publication.description
        entries.append(
            f'<div class="ae"><a href="{esc(href(url, _HOST))}"><h2>{esc(name)}</h2></a>'
            f"<p>{esc(about)}</p><button>Follow</button></div>"
        )
    return f"<section><h2>Who to follow</h2>{''.join(entries)}</section>"


def _related(tag: SiteTag) -> str:
    if not tag.related:
        return ""
    links = "".join(f'<a href="/tag/{esc(t.slug)}">{esc(t.name)}</a>' for t in tag.related)
    hook = "" if tag.lowercase_breadcrumb else ' data-testid="related-tags"'
    return f"<div{hook}><h2>Related topics</h2>{links}</div>"
