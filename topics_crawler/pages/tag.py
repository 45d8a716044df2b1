"""Placeholder: replaced by the tag parser."""

from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult


def parse_tag(doc: Document) -> PageResult:
    """Not written yet."""
    return PageResult(kind="tag", url=doc.url, errors=["parser not written yet"])
