"""gcm's controllers, one package per controller (``add.py`` wiring, ``reconciler.py`` logic), all
registered by :mod:`gcm.controllers.add`."""
