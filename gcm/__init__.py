"""gcm: the Gardener Controller Manager, on the ``framework`` controller library."""
