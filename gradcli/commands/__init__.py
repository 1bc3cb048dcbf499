"""One module per command; each parses its options, calls the library and renders. Nothing computes here."""
