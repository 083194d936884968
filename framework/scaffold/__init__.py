"""``python -m framework init`` / ``create api`` / ``create webhook``: a project skeleton as kubebuilder
writes one (see docs/extension-guide.md, "From zero to a running operator").

The commands write files from the templates in :mod:`framework.scaffold.templates` and record every
file they wrote in the project's ``PROJECT`` file (:mod:`framework.scaffold.files`); a command never
overwrites a file that is not recorded there, and names the file when it refuses. Files written
earlier are extended only at their ``# +framework:scaffold:<name>`` marker lines, as kubebuilder
extends ``main.go`` at its ``+kubebuilder:scaffold`` markers, so your edits elsewhere stay.
"""
