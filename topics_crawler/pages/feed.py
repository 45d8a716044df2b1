"""Placeholder: replaced by the feed parser."""

from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult


def parse_feed(doc: Document) -> PageResult:
    """Not written yet."""
    return PageResult(kind="feed", url=doc.url, errors=["parser not written yet"])
