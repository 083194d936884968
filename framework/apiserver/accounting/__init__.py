"""Who did what: per-user request accounting, and the JSON-lines request log of chaos runs."""
