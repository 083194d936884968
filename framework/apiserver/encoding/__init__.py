"""Wire formats, decoded as kube-apiserver's Go decoders do: JSON (Go's error texts), YAML, base64, times,
nulls, typed built-in kinds and protobuf.
"""
