"""RSS 2.0 user feeds (``/feed/@user``) of the local site, shaped like Medium's."""

from __future__ import annotations

from email.utils import format_datetime
from html import escape

from topics_crawler.site.entities import SiteAuthor
from topics_crawler.site.model import SiteContent

RSS_NAMESPACES = (
    'xmlns:dc="http://purl.org/dc/elements/1.1/" '
    'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
    'xmlns:atom="http://www.w3.org/2005/Atom"'
)


def _cdata(text: str) -> str:
    return "<![CDATA[" + text.replace("]]>", "]]]]><![CDATA[>") + "]]>"


def user_feed(content: SiteContent, author: SiteAuthor) -> str:
    """The author's newest stories, one ``<item>`` each, newest first."""
    stories = sorted(
        (s for s in content.stories.values() if s.author == author.username),
        key=lambda s: s.published_at,
        reverse=True,
    )[:10]
    source = f"?source=rss-{author.id}------2"
    items = []
    for story in stories:
        url = content.story_url(story)
        categories = "".join(f"<category>{_cdata(t.slug)}</category>" for t in story.tags)
        body = "".join(f"<p>{escape(p)}</p>" for p in story.paragraphs)
        items.append(
            f"<item><title>{_cdata(story.title)}</title>"
            f"<link>{escape(url + source)}</link>"
            f'<guid isPermaLink="false">https://medium.com/p/{story.id}</guid>'
            f"{categories}<dc:creator>{_cdata(author.name)}</dc:creator>"
            f"<pubDate>{format_datetime(story.published_at, usegmt=True)}</pubDate>"
            f"<content:encoded>{_cdata(body)}</content:encoded></item>"
        )
    title = f"Stories by {author.name} on Medium"
    return (
        f'<?xml version="1.0" encoding="UTF-8"?><rss {RSS_NAMESPACES} version="2.0">'
        f"<channel><title>{_cdata(title)}</title><description>{_cdata(title)}</description>"
        f"<link>{escape(author.url + source)}</link><generator>Medium</generator>"
        f'<atom:link href="https://medium.com/feed/@{author.username}" rel="self" '
        f'type="application/rss+xml"/>{"".join(items)}</channel></rss>'
    )
