"""Listing cards (``article[data-testid="post-preview"]``) in the 2025 home-feed shape.

Used by every section of tag pages, author profiles and publication homes.
"""

from __future__ import annotations

from datetime import datetime

from topics_crawler.site.entities import SiteStory
from topics_crawler.site.markup import card_date, esc, href, image_url, short_count, tracking
from topics_crawler.site.model import SiteContent

_LOCK_BUTTON = (
    '<div class="ab q"><button class="bq br" aria-label="Member-only story">'
    '<svg width="16" height="16" aria-hidden="true"></svg></button></div>'
)


def card(
    content: SiteContent,
    story: SiteStory,
    *,
    page_host: str,
    placement: str,
    position: int,
    now: datetime,
) -> str:
    """One listing card: "In <Pub> by <Author>", title, subtitle, date, counts, image."""
    source = tracking(placement, position, story.id)
    story_url = content.story_url(story)
    story_link = href(story_url, page_host, source)
    return (
        '<article data-testid="post-preview"><div class="ab ac">'
        f'<div role="link" data-href="{esc(story_url)}" tabindex="0" class="ad ae">'
        f"{_byline(content, story, page_host, source)}"
        f'<div class="af ag"><a rel="noopener follow" href="{esc(story_link)}">'
        f'<h2 class="ah ai">{esc(story.title)}</h2>'
        f'<div class="aj"><h3 class="ak al">{esc(story.subtitle)}</h3></div></a></div>'
        f"{_footer(story, story_link, now)}"
        f"{_thumbnail(story)}"
        "</div></div></article>"
    )


def _byline(content: SiteContent, story: SiteStory, page_host: str, source: str) -> str:
    author = content.authors[story.author]
    author_link = href(author.url, page_host, source)
    by_author = (
        f'<div class="am"><a rel="noopener follow" href="{esc(author_link)}">'
        f'<p class="an ao">{esc(author.name)}</p></a></div>'
    )
    publication = content.publication_of(story)
    if publication is None:
        return f'<div class="ap aq">{by_author}</div>'
    pub_link = esc(href(publication.url, page_host, source))
    return (
        '<div class="ap aq">'
        f'<a href="{pub_link}" rel="noopener follow"><img alt="{esc(publication.name)}" '
        f'width="20" height="20" loading="lazy" '
        f'src="{esc(image_url(publication.logo_id, 20, 20))}"></a>'
        '<div class="ar"><p class="as">In</p></div>'
        f'<div class="am"><a href="{pub_link}" rel="noopener follow">'
        f'<p class="an ao">{esc(publication.name)}</p></a></div>'
        '<div class="ar"><p class="as">by</p></div>'
        f"{by_author}</div>"
    )


def _footer(story: SiteStory, story_link: str, now: datetime) -> str:
    lock = _LOCK_BUTTON if story.member_only else ""
    return (
        '<div class="at au"><span class="av">'
        f"{lock}<div>{esc(card_date(story.published_at, now))}</div>"
        f'<a tabindex="-1" rel="noopener follow" href="{esc(story_link)}">'
        f'<div class="aw"><svg width="16" height="16" aria-label="claps"></svg>'
        f"<span>{short_count(story.claps)}</span></div>"
        f'<div class="aw"><svg width="16" height="16" aria-label="responses"></svg>'
        f"<span>{short_count(story.responses)}</span></div></a>"
        '<button aria-label="Add to list bookmark button"></button>'
        "</span></div>"
    )


def _thumbnail(story: SiteStory) -> str:
    return (
        f'<div class="ax" aria-label="{esc(story.title)}"><img alt="{esc(story.title)}" '
        f'width="160" height="107" loading="lazy" '
        f'src="{esc(image_url(story.image_id, 160, 107))}"></div>'
    )
