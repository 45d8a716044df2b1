"""Shim for ``scrapyd-deploy``, which runs ``python setup.py bdist_egg`` (or ``bdist_uberegg``).

Everything else — metadata, dependencies, the ``scrapy`` entry point Scrapyd reads the
settings module from, which packages go in — is in pyproject.toml. With
``scrapyd-deploy --include-dependencies`` the egg gets the runtime pins of
requirements-runtime.txt (what a crawl needs), not the full lock in requirements.txt.
"""

from setuptools import setup

setup(
    zip_safe=False,
    options={"bdist_uberegg": {"requirements": "requirements-runtime.txt"}},
)
