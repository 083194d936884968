"""Moved to :mod:`framework.certwatcher` (the secure metrics server uses it too); kept importable here."""

from framework.certwatcher import CertWatcher

__all__ = ["CertWatcher"]
