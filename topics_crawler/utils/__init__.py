"""Small helpers several features share (as in ``scrapy.utils``)."""
