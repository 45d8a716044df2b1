"""Record a crawl's responses once, replay the parsers on them offline (:mod:`.addon`)."""
