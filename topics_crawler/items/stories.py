"""The story items: :class:`Story` (a post) and :class:`StoryResponse` (a response to one,
itself a post). Formats (URL, Timestamp, Id, Count, ``*_raw``) as in
:mod:`topics_crawler.items.classes`; each field declared once with
:func:`~topics_crawler.items.fields.spec`.
"""

from __future__ import annotations

from dataclasses import dataclass

from topics_crawler.items.fields import DATA_SOURCE_DOC, Kind, spec


@dataclass(kw_only=True)
class Story:
    """One Medium story (post)."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"story"``.',
        default="story",
        init=False,
    )
    story_id: str | None = spec(
        Kind.POST_ID,
        "Medium post id, lowercase hex, 10 to 12 characters (``c9700a7cf36d``).",
        required=True,
        identity=0,
    )
    url: str | None = spec(
        Kind.URL,
        "Canonical URL of the story, on its canonical host (custom domains kept).",
        required=True,
    )
    canonical_url: str | None = spec(
        Kind.LINK,
        "Where the story says its original lives when that is off Medium (a cross-post's "
        "``rel=canonical``: Substack, habr.com, dev.to…), as given; None when the Medium URL "
        "is canonical. ``url`` (on Medium) stays the story's address.",
    )
    title: str | None = spec(Kind.TEXT, "Title, trimmed, NFC.", required=True)
    subtitle: str | None = spec(
        Kind.TEXT,
        "Subtitle (the deck under the title), trimmed; None when the story has none.",
    )
    author_id: str | None = spec(Kind.HEX_ID, "Medium user id of the author, lowercase hex.")
    author_username: str | None = spec(
        Kind.USERNAME,
        "Author's username without the leading ``@``.",
    )
    author_name: str | None = spec(Kind.TEXT, "Author's display name.")
    publication_id: str | None = spec(
        Kind.HEX_ID,
        "Medium id of the publication (collection); None when not in a publication.",
    )
    publication_slug: str | None = spec(
        Kind.SLUG,
        "Publication slug (``pinterest-engineering``); None when not in a publication.",
    )
    publication_name: str | None = spec(
        Kind.TEXT,
        "Publication display name; None when not in a publication.",
    )
    published_at: str | None = spec(
        Kind.TIMESTAMP,
        "First publication time, Timestamp (UTC).",
        raw="published_at_raw",
    )
    published_at_raw: str | None = spec(
        Kind.RAW,
        'Source text of ``published_at`` when it was relative or day-only (``"1d ago"``).',
    )
    updated_at: str | None = spec(Kind.TIMESTAMP, "Last update time, Timestamp (UTC).")
    reading_time_min: float | None = spec(
        Kind.MINUTES,
        "Estimated reading time in minutes, as Medium computes it (may have decimals).",
    )
    word_count: int | None = spec(
        Kind.COUNT,
        "Number of words in the body, as Medium reports it (or counted from the full text).",
    )
    claps: int | None = spec(Kind.COUNT, "Total clap count, Count.", raw="claps_raw")
    claps_raw: str | None = spec(
        Kind.RAW,
        'Source text of ``claps`` when it was abbreviated (``"1.2K"``).',
    )
    responses: int | None = spec(
        Kind.COUNT,
        "Number of responses (comments), Count.",
        raw="responses_raw",
    )
    responses_raw: str | None = spec(
        Kind.RAW,
        "Source text of ``responses`` when it was abbreviated.",
    )
    tags: list[str] = spec(
        Kind.TAG_LIST,
        "Tag slugs in page order (``machine-learning``), without duplicates.",
        factory=list,
    )
    is_member_only: bool | None = spec(
        Kind.BOOL,
        "True for member-only (locked) stories; None when the page does not say.",
    )
    language: str | None = spec(
        Kind.LANGUAGE,
        "Detected language, ISO 639-1 code (``en``), when Medium states it.",
    )
    image_url: str | None = spec(Kind.LINK, "Preview image URL (``https://miro.medium.com/...``).")
    images: list[dict[str, str | None]] = spec(
        Kind.RECORD_LIST,
        "The story's images as the crawl stored them (``-s IMAGES_ENABLED=1``; empty"
        ' otherwise): the preview image, then the body\'s, each ``{"role": "preview"|'
        '"body", "url", "path", "checksum", "failure"}``: ``path`` the local copy'
        " (``images/full/<sha1>.jpg``, relative to the dataset or feed folder), ``checksum``"
        " its MD5, ``failure`` why it could not be stored (``path`` None).",
        members=("role", "url", "path", "checksum", "failure"),
        factory=list,
    )
    text: str | None = spec(
        Kind.BODY,
        "Body as Markdown-flavoured plain text: paragraphs separated by blank lines.",
    )
    text_is_preview: bool | None = spec(
        Kind.BOOL,
        "True when ``text`` is only the preview a logged-out reader sees (locked story).",
    )
    access: str | None = spec(
        Kind.ACCESS,
        "How much of the story ``text`` holds: ``full``, ``preview`` (a member-only story as a"
        " logged-out reader sees it) or ``full_with_session`` (a member-only story shown whole"
        " to the user's own session cookie); None without text. No wall is bypassed.",
    )
    preview_share: float | None = spec(
        Kind.SHARE,
        "A preview's words over the story's word count, where Medium states the count"
        " (0.3127); None otherwise.",
    )
    markdown: str | None = spec(
        Kind.BODY,
        "Body as CommonMark with its formatting: headings, lists, fenced code (byte for "
        "byte), quotes, links, bold, italic, inline code, images (alt, caption), embeds as "
        "links. A locked story's preview ends with a line saying it is only the preview.",
    )
    in_response_to: str | None = spec(
        Kind.POST_ID,
        "Post id of the story (or response) this story answers, when it is a response; "
        "None for a story that answers nothing.",
    )
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the page was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )


@dataclass(kw_only=True)
class StoryResponse:
    """One response (comment) to a story, a row of the ``responses`` table. On Medium a
    response is itself a post that answers another post; threads are responses to
    responses. Fetched over GraphQL with ``-a responses=N`` (see docs/responses.md)."""

    item_type: str = spec(
        Kind.ITEM_TYPE,
        'Entity kind, always ``"response"``.',
        default="response",
        init=False,
    )
    response_id: str | None = spec(
        Kind.POST_ID,
        "Medium post id of the response, lowercase hex.",
        required=True,
        identity=0,
    )
    story_id: str | None = spec(
        Kind.POST_ID,
        "Id of the story whose thread this is (the root, whatever the depth).",
        required=True,
    )
    parent_id: str | None = spec(
        Kind.POST_ID,
        "Id of the post this response answers: the story at depth 1, a response deeper.",
        required=True,
    )
    depth: int | None = spec(
        Kind.COUNT,
        "1 for a response to the story, 2 for a reply to a response, and so on.",
        required=True,
    )
    url: str | None = spec(
        Kind.URL, "Canonical URL of the response (responses have story URLs of their own)."
    )
    author_id: str | None = spec(Kind.HEX_ID, "Medium user id of the response's author.")
    author_username: str | None = spec(
        Kind.USERNAME, "Author's username without the leading ``@``."
    )
    author_name: str | None = spec(Kind.TEXT, "Author's display name.")
    text: str | None = spec(Kind.BODY, "Body as plain text, paragraphs separated by blank lines.")
    text_is_preview: bool | None = spec(
        Kind.BOOL,
        "True when ``text`` is only the preview a logged-out reader sees (member-only).",
    )
    is_member_only: bool | None = spec(Kind.BOOL, "True for a member-only (locked) response.")
    claps: int | None = spec(Kind.COUNT, "Clap count, Count.")
    published_at: str | None = spec(Kind.TIMESTAMP, "First publication time, Timestamp (UTC).")
    data_source: str | None = spec(Kind.SOURCE, DATA_SOURCE_DOC)
    scraped_at: str | None = spec(
        Kind.TIMESTAMP,
        "When the response was fetched, Timestamp (UTC).",
        required=True,
        keep="latest",
    )
