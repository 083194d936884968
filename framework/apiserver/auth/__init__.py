"""Authentication and authorization: the authenticator, the RBAC authorizer with its bootstrap policy and
escalation checks, and ServiceAccount tokens.
"""
