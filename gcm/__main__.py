"""``python -m gcm``: the Gardener Controller Manager (the command line is :mod:`gcm.cmd.main`)."""

from __future__ import annotations

import faulthandler
import signal
import sys

from gcm.cmd.main import EXIT_OK, EXIT_RUNTIME, EXIT_USAGE, main, make_client, parser, resolve_kubeconfig

__all__ = ["EXIT_OK", "EXIT_RUNTIME", "EXIT_USAGE", "main", "make_client", "parser", "resolve_kubeconfig"]

if __name__ == "__main__":
    # `kill -USR1 <pid>` dumps every thread's stack to stderr: the way to see where a stuck gcm waits.
    # Only for the gcm process itself: main() also runs in-process (tests), where stderr may be no file.
    faulthandler.register(signal.SIGUSR1, all_threads=True)
    sys.exit(main())
