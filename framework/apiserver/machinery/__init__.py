"""Shared API machinery (k8s.io/apimachinery's counterparts): Status errors, ObjectMeta validation,
selectors, JSON patches and JSON value checks.
"""
