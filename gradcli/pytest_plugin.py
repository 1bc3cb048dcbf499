"""pytest plugin collecting *.grad scripts (being written)."""
