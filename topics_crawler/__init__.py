"""topics_crawler: Medium topic (tag) pages to clean datasets.

Importing the package (Scrapy imports it with the settings module, before any
middleware) points tldextract at its bundled public suffix list, so Scrapy's
cookie handling never downloads one at run time. Set
``TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS`` yourself to choose otherwise.
"""

import os

os.environ.setdefault("TLDEXTRACT_PUBLIC_SUFFIX_LIST_URLS", "")
