"""The browser, only where it is needed: render policy config and browser actions.

Chromium runs through scrapy-playwright (``meta["playwright"]``); which requests
get it is decided by :class:`topics_crawler.middlewares.render_policy.RenderPolicyMiddleware`
from ``meta["render_reason"]``, which the spider sets from a page result's
``needs_browser`` signal (:mod:`topics_crawler.spiders._refetch`).
"""
