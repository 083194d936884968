"""A client-go-style controller framework for Python."""
