"""What a write must pass before it is stored: namespace lifecycle, a terminating CRD, a custom
resource's schema (defaulting, pruning, validation) and the kind's validation."""

from __future__ import annotations

from framework.apiserver.crd.defaulting import apply_defaults
from framework.apiserver.crd.definition import version_entry
from framework.apiserver.crd.object_validation import validate_object
from framework.apiserver.crd.pruning import prune
from framework.apiserver.crd.values import has_rules
from framework.apiserver.machinery import errors, validation
from framework.apiserver.machinery.errors import FieldError, invalid_value
from framework.apiserver.registry.rest.body import BodyDecoding
from framework.apiserver.registry.rest.options import WriteOptions
from framework.apiserver.registry.strategy import ResourceType
from framework.meta import field

BLOCKING_TEXT = (
    "some validation rules were not checked because the object was invalid; correct the existing errors to"
    " complete validation"
)
# apiextensions-apiserver's hasBlockingErr: schema failures after which rules are not run.
_BLOCKING = frozenset(
    {
        errors.NOT_SUPPORTED,
        errors.REQUIRED,
        field.ErrorType.TOO_LONG,
        field.ErrorType.TOO_MANY,
        field.ErrorType.TYPE_INVALID,
    }
)


class WriteChecks(BodyDecoding):
    """Admission and validation rules common to creates and updates."""

    def _check_namespace_for_create(self, rt: ResourceType, ns: str, name: str) -> None:
        """NamespaceLifecycle admission: 404 in a missing namespace, 403 in a terminating one."""
        nsobj = self.storage.get("namespaces", ("", ns))
        if nsobj is None:
            raise errors.not_found("namespaces", "", ns)
        if (
            nsobj["metadata"].get("deletionTimestamp")
            or nsobj.get("status", {}).get("phase") == "Terminating"
        ):
            raise errors.forbidden_error(
                rt.resource,
                rt.group,
                name,
                f"unable to create new content in namespace {ns} because it is being terminated",
                [
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {ns} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    def _check_crd_not_terminating(self, rt: ResourceType, name: str) -> None:
        if rt.crd is None:
            return
        crd = self.storage.get(
            "customresourcedefinitions.apiextensions.k8s.io", ("", rt.crd["metadata"]["name"])
        )
        if crd is None or crd["metadata"].get("deletionTimestamp"):
            raise errors.forbidden_error(
                rt.resource,
                rt.group,
                name,
                "create not allowed while custom resource definition is terminating",
            )

    def _custom_schema(
        self, rt: ResourceType, obj: dict, opts: WriteOptions, warnings: list[str], old: dict | None = None
    ) -> list[FieldError]:
        """Default, prune and validate a custom resource against its version's schema (16-5..16-7),
        then its ``x-kubernetes-validations`` rules (``old``: the stored object on an update)."""
        assert rt.crd is not None
        entry = version_entry(rt.crd, rt.version) or {}
        schema = (entry.get("schema") or {}).get("openAPIV3Schema")
        unknown, opts.unknown_metadata = opts.unknown_metadata, []
        if schema:
            apply_defaults(obj, schema)
            unknown = unknown + prune(obj, schema)
        # Called without unknown fields too: a patch's own repeated keys are refused here under Strict.
        opts.strict_decoding([f'unknown field "{u}"' for u in unknown], warnings)
        if not schema:
            return []
        errs = validate_object(obj, schema)
        if not has_rules(schema):
            return errs
        if any(e.type in _BLOCKING for e in errs):
            # structural errors first: rules see only values of the declared types
            return [*errs, invalid_value("<nil>", None, BLOCKING_TEXT)]
        from framework.apiserver.crd import cel_validation  # CEL is loaded by the first CRD with rules

        cel_errs, cel_warnings = cel_validation.validate(schema, obj, old)
        warnings.extend(cel_warnings)
        return errs + cel_errs

    def _validate(self, rt: ResourceType, stored: dict, old: dict | None, generate: bool) -> list[FieldError]:
        errs = validation.validate_object_meta(
            stored["metadata"], namespaced=rt.namespaced, name_rule=rt.name_rule, generate_name_used=generate
        )
        if old is not None:
            errs += validation.validate_object_meta_update(stored["metadata"], old["metadata"])
        if rt.validate:
            errs += rt.validate(stored, old)
        return errs

    def _raise_invalid(self, rt: ResourceType, name: str, errs: list[FieldError]) -> None:
        if errs:
            raise errors.invalid(rt.kind, rt.group, name, errs)
