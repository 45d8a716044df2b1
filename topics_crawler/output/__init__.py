"""Where items go: the Parquet and CSV exporters, checked local feed storage, side files."""
