"""Placeholder: replaced by the publication parser."""

from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult


def parse_publication(doc: Document) -> PageResult:
    """Not written yet."""
    return PageResult(kind="publication", url=doc.url, errors=["parser not written yet"])
