"""The OpenAPI documents: /openapi/v2 (JSON and gnostic protobuf) and /openapi/v3."""
