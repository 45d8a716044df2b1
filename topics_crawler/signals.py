"""Project signals (sent through ``crawler.signals``).

``page_failed``: a page could not be turned into data, for good. Sent with
``url`` (canonical), ``kind`` (tag, story, author, publication), ``status``
(last HTTP status or None), ``reason`` (short machine-readable text such as
``http_404``, ``timeout``, ``parse_failed``, ``challenge``), ``attempts``
(download attempts made) and ``spider``.

``host_paused``: the server asked a whole host to wait (a 429, a ``Retry-After``, a
challenge page). Sent with ``slot`` (the download slot key: the host) and ``until``
(epoch seconds); the scheduler's :class:`~topics_crawler.scheduling.not_before.NotBeforeGate`
holds that host's requests until then.

``plain_http_refused``: Cloudflare's WAF refused plain HTTP for a host (not transient), while
a browser may still be served. Sent with ``host`` (``medium.com`` for Medium and its
subdomains, else the custom domain) and ``block`` (the
:class:`~topics_crawler.pages._blocked.Block`, with its Ray ID); the render policy
(:mod:`topics_crawler.middlewares.render_policy`) sends that host's page requests through the
browser from then on.
"""

page_failed = object()

host_paused = object()

plain_http_refused = object()
