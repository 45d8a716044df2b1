"""How the crawl's requests leave the machine: proxies, Zyte API, the address they come from.

Nothing here changes what the crawler says it is: the User-Agent stays the project's honest
one (``USER_AGENT``, the user's to set) through every egress. See ``docs/egress.md``.
"""
