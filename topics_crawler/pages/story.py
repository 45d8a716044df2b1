"""Placeholder: replaced by the story parser."""

from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult


def parse_story(doc: Document) -> PageResult:
    """Not written yet."""
    return PageResult(kind="story", url=doc.url, errors=["parser not written yet"])
