"""Shim for ``scrapyd-deploy``, which runs ``python setup.py bdist_egg``.

Everything else — metadata, dependencies, the ``scrapy`` entry point Scrapyd reads the
settings module from, which packages go in — is in pyproject.toml. The egg is the project
alone; the Scrapyd host has the dependencies installed (docs/deploy.md). With
``scrapyd-deploy --include-dependencies`` (``bdist_uberegg``) the egg would get the runtime
pins of requirements-runtime.txt, not the full lock in requirements.txt — but compiled
dependencies (pyarrow, lxml, orjson) cannot load from a zipped egg, so that egg fails on a
host without them and only adds weight on one with them: not the way to deploy this project.
"""

from setuptools import setup

setup(
    zip_safe=False,
    options={"bdist_uberegg": {"requirements": "requirements-runtime.txt"}},
)
