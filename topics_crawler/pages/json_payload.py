"""Placeholder: replaced by the json_payload parser."""

from topics_crawler.pages._document import Document
from topics_crawler.pages._result import PageResult


def parse_json(doc: Document) -> PageResult:
    """Not written yet."""
    return PageResult(kind="json", url=doc.url, errors=["parser not written yet"])
