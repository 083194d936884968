"""Validation (component-config.md §4, scenarios J 101-103) and decode errors: every error, with its path."""

import pytest

from gcm.config import (
    ConfigError,
    ControllerManagerConfiguration,
    LabelSelector,
    LabelSelectorRequirement,
    QuotaConfiguration,
    load_config,
    set_defaults,
    validate,
)
from gcm.config.errors import (
    ERROR_TYPE_FORBIDDEN,
    ERROR_TYPE_INVALID,
    ERROR_TYPE_NOT_SUPPORTED,
    ERROR_TYPE_REQUIRED,
)
from gcm.config.types import ControllerManagerControllerConfiguration, ProjectControllerConfiguration

HEADER = (
    "apiVersion: controllermanager.config.gardener.cloud/v1alpha1\nkind: ControllerManagerConfiguration\n"
)

KEY_REGEX_ERROR = (
    "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an "
    "alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is "
    "'([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
)


def errors_of(body: str) -> list[str]:
    with pytest.raises(ConfigError) as exc:
        load_config(text=HEADER + body)
    return exc.value.errors


def field_errors_of(body: str):
    with pytest.raises(ConfigError) as exc:
        load_config(text=HEADER + body)
    return [(e.type, e.field) for e in exc.value.field_errors]


def defaulted(**kwargs) -> ControllerManagerConfiguration:
    return set_defaults(ControllerManagerConfiguration(**kwargs))


def test_defaults_are_valid():
    assert validate(defaulted()) == []


# --- scenario 101: client connection ---------------------------------------------------------------


def test_scenario_101_negative_burst():
    cfg = defaulted()
    cfg.garden_client_connection.burst = -1
    errs = validate(cfg)
    assert [(e.type, e.field) for e in errs] == [(ERROR_TYPE_INVALID, "gardenClientConnection.burst")]
    assert str(errs[0]) == "gardenClientConnection.burst: Invalid value: -1: must be non-negative"
    assert errors_of("gardenClientConnection: {burst: -1}\n") == [
        "gardenClientConnection.burst: Invalid value: -1: must be non-negative"
    ]


# --- scenario 102: leader election -----------------------------------------------------------------


def test_scenario_102_leader_election_nil_unset_or_false_is_not_checked():
    cfg = defaulted()
    cfg.leader_election = None
    assert validate(cfg) == []
    cfg = defaulted()
    cfg.leader_election.leader_elect = None
    cfg.leader_election.resource_namespace = ""
    assert validate(cfg) == []
    cfg = defaulted()
    cfg.leader_election.leader_elect = False
    cfg.leader_election.resource_lock = ""
    cfg.leader_election.lease_duration = cfg.leader_election.renew_deadline
    assert validate(cfg) == []
    load_config(
        text=HEADER + "leaderElection: {leaderElect: false, leaseDuration: -1s, resourceLock: nope}\n"
    )


def test_scenario_102_empty_resource_namespace_is_required():
    cfg = defaulted()
    cfg.leader_election.resource_namespace = ""
    errs = validate(cfg)
    assert [(e.type, e.field) for e in errs] == [(ERROR_TYPE_REQUIRED, "leaderElection.resourceNamespace")]
    assert str(errs[0]) == "leaderElection.resourceNamespace: Required value: resourceNamespace is required"


def test_leader_election_required_fields():
    cfg = defaulted()
    le = cfg.leader_election
    le.resource_lock = le.resource_name = le.resource_namespace = ""
    assert [str(e) for e in validate(cfg)] == [
        "leaderElection.resourceLock: Required value: resourceLock is required",
        "leaderElection.resourceName: Required value: resourceName is required",
        "leaderElection.resourceNamespace: Required value: resourceNamespace is required",
    ]


def test_leader_election_durations_must_be_positive_and_lease_longer_than_renew():
    assert errors_of("leaderElection: {leaseDuration: -15s, renewDeadline: -1s, retryPeriod: -2s}\n") == [
        "leaderElection.leaseDuration: Invalid value: -15s: must be greater than zero",
        "leaderElection.renewDeadline: Invalid value: -1s: must be greater than zero",
        "leaderElection.retryPeriod: Invalid value: -2s: must be greater than zero",
        "leaderElection.leaseDuration: Invalid value: -15s: LeaseDuration must be greater than RenewDeadline",
    ]
    assert errors_of("leaderElection: {leaseDuration: 10s, renewDeadline: 10s}\n") == [
        "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline"
    ]
    assert errors_of("leaderElection: {leaseDuration: 5s}\n") == [
        "leaderElection.leaseDuration: Invalid value: 5s: LeaseDuration must be greater than RenewDeadline"
    ]


def test_renew_deadline_must_exceed_jittered_retry_period():
    """client-go refuses renewDeadline <= 1.2 x retryPeriod when the elector is built: caught at start-up."""
    assert errors_of("leaderElection: {leaseDuration: 15s, renewDeadline: 10s, retryPeriod: 20s}\n") == [
        "leaderElection.renewDeadline: Invalid value: 10s: must be greater than 1.2 x retryPeriod (20s): "
        "a leader must be able to retry its renewal"
    ]
    # exactly 1.2 x is still too little; just above passes
    assert errors_of("leaderElection: {renewDeadline: 2400ms, retryPeriod: 2s}\n")[0].startswith(
        "leaderElection.renewDeadline: Invalid value: 2.4s: must be greater than 1.2 x retryPeriod"
    )
    assert load_config(text=HEADER + "leaderElection: {renewDeadline: 2401ms, retryPeriod: 2s}\n")
    # without leader election nothing is checked
    assert load_config(
        text=HEADER + "leaderElection: {leaderElect: false, renewDeadline: 1s, retryPeriod: 20s}\n"
    )


def test_concurrent_syncs_zero_means_one_worker_everywhere():
    cfg = load_config(
        text=HEADER + "controllers:\n  project: {concurrentSyncs: 0}\n  event: {concurrentSyncs: 0}\n"
    )
    assert (cfg.controllers.project.workers, cfg.controllers.event.workers) == (1, 1)
    cfg = load_config(text=HEADER + "controllers:\n  project: {concurrentSyncs: 7}\n  event: {}\n")
    assert (cfg.controllers.project.workers, cfg.controllers.event.workers) == (7, 5)


def test_resource_lock_leases_and_legacy_names_accepted_others_not():
    for lock in ("leases", "configmaps", "configmapsleases", "endpoints", "endpointsleases"):
        assert load_config(text=HEADER + f"leaderElection: {{resourceLock: {lock}}}\n")
    assert errors_of("leaderElection: {resourceLock: etcd}\n") == [
        'leaderElection.resourceLock: Unsupported value: "etcd": supported values: "leases"'
    ]


# --- log settings ----------------------------------------------------------------------------------


def test_log_level_and_format_not_supported():
    assert errors_of("logLevel: warning\nlogFormat: md\n") == [
        'logLevel: Unsupported value: "warning": supported values: "debug", "info", "error"',
        'logFormat: Unsupported value: "md": supported values: "json", "text"',
    ]
    assert field_errors_of("logLevel: DEBUG\n") == [(ERROR_TYPE_NOT_SUPPORTED, "logLevel")]


@pytest.mark.parametrize("level", ["debug", "info", "error"])
@pytest.mark.parametrize("fmt", ["json", "text"])
def test_log_level_and_format_supported(level, fmt):
    cfg = load_config(text=HEADER + f"logLevel: {level}\nlogFormat: {fmt}\n")
    assert (cfg.log_level, cfg.log_format) == (level, fmt)


# --- scenario 103: quota project selectors ----------------------------------------------------------


def _with_quotas(*selectors) -> ControllerManagerConfiguration:
    project = ProjectControllerConfiguration(
        quotas=[QuotaConfiguration(project_selector=s) for s in selectors]
    )
    return defaulted(controllers=ControllerManagerControllerConfiguration(project=project))


def test_scenario_103_valid_in_expression():
    sel = LabelSelector(match_expressions=[LabelSelectorRequirement("role", "In", ["user"])])
    assert validate(_with_quotas(sel)) == []


def test_scenario_103_empty_match_expression():
    good = LabelSelector(match_expressions=[LabelSelectorRequirement("role", "In", ["user"])])
    bad = LabelSelector(match_expressions=[LabelSelectorRequirement()])
    errs = validate(_with_quotas(good, bad))
    base = "controllers.project.quotas[1].projectSelector.matchExpressions[0]"
    assert sorted((e.type, e.field) for e in errs) == [
        (ERROR_TYPE_INVALID, f"{base}.key"),
        (ERROR_TYPE_INVALID, f"{base}.key"),
        (ERROR_TYPE_INVALID, f"{base}.operator"),
    ]
    assert [str(e) for e in errs] == [
        f'{base}.operator: Invalid value: "": not a valid selector operator',
        f'{base}.key: Invalid value: "": name part must be non-empty',
        f'{base}.key: Invalid value: "": {KEY_REGEX_ERROR}',
    ]


def test_scenario_103_from_a_file():
    body = """
controllers:
  project:
    quotas:
    - config: {}
      projectSelector:
        matchExpressions: [{key: role, operator: In, values: [user]}]
    - config: {}
      projectSelector:
        matchExpressions: [{}]
"""
    base = "controllers.project.quotas[1].projectSelector.matchExpressions[0]"
    assert sorted(field_errors_of(body)) == [
        (ERROR_TYPE_INVALID, f"{base}.key"),
        (ERROR_TYPE_INVALID, f"{base}.key"),
        (ERROR_TYPE_INVALID, f"{base}.operator"),
    ]


def test_label_selector_rules():
    body = """
controllers:
  project:
    quotas:
    - config: {}
      projectSelector:
        matchLabels: {"bad key!": "ok", good: "bad value!"}
        matchExpressions:
        - {key: a, operator: In}
        - {key: b, operator: NotIn, values: []}
        - {key: c, operator: Exists, values: [x]}
        - {key: d, operator: DoesNotExist, values: [y]}
        - {key: e, operator: Gt, values: ["1"]}
        - {key: example.com/f, operator: In, values: ["-bad-"]}
        - {key: Example.com/g, operator: Exists}
        - {key: a/b/c, operator: Exists}
        - {key: /h, operator: Exists}
"""
    p = "controllers.project.quotas[0].projectSelector"
    errs = errors_of(body)
    assert [e.split(": ")[0] + ": " + e.split(": ")[1] for e in errs] == [
        f"{p}.matchLabels: Invalid value",
        f"{p}.matchLabels: Invalid value",
        f"{p}.matchExpressions[0].values: Required value",
        f"{p}.matchExpressions[1].values: Required value",
        f"{p}.matchExpressions[2].values: Forbidden",
        f"{p}.matchExpressions[3].values: Forbidden",
        f"{p}.matchExpressions[4].operator: Invalid value",
        f"{p}.matchExpressions[5].values[0]: Invalid value",
        f"{p}.matchExpressions[6].key: Invalid value",
        f"{p}.matchExpressions[7].key: Invalid value",
        f"{p}.matchExpressions[8].key: Invalid value",
    ]
    assert errs[0] == f'{p}.matchLabels: Invalid value: "bad key!": {KEY_REGEX_ERROR}'
    assert errs[1].startswith(
        f'{p}.matchLabels: Invalid value: "bad value!": a valid label must be an empty string'
    )
    assert errs[2] == (
        f"{p}.matchExpressions[0].values: Required value: must be specified when `operator` is 'In' or "
        "'NotIn'"
    )
    assert errs[4] == (
        f"{p}.matchExpressions[2].values: Forbidden: may not be specified when `operator` is 'Exists' or "
        "'DoesNotExist'"
    )
    assert errs[6] == f'{p}.matchExpressions[4].operator: Invalid value: "Gt": not a valid selector operator'
    assert "prefix part a lowercase RFC 1123 subdomain" in errs[8]
    assert "a qualified name must consist of" in errs[9]
    assert errs[10] == f'{p}.matchExpressions[8].key: Invalid value: "/h": prefix part must be non-empty'


def test_long_label_key_and_value():
    body = f"""
controllers:
  project:
    quotas:
    - config: {{}}
      projectSelector:
        matchLabels: {{{"k" * 64}: {"v" * 64}}}
"""
    errs = errors_of(body)
    assert [e.split(": ", 3)[-1] for e in errs] == [
        "name part must be no more than 63 characters",
        "must be no more than 63 characters",
    ]


# --- shootState (Gardener's only section check) ------------------------------------------------------


def test_shoot_state_concurrent_syncs_negative_rejected_zero_and_positive_allowed():
    assert errors_of("controllers:\n  shootState: {concurrentSyncs: -1}\n") == [
        "controllers.shootState.concurrentSyncs: Invalid value: -1: must be greater than or equal to 0"
    ]
    for n in (0, 1):
        load_config(text=HEADER + f"controllers:\n  shootState: {{concurrentSyncs: {n}}}\n")


# --- gcm's own checks --------------------------------------------------------------------------------


def test_project_and_event_numbers_and_durations():
    body = """
controllers:
  cacheSyncTimeout: 0s
  project:
    concurrentSyncs: -1
    minimumLifetimeDays: -1
    staleGracePeriodDays: -2
    staleExpirationTimeDays: -3
    staleSyncPeriod: 0s
  event:
    concurrentSyncs: -5
    ttlNonShootEvents: -1h
"""
    assert errors_of(body) == [
        "controllers.cacheSyncTimeout: Invalid value: 0s: must be greater than zero",
        "controllers.project.concurrentSyncs: Invalid value: -1: must be greater than or equal to 0",
        "controllers.project.minimumLifetimeDays: Invalid value: -1: must be greater than or equal to 0",
        "controllers.project.staleGracePeriodDays: Invalid value: -2: must be greater than or equal to 0",
        "controllers.project.staleExpirationTimeDays: Invalid value: -3: must be greater than or equal to 0",
        "controllers.project.staleSyncPeriod: Invalid value: 0s: must be greater than zero",
        "controllers.event.concurrentSyncs: Invalid value: -5: must be greater than or equal to 0",
        "controllers.event.ttlNonShootEvents: Invalid value: -1h0m0s: must be greater than zero",
    ]


def test_zero_concurrent_syncs_allowed():
    cfg = load_config(
        text=HEADER + "controllers:\n  project: {concurrentSyncs: 0}\n  event: {concurrentSyncs: 0}\n"
    )
    assert cfg.controllers.project.concurrent_syncs == 0


def test_ports_out_of_range():
    body = """
server:
  healthProbes: {port: -1}
  metrics: {port: 65536}
  webhooks: {port: 70000}
"""
    assert errors_of(body) == [
        "server.healthProbes.port: Invalid value: -1: must be between 1 and 65535, inclusive",
        "server.metrics.port: Invalid value: 65536: must be between 1 and 65535, inclusive",
        "server.webhooks.port: Invalid value: 70000: must be between 1 and 65535, inclusive",
    ]
    assert errors_of("server:\n  https: {port: -2}\n") == [
        "server.https.port: Invalid value: -2: must be between 1 and 65535, inclusive"
    ]


# --- decode errors (wrong types, bad durations), collected with everything else ------------------------


def test_bad_durations_name_their_field():
    body = """
controllers:
  cacheSyncTimeout: 2
  project: {staleSyncPeriod: 1d}
  event: {ttlNonShootEvents: "60"}
leaderElection: {leaseDuration: 15 s, renewDeadline: "", retryPeriod: 2S}
"""
    assert errors_of(body) == [
        'controllers.cacheSyncTimeout: Invalid value: 2: must be a duration string such as "1h30m" or "90s"',
        'controllers.project.staleSyncPeriod: Invalid value: "1d": time: unknown unit "d" in duration "1d"',
        'controllers.event.ttlNonShootEvents: Invalid value: "60": time: missing unit in duration "60"',
        'leaderElection.leaseDuration: Invalid value: "15 s": time: unknown unit " s" in duration "15 s"',
        'leaderElection.renewDeadline: Invalid value: "": time: invalid duration ""',
        'leaderElection.retryPeriod: Invalid value: "2S": time: unknown unit "S" in duration "2S"',
    ]


def test_wrong_types_name_their_field():
    body = """
gardenClientConnection: {qps: fast, burst: 1.5, kubeconfig: 42}
controllers:
  project:
    concurrentSyncs: "5"
    minimumLifetimeDays: true
    quotas: {}
  event: []
leaderElection: {leaderElect: "yes", resourceName: 7}
logLevel: 1
server:
  metrics: {port: "2719"}
  webhooks: {tls: /certs}
debugging: {enableProfiling: 1}
featureGates: {Foo: "true", Bar: true}
"""
    assert errors_of(body) == [
        'gardenClientConnection.qps: Invalid value: "fast": must be a number',
        "gardenClientConnection.burst: Invalid value: 1.5: must be an integer",
        "gardenClientConnection.kubeconfig: Invalid value: 42: must be a string",
        'controllers.project.concurrentSyncs: Invalid value: "5": must be an integer',
        "controllers.project.minimumLifetimeDays: Invalid value: true: must be an integer",
        "controllers.project.quotas: Invalid value: {}: must be a list",
        "controllers.event: Invalid value: []: must be an object",
        'leaderElection.leaderElect: Invalid value: "yes": must be a boolean (true or false)',
        "leaderElection.resourceName: Invalid value: 7: must be a string",
        "logLevel: Invalid value: 1: must be a string",
        'server.metrics.port: Invalid value: "2719": must be an integer',
        'server.webhooks.tls: Invalid value: "/certs": must be an object',
        "debugging.enableProfiling: Invalid value: 1: must be a boolean (true or false)",
        'featureGates[Foo]: Invalid value: "true": must be a boolean (true or false)',
    ]


def test_quota_config_checked_like_decoding_a_resource_quota():
    body = """
controllers:
  project:
    quotas:
    - projectSelector: {}
    - config:
        metadata: {labels: {a: 1}, annotations: []}
        spec:
          hard:
            count/secrets: "80"
            count/configmaps: 100
            requests.storage: 1.5Gi
            requests.cpu: 500m
            limits.memory: 1e3
            count/shoots.core.gardener.cloud: lots
            count/pods: 5mm
            count/services: true
    - config: {spec: []}
"""
    q = "controllers.project.quotas"
    assert errors_of(body) == [
        f"{q}[0].config: Required value: a v1 ResourceQuota object is required",
        f"{q}[1].config.metadata.labels[a]: Invalid value: 1: must be a string",
        f"{q}[1].config.metadata.annotations: Invalid value: []: must be an object",
        f'{q}[1].config.spec.hard[count/shoots.core.gardener.cloud]: Invalid value: "lots": quantities must '
        "match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        f'{q}[1].config.spec.hard[count/pods]: Invalid value: "5mm": unable to parse quantity\'s suffix',
        f"{q}[1].config.spec.hard[count/services]: Invalid value: true: quantities must match the regular "
        "expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'",
        f"{q}[2].config.spec: Invalid value: []: must be an object",
    ]


def test_every_error_is_collected_in_one_config_error():
    body = """
gardenClientConnection: {burst: -1}
controllers:
  project:
    staleGracePeriodDays: -1
    staleSyncPeriod: 1d
    quotas:
    - config: {}
      projectSelector: {matchExpressions: [{key: "", operator: ""}]}
leaderElection: {resourceNamespace: ""}
logLevel: warning
server:
  metrics: {port: 0.5}
"""
    with pytest.raises(ConfigError) as exc:
        load_config(text=HEADER + body)
    err = exc.value
    fields = [e.field for e in err.field_errors]
    assert fields == [
        "controllers.project.staleSyncPeriod",
        "server.metrics.port",
        "gardenClientConnection.burst",
        "logLevel",
        "controllers.project.quotas[0].projectSelector.matchExpressions[0].operator",
        "controllers.project.quotas[0].projectSelector.matchExpressions[0].key",
        "controllers.project.quotas[0].projectSelector.matchExpressions[0].key",
        "controllers.project.staleGracePeriodDays",
    ]
    # resourceNamespace "" is unset, so it is defaulted (as in Gardener) rather than rejected.
    assert len(err.errors) == len(fields) == 8
    assert (
        "controllers.project.staleGracePeriodDays: Invalid value: -1: must be greater than or equal to 0"
        in (err.errors)
    )
    message = str(err)
    assert message.startswith("invalid ControllerManagerConfiguration: 8 errors:\n  - ")
    for line in err.errors:
        assert f"\n  - {line}" in message


def test_config_error_names_the_file(tmp_path):
    path = tmp_path / "gcm.yaml"
    path.write_text(HEADER + "logFormat: xml\n")
    with pytest.raises(ConfigError) as exc:
        load_config(path)
    assert exc.value.source == str(path)
    assert str(exc.value) == (
        f'invalid ControllerManagerConfiguration in {path}: logFormat: Unsupported value: "xml": '
        'supported values: "json", "text"'
    )
    assert isinstance(exc.value, ValueError)


def test_error_types_exported():
    assert {ERROR_TYPE_FORBIDDEN, ERROR_TYPE_INVALID, ERROR_TYPE_NOT_SUPPORTED, ERROR_TYPE_REQUIRED} == {
        "FieldValueForbidden",
        "FieldValueInvalid",
        "FieldValueNotSupported",
        "FieldValueRequired",
    }
