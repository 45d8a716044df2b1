"""The browser, only where it is needed: render policy config, browser actions, completeness checks.

Chromium runs through scrapy-playwright (``meta["playwright"]``); which requests
get it is decided by :class:`topics_crawler.middlewares.render_policy.RenderPolicyMiddleware`.
"""
