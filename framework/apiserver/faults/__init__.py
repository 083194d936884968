"""Fault injection for tests and chaos runs: failures a test asks for, and their HTTP control endpoint."""
