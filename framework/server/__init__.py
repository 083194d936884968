"""The HTTP server shared by the metrics, health-probe and webhook servers (aiohttp underneath).

See :mod:`framework.server.server` for the lifecycle and :mod:`framework.server.address` for
controller-runtime style bind addresses, :mod:`framework.server.connections` for the
connection deadlines and bounds.
"""

from framework.server.address import BindError, parse_bind_address
from framework.server.connections import ConnectionLimits
from framework.server.server import BodyTooLarge, HTTPServer, Request, Response, RouteHandler

__all__ = [
    "BindError",
    "BodyTooLarge",
    "ConnectionLimits",
    "HTTPServer",
    "Request",
    "Response",
    "RouteHandler",
    "parse_bind_address",
]
