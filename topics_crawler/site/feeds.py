"""RSS feeds of the local site: ``/feed/tag/<slug>``, in the shape of Medium's feeds.

RSS 2.0 with the ``dc``, ``content`` and ``atom`` namespaces (STRUCTURE.md): a channel
titled after the tag, then the :data:`LATEST` newest stories carrying the tag, each with
``title``, ``link`` (canonical URL + ``?source=rss------<tag>-5``), ``guid``
(``https://medium.com/p/<id>``), one ``category`` per tag slug, ``dc:creator``, ``pubDate``
(RFC 822), ``atom:updated`` and either ``content:encoded`` (the body's paragraphs, the
``/_/stat?`` pixel and the "originally published in" footer for publication stories) or,
for member-only stories, a ``description`` snippet. No paging, as on Medium.
"""

from __future__ import annotations

from email.utils import format_datetime

from topics_crawler.site.entities import MEDIUM_ROOT, SiteStory, SiteTag
from topics_crawler.site.markup import esc
from topics_crawler.site.model import SiteContent

#: Items per feed (Medium's feeds carry only the latest ones).
LATEST = 10
XML = "text/xml; charset=UTF-8"


def tag_feed(content: SiteContent, tag: SiteTag) -> str:
    """The RSS document of ``tag``'s feed."""
    stories = [s for s in content.stories.values() if any(t.slug == tag.slug for t in s.tags)]
    stories.sort(key=lambda s: (s.published_at, s.id), reverse=True)
    items = "".join(_item(content, story, tag) for story in stories[:LATEST])
    return (
        '<?xml version="1.0" encoding="UTF-8"?>'
        '<rss xmlns:dc="http://purl.org/dc/elements/1.1/" '
        'xmlns:content="http://purl.org/rss/1.0/modules/content/" '
        'xmlns:atom="http://www.w3.org/2005/Atom" version="2.0" '
        'xmlns:cc="http://cyber.law.harvard.edu/rss/creativeCommonsRssModule.html">'
        f"<channel><title><![CDATA[{tag.name} on Medium]]></title>"
        f"<description><![CDATA[Latest stories tagged with {tag.name} on Medium]]></description>"
        f"<link>{MEDIUM_ROOT}/tag/{tag.slug}?source=rss------{tag.slug}-5</link>"
        "<generator>Medium</generator>"
        f'<atom:link href="{MEDIUM_ROOT}/feed/tag/{tag.slug}" rel="self" '
        'type="application/rss+xml"/>'
        f"{items}</channel></rss>"
    )


def _item(content: SiteContent, story: SiteStory, tag: SiteTag) -> str:
    author = content.authors[story.author]
    categories = "".join(f"<category><![CDATA[{t.slug}]]></category>" for t in story.tags)
    url = content.story_url(story)
    return (
        f"<item><title><![CDATA[{story.title}]]></title>"
        f"<link>{url}?source=rss------{tag.slug.replace('-', '_')}-5</link>"
        f'<guid isPermaLink="false">{MEDIUM_ROOT}/p/{story.id}</guid>'
        f"{categories}<dc:creator><![CDATA[{author.name}]]></dc:creator>"
        f"<pubDate>{format_datetime(story.published_at, usegmt=True)}</pubDate>"
        f"<atom:updated>{story.last_update.strftime('%Y-%m-%dT%H:%M:%S.000Z')}</atom:updated>"
        f"{_body(content, story, url)}</item>"
    )


def _body(content: SiteContent, story: SiteStory, url: str) -> str:
    if story.member_only:
        snippet = (
            '<div class="medium-feed-item"><p class="medium-feed-snippet">'
            f"{esc(story.paragraphs[0])}</p>"
            f'<p class="medium-feed-link"><a href="{url}">Continue reading on Medium »</a></p>'
            "</div>"
        )
        return f"<description><![CDATA[{snippet}]]></description>"
    paragraphs = "".join(f"<p>{esc(text)}</p>" for text in story.paragraphs)
    pixel = f'<img src="{MEDIUM_ROOT}/_/stat?event=post.clientViewed&referrerSource=full_rss'
    pixel += f'&postId={story.id}" width="1" height="1" alt="">'
    publication = content.publication_of(story)
    footer = ""
    if publication is not None:
        footer = (
            f'<hr><p><a href="{url}">{esc(story.title)}</a> was originally published in '
            f'<a href="{MEDIUM_ROOT}/{publication.slug}">{esc(publication.name)}</a> on Medium, '
            "where people are continuing the conversation by highlighting and responding to "
            "this story.</p>"
        )
    body = f"<h3>{esc(story.title)}</h3>{paragraphs}{pixel}{footer}"
    return f"<content:encoded><![CDATA[{body}]]></content:encoded>"
