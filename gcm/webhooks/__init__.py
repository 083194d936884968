"""gcm's admission webhooks, served on every replica by the manager's webhook server (``server.webhooks``).

Each webhook package wires itself in its ``add.py`` (``add_to_manager(mgr, cfg)``, as the controllers) and is
registered by :mod:`gcm.webhooks.add`.
"""
