"""Scrapy add-ons: settings bundles switched on by one setting."""
