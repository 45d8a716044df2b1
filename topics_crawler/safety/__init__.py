"""What a crawl may reach and what it never writes: the address resolver, link checks, secrets."""
