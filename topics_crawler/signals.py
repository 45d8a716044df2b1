"""Project signals (sent through ``crawler.signals``).

``page_failed``: a page could not be turned into data, for good. Sent with
``url`` (canonical), ``kind`` (tag, story, author, publication), ``status``
(last HTTP status or None), ``reason`` (short machine-readable text such as
``http_404``, ``timeout``, ``parse_failed``, ``challenge``), ``attempts``
(download attempts made) and ``spider``.
"""

page_failed = object()
