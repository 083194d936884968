"""``python -m framework``: kubebuilder's commands for a Python project.

- ``init --domain DOMAIN [--project NAME] [--framework-path PATH]``: a new project in the current
  directory (named as the directory by default);
- ``create api --group G --version V --kind K [--cluster-scoped] [--no-resource] [--no-controller]
  [--storage]``: a kind's types, reconciler, sample and test; a further version of a kind (served, not
  stored unless ``--storage``) usually with ``--no-controller``;
- ``create webhook --group G --version V --kind K [--defaulting] [--validation] [--conversion --spoke
  V2]``: its admission webhooks, or its conversion webhook with V as the hub;
- ``generate [--check]``: CRDs, RBAC role and webhook manifests from the code.

Errors are one line on stderr with exit code 2 (``--check`` exits 1 for stale files); see
docs/extension-guide.md, "From zero to a running operator".
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from framework.generate.project import ProjectError

__all__ = ["main"]


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(prog="python -m framework", description="Scaffold and generate a project.")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    init = sub.add_parser("init", help="write a new project into the current directory")
    init.add_argument(
        "--domain", required=True, help="the domain of the project's API groups, e.g. example.com"
    )
    init.add_argument(
        "--project", help="the project's name, e.g. memcached-operator (default: the directory's name)"
    )
    init.add_argument(
        "--framework-path",
        help="the framework checkout the project depends on (default: $FRAMEWORK_PATH, else this one)",
    )

    create = sub.add_parser("create", help="add an API or a webhook")
    what = create.add_subparsers(dest="what", required=True, metavar="api|webhook")
    for name, help_text in (("api", "add a kind and its controller"), ("webhook", "add a kind's webhooks")):
        c = what.add_parser(name, help=help_text)
        c.add_argument("--group", required=True, help="the group without the domain, e.g. cache")
        c.add_argument("--version", required=True, help="e.g. v1alpha1")
        c.add_argument("--kind", required=True, help="e.g. Memcached")
        if name == "api":
            c.add_argument("--cluster-scoped", action="store_true", help="a cluster-scoped kind")
            c.add_argument(
                "--resource",
                action=argparse.BooleanOptionalAction,
                default=True,
                help="write the version's types (default: yes; --no-resource for a controller only)",
            )
            c.add_argument(
                "--controller",
                action=argparse.BooleanOptionalAction,
                default=True,
                help="write a controller (default: yes; --no-controller for a further version of a kind)",
            )
            c.add_argument(
                "--storage",
                action="store_true",
                help="make this version the storage version (the first version of a kind is by default)",
            )
        else:
            c.add_argument("--defaulting", action="store_true", help="a mutating (defaulting) webhook")
            c.add_argument("--validation", action="store_true", help="a validating webhook")
            c.add_argument(
                "--conversion",
                action="store_true",
                help="a CRD conversion webhook with --version as the hub (needs --spoke)",
            )
            c.add_argument(
                "--spoke",
                action="append",
                default=[],
                metavar="VERSION",
                help="a version converted to and from the hub (repeatable, or comma-separated)",
            )

    gen = sub.add_parser("generate", help="write CRDs, RBAC and webhook manifests from the code")
    gen.add_argument("--check", action="store_true", help="write nothing; exit 1 naming each stale file")
    return p


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    root = Path.cwd()
    try:
        if args.command == "generate":
            from framework.generate.cli import generate
            from framework.generate.project import load_project

            return generate(load_project(root), check=args.check)
        from framework.scaffold import commands

        if args.command == "init":
            written = commands.init(root, args.domain, args.project or root.name, args.framework_path)
        elif args.what == "api":
            written = commands.create_api(
                root,
                args.group,
                args.version,
                args.kind,
                args.cluster_scoped,
                resource=args.resource,
                controller=args.controller,
                storage=args.storage,
            )
        else:
            written = commands.create_webhook(
                root,
                args.group,
                args.version,
                args.kind,
                args.defaulting,
                args.validation,
                conversion=args.conversion,
                spokes=[v for given in args.spoke for v in given.split(",") if v],
            )
    except ProjectError as e:
        sys.stderr.write(f"error: {e}\n")
        return 2
    sys.stdout.write("".join(f"wrote {rel}\n" for rel in written))
    return 0


if __name__ == "__main__":
    sys.exit(main())
