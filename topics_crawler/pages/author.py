"""Placeholder: replaced by the author parser."""

from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult


def parse_author(doc: Document) -> PageResult:
    """Not written yet."""
    return PageResult(kind="author", url=doc.url, errors=["parser not written yet"])
