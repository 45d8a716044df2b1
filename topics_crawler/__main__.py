"""``python -m topics_crawler <command>``: see :mod:`topics_crawler.cli`."""

from topics_crawler.cli import main

raise SystemExit(main())
