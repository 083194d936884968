"""gcm's command line (Gardener's ``cmd/gardener-controller-manager``): :mod:`gcm.cmd.main` parses
and dispatches, :mod:`gcm.cmd.app` builds the Manager for ``run``, :mod:`gcm.cmd.stale_report` is
``stale-report``; both commands resolve the configuration, kubeconfig and client through
:mod:`gcm.cmd.options`. No controller package imports this package."""
