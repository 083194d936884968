"""Test-wide settings: structlog at INFO, so debug chatter of servers and informers stays out of reports."""

import logging

import structlog

structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.INFO))
