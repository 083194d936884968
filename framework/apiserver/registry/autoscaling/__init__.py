"""Kinds of the `autoscaling` group."""
