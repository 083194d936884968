"""gcm's controllers; each registers itself with ``gcm.app.register_controller``."""
