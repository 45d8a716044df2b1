"""Packaging for Scrapyd: ``scrapyd-deploy`` builds an egg of ``topics_crawler`` from this file.

The ``scrapy`` entry point tells Scrapyd which settings module the project uses.
The package reads no data files at run time (checked: no ``open``/``importlib.resources``
of files inside the package), so the egg is the Python modules only; the tests stay out.
Metadata (name, version, Python) comes from pyproject.toml.
"""

from setuptools import find_packages, setup

setup(
    packages=find_packages(exclude=["tests", "tests.*", "bench", "bench.*"]),
    include_package_data=True,
    zip_safe=False,
    entry_points={"scrapy": ["settings = topics_crawler.settings"]},
)
