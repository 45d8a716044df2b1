"""How much of a story the crawl saw: its access level and the preview's share of its words.

* ``full`` — the text is the whole story (a free story, or one the page showed whole);
* ``preview`` — a member-only story's text is the preview a logged-out reader sees;
* ``full_with_session`` — a member-only story whose whole text the page showed because the
  request carried the user's own Medium session (``MEDIUM_COOKIE`` / ``MEDIUM_SID``,
  :mod:`topics_crawler.safety.secrets`); nothing else ever gets past the wall.

None when the row holds no text (a listing card). The spider marks what the session
showed (:func:`topics_crawler.spiders._helpers.seen_with_session`). ``preview_share`` is
the preview's words over the story's word count, only where Medium states the count (a
page's state); never estimated.
"""

from __future__ import annotations

FULL = "full"
PREVIEW = "preview"
FULL_WITH_SESSION = "full_with_session"
ACCESS_LEVELS = (FULL, PREVIEW, FULL_WITH_SESSION)


def access_level(has_text: bool, preview: bool | None) -> str | None:
    """The access level of a body: None without text."""
    if not has_text:
        return None
    return PREVIEW if preview else FULL


def preview_share(preview_words: int | None, stated_words: int | None) -> float | None:
    """The preview's words over the words Medium states for the story (4 decimals); None
    when either is unknown or they disagree (a preview longer than the story)."""
    if not preview_words or not stated_words or preview_words > stated_words:
        return None
    return round(preview_words / stated_words, 4)
