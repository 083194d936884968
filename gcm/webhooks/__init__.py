"""gcm's admission webhooks, served on every replica by the manager's webhook server (``server.webhooks``).

Each webhook package exposes ``add_to_manager(mgr, cfg)`` and is registered by :mod:`gcm.webhooks.add`.
"""
