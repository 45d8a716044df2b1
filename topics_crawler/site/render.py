"""HTML of the local site's pages, per ``topics_crawler/site/MARKUP.md``.

Each function renders one page from the content model: story (full or
member-only preview), author profile, publication home and tag page, plus a
robots.txt shaped like Medium's. Pages on a custom domain link to medium.com
with absolute URLs, as Medium does; medium.com pages link relatively.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from topics_crawler.site.apollo import StateBuilder, figure_name, paragraph_name, ref, root_call
from topics_crawler.site.author_archive import profile_stories, state_connection
from topics_crawler.site.cards import card
from topics_crawler.site.entities import MEDIUM_ROOT, SiteAuthor, SitePublication, SiteStory
from topics_crawler.site.markup import day_text, esc, href, image_url, page, short_count
from topics_crawler.site.model import SiteContent

ROBOTS_TXT = """User-Agent: *
Disallow: /m/
Disallow: /me/
Disallow: /@me$
Disallow: /@me/
Disallow: /*/edit$
Disallow: /*/*/edit$
Disallow: /_/
Allow: /_/graphql
Disallow: /*/*source=
Disallow: /p/*/edit

Sitemap: https://medium.com/sitemap/sitemap.xml
"""

_ORG = {"@type": "Organization", "@id": MEDIUM_ROOT, "name": "Medium", "url": MEDIUM_ROOT}


def host_of(url: str) -> str:
    """Host of a canonical URL (``medium.com``, ``tensorbeat.example``)."""
    return url.split("/")[2]


def iso_ms(moment: datetime) -> str:
    """``2025-11-03T09:00:00.000Z`` as in ``article:published_time``."""
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{moment.microsecond // 1000:03d}Z"


# --- story -----------------------------------------------------------------------


def story_page(content: SiteContent, story: SiteStory, *, member: bool = False) -> str:
    """A story page; member-only stories show only their preview paragraphs, except to a
    ``member``'s session."""
    author = content.authors[story.author]
    publication = content.publication_of(story)
    canonical = content.story_url(story)
    state = StateBuilder(content)
    post = state.post(story, with_body=True, member=member)
    state.query(root_call("postResult", id=story.id), ref(post))
    title_parts = [story.title, f"by {author.name}", *([publication.name] if publication else [])]
    return page(
        title=" | ".join([*title_parts, "Medium"]),
        canonical=canonical,
        properties={
            "og:type": "article",
            "article:published_time": iso_ms(story.published_at),
            "og:title": story.title,
            "al:android:url": f"medium://p/{story.id}",
            "al:ios:url": f"medium://p/{story.id}",
            "og:description": story.subtitle,
            "og:url": canonical,
            "og:image": image_url(story.image_id, 1200),
            "article:author": author.url,
            "twitter:title": story.title,
            "twitter:description": story.subtitle,
        },
        names={
            "title": " | ".join([*title_parts, "Medium"]),
            "description": _description(story),
            "author": author.name,
            "robots": "index,noarchive,follow,max-image-preview:large",
            "twitter:app:url:iphone": f"medium://p/{story.id}",
            "twitter:image:src": image_url(story.image_id, 1200),
            "twitter:card": "summary_large_image",
            "twitter:label1": "Reading time",
            "twitter:data1": f"{max(1, round(story.reading_time))} min read",
        },
        json_ld=_story_json_ld(content, story),
        state=state.to_dict() if story.state else None,
        body=_story_body(content, story, host_of(canonical), member),
    )


def _description(story: SiteStory) -> str:
    text = " ".join([story.title, story.subtitle, *story.preview_paragraphs])
    return text if len(text) <= 160 else text[:157].rstrip() + " …"


def _story_json_ld(content: SiteContent, story: SiteStory) -> dict[str, Any]:
    author = content.authors[story.author]
    url = content.story_url(story)
    data: dict[str, Any] = {
        "@context": "https://schema.org",
        "@id": url,
        "@type": "NewsArticle" if story.publication else "SocialMediaPosting",
        "url": url,
        "identifier": story.id,
        "headline": story.title,
        "name": story.title,
        "description": story.subtitle,
        "image": [image_url(story.image_id, 1200)],
        "dateCreated": story.published_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "datePublished": story.published_at.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "dateModified": story.last_update.strftime("%Y-%m-%dT%H:%M:%SZ"),
        "author": {
            "@type": "Person",
            "@id": author.url,
            "identifier": author.username,
            "name": author.name,
            "url": author.url,
        },
        "publisher": _ORG,
        "mainEntityOfPage": url,
        "isAccessibleForFree": not story.member_only,
    }
    if story.member_only:
        data["hasPart"] = {
            "@type": "WebPageElement",
            "isAccessibleForFree": False,
            "cssSelector": ".meteredContent",
        }
    return data


def _story_body(content: SiteContent, story: SiteStory, host: str, member: bool) -> str:
    author = content.authors[story.author]
    publication = content.publication_of(story)
    source = f"post_page-----{story.id}--------------------------------"
    pub_link = ""
    if publication:
        pub_link = (
            f'<a class="pw-publication" href="{esc(href(publication.url, host, source))}">'
            f"{esc(publication.name)}</a>"
        )
    paragraphs = _body_blocks(story, member)
    article_class = ' class="meteredContent"' if story.member_only else ""
    paywall = (
        '<div class="paywall"><p>The author made this story available to Medium members only.'
        "</p></div>"
        if story.member_only and not member
        else ""
    )
    tags = "".join(
        f'<div class="po ac"><a href="{esc(href(f"{MEDIUM_ROOT}/tag/{t.slug}", host, source))}" '
        f'rel="noopener follow"><div class="pq">{esc(t.name)}</div></a></div>'
        for t in story.tags
    )
    return (
        f'<main><article{article_class}><div class="cp bi">'
        f'<h1 id="title" class="pw-post-title gs gt" data-testid="storyTitle">'
        f"{esc(story.title)}</h1>"
        f'<h2 id="subtitle" class="pw-subtitle-paragraph hr gt">{esc(story.subtitle)}</h2>'
        f'<div class="speechify-ignore ac"><a data-testid="authorPhoto" '
        f'href="{esc(href(author.url, host, source))}"><img alt="{esc(author.name)}" '
        f'src="{esc(image_url(author.image_id, 64, 64))}"></a>'
        f'<a data-testid="authorName" class="pw-author" '
        f'href="{esc(href(author.url, host, source))}">{esc(author.name)}</a>{pub_link}'
        f'<span data-testid="storyReadTime">{max(1, round(story.reading_time))} min read</span>'
        f'<span aria-hidden="true"> · </span>'
        f'<span data-testid="storyPublishDate">{day_text(story.published_at)}</span></div>'
        f'<div class="pw-multi-vote-count l mi"><p><button>{short_count(story.claps)}</button>'
        f'</p></div><p><span class="pw-responses-count mv">{short_count(story.responses)}'
        f"</span></p>{paragraphs}{paywall}"
        f'<div class="pm pn ac">{tags}</div></div></article></main>'
    )


def _body_blocks(story: SiteStory, member: bool) -> str:
    """The body's paragraphs and figures (``<figure>`` with its ``<picture>``, as Medium)."""
    out = []
    index = 0
    for number, block in enumerate(story.body(member)):
        if isinstance(block, str):
            out.append(
                f'<p id="{paragraph_name(story, index)}" class="pw-post-body-paragraph mv mw" '
                f'data-selectable-paragraph="">{esc(block)}</p>'
            )
            index += 1
            continue
        src = block.url or image_url(block.image_id or "", 1400)
        caption = (
            f'<figcaption class="mx my" data-selectable-paragraph="">{esc(block.caption)}'
            "</figcaption>"
            if block.caption
            else ""
        )
        out.append(
            f'<figure id="{figure_name(story, number)}" class="gp go bi paragraph-image">'
            f'<picture><img alt="{esc(block.alt)}" class="bi gq gr c" width="700" height="467" '
            f'loading="lazy" role="presentation" src="{esc(src)}"></picture>{caption}</figure>'
        )
    return "".join(out)


# --- listings ----------------------------------------------------------------------


def _cards(
    content: SiteContent, stories: list[SiteStory], host: str, placement: str, now: datetime
) -> str:
    return "".join(
        card(content, s, page_host=host, placement=placement, position=i, now=now)
        for i, s in enumerate(stories, start=1)
    )


def author_page(content: SiteContent, author: SiteAuthor) -> str:
    """An author profile listing every story of the author, newest first."""
    state = StateBuilder(content)
    state.query(root_call("userResult", username=author.username), ref(state.user(author)))
    stories = content.stories_by(author.username)
    if author.username in content.author_archives:  # the first page and a cursor
        stories = profile_stories(content, author)[0]
    post_keys = [state.post(story) for story in stories[:3]]
    if author.username in content.author_archives:
        state.entities[f"User:{author.id}"].update(state_connection(content, author, post_keys))
    followed = [content.authors[name] for name in author.following_list]
    sidebar = ""
    if followed:
        entries = "".join(
            f'<li><a href="{esc(href(other.url, "medium.com", "user_profile_following"))}">'
            f"{esc(other.name)}</a></li>"
            for other in followed
        )
        sidebar = (
            f'<aside><h2 class="pw-following-heading">Following</h2><ul>{entries}</ul></aside>'
        )
    bio = f'<p class="pw-bio">{esc(author.bio)}</p>' if author.bio else ""
    body = (
        f'<main><div class="ab"><h1 class="pw-author-name">{esc(author.name)}</h1>{bio}'
        f'<span class="pw-follower-count">{short_count(author.followers)} followers</span>'
        f" · <span>{short_count(author.following)} following</span></div>"
        f'<div class="ac">{_cards(content, stories, "medium.com", "user_profile", content.clock())}'
        f"</div>{sidebar}</main>"
    )
    description = f"Read writing from {author.name} on Medium. {author.bio}".strip()
    return page(
        title=f"{author.name} – Medium",
        canonical=author.url,
        properties={
            "og:type": "profile",
            "og:title": f"{author.name} – Medium",
            "og:description": description,
            "og:url": author.url,
            "og:image": image_url(author.image_id, 200, 200),
            "profile:username": author.username,
            "al:ios:url": f"medium://@{author.username}",
            "al:android:url": f"medium://@{author.username}",
        },
        names={
            "description": description,
            "twitter:card": "summary",
            "twitter:title": f"{author.name} – Medium",
            "twitter:description": description,
        },
        json_ld={
            "@context": "https://schema.org",
            "@type": "ProfilePage",
            "mainEntity": {
                "@type": "Person",
                "@id": author.url,
                "identifier": author.username,
                "name": author.name,
                "url": author.url,
            },
        },
        state=state.to_dict(),
        body=body,
    )


def publication_page(content: SiteContent, publication: SitePublication) -> str:
    """A publication home listing its stories, newest first. As in 2026, its state holds
    the stories only as ``Post`` nodes of ``{__typename, id}``: the cards carry the rest."""
    state = StateBuilder(content)
    key = root_call("collectionByDomainOrSlug", domainOrSlug=publication.domain or publication.slug)
    state.query(key, ref(state.collection(publication)))
    stories = content.stories_in(publication.slug)
    for story in stories:
        state.entities[f"Post:{story.id}"] = {"__typename": "Post", "id": story.id}
    host = host_of(publication.url)
    body = (
        f'<main><div class="ab"><h1>{esc(publication.name)}</h1>'
        f"<p>{esc(publication.description)}</p>"
        f"<span>{short_count(publication.followers)} followers</span></div>"
        f'<div class="ac">{_cards(content, stories, host, "collection_home", content.clock())}'
        "</div></main>"
    )
    return page(
        title=f"{publication.name} – Medium",
        canonical=publication.url,
        properties={
            "og:type": "website",
            "og:title": publication.name,
            "og:description": publication.description,
            "og:url": publication.url,
            "og:image": image_url(publication.logo_id, 200, 200),
        },
        names={
            "description": publication.description,
            "twitter:card": "summary",
            "twitter:title": publication.name,
            "twitter:description": publication.description,
        },
        json_ld={
            "@context": "https://schema.org",
            "@type": "Organization",
            "@id": publication.url,
            "name": publication.name,
            "url": publication.url,
            "description": publication.description,
        },
        state=state.to_dict(),
        body=body,
    )


def robots_txt() -> str:
    """robots.txt in the shape of Medium's (no crawl delay)."""
    return ROBOTS_TXT
