"""Object storage: versioned in-memory tables with one resourceVersion counter, their SQLite persistence and
the watchers fed from them.
"""
