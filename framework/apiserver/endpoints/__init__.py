"""HTTP: the front end, routing, content negotiation, query parameters, the list/watch/discovery/health/table
handlers and the request filters (k8s.io/apiserver's pkg/endpoints).
"""
