"""Loading (component-config.md §1, §5, §6; scenario J 104): files, formats, non-strictness, bad files."""

import json
import logging
from pathlib import Path

import pytest
import structlog
import yaml

from gcm.config import (
    API_VERSION,
    KIND,
    ConfigError,
    ControllerManagerConfiguration,
    LabelSelector,
    LabelSelectorRequirement,
    apply_env_overrides,
    decode_config,
    default_config,
    load_config,
)
from gcm.config.load import IGNORED_LEGACY, IGNORED_UNIMPLEMENTED, IGNORED_UNKNOWN, UNIMPLEMENTED_CONTROLLERS

HERE = Path(__file__).parent
SPEC_EXAMPLE = HERE / "spec-example.yaml"
GARDENER_FILE = HERE / "gardener-controller-manager-config.yaml"
HEADER = f"apiVersion: {API_VERSION}\nkind: {KIND}\n"


def config_error(source=None, **kwargs) -> ConfigError:
    with pytest.raises(ConfigError) as exc:
        load_config(source, **kwargs)
    return exc.value


# --- the spec's example ------------------------------------------------------------------------------


def test_spec_example_loads_with_its_values():
    cfg = load_config(SPEC_EXAMPLE)
    conn = cfg.garden_client_connection
    assert (conn.kubeconfig, conn.qps, conn.burst) == ("/etc/gcm/kubeconfig", 100.0, 130)
    ctrl = cfg.controllers
    assert str(ctrl.cache_sync_timeout) == "2m0s"
    p = ctrl.project
    assert (p.concurrent_syncs, p.minimum_lifetime_days, p.stale_grace_period_days) == (10, 30, 14)
    assert p.stale_expiration_time_days == 90
    assert p.stale_sync_period == 12 * 3600 and p.stale_sync_period.original == "12h"
    assert len(p.quotas) == 2
    trial, everybody = p.quotas
    assert trial.project_selector == LabelSelector(match_labels={"tier": "trial"})
    assert trial.config["metadata"]["labels"] == {"quota.example.com/tier": "trial"}
    assert trial.config["spec"]["hard"] == {"count/shoots.core.gardener.cloud": "2", "count/secrets": "80"}
    assert everybody.project_selector == LabelSelector()
    assert everybody.config["kind"] == "ResourceQuota"
    assert everybody.config["spec"]["hard"]["count/credentialsbindings.security.gardener.cloud"] == "10"
    assert trial.project_selector.matches({"tier": "trial"}) and not trial.project_selector.matches({})
    assert everybody.project_selector.matches({"anything": "x"})
    assert ctrl.event.concurrent_syncs == 5
    assert str(ctrl.event.ttl_non_shoot_events) == "2h0m0s"
    assert ctrl.unimplemented == {"shootMaintenance": {"concurrentSyncs": 5}}
    le = cfg.leader_election
    assert (le.leader_elect, le.resource_lock, le.resource_namespace) == (True, "leases", "garden")
    assert le.resource_name == "gardener-controller-manager-leader-election"
    assert (str(le.lease_duration), str(le.renew_deadline), str(le.retry_period)) == ("15s", "10s", "2s")
    assert (cfg.log_level, cfg.log_format) == ("info", "json")
    assert (cfg.server.health_probes.bind_address, cfg.server.health_probes.port) == ("0.0.0.0", 2718)
    assert (cfg.server.metrics.bind_address, cfg.server.metrics.port) == ("0.0.0.0", 2719)
    assert cfg.debugging.enable_profiling is False and cfg.debugging.enable_contention_profiling is False
    assert cfg.feature_gates == {}


def test_spec_example_as_json_loads_identically():
    doc = yaml.safe_load(SPEC_EXAMPLE.read_text())
    assert load_config(text=json.dumps(doc, indent=2)) == load_config(SPEC_EXAMPLE)
    assert load_config(json.dumps(doc)) == load_config(SPEC_EXAMPLE)  # a str starting with "{" is text


def test_source_forms(tmp_path):
    text = SPEC_EXAMPLE.read_text()
    expected = load_config(SPEC_EXAMPLE)
    assert load_config(str(SPEC_EXAMPLE)) == expected
    assert load_config(text) == expected  # multi-line str = the document
    assert load_config(text.encode()) == expected
    assert load_config(text=text) == expected
    json_file = tmp_path / "config.json"
    json_file.write_text(json.dumps(yaml.safe_load(text)))
    assert load_config(json_file) == expected


def test_minimal_file_is_the_two_lines(tmp_path):
    path = tmp_path / "minimal.yaml"
    path.write_text(HEADER)
    cfg = load_config(path)
    assert cfg == load_config(None) == default_config()
    assert cfg.controllers.project is not None and cfg.controllers.event is None
    assert cfg.leader_election.leader_elect is True and cfg.leader_election.resource_namespace == "garden"


def test_to_dict_round_trips():
    cfg = load_config(SPEC_EXAMPLE)
    data = cfg.to_dict()
    assert data["apiVersion"] == API_VERSION and data["kind"] == KIND
    assert data["controllers"]["project"]["staleSyncPeriod"] == "12h0m0s"
    assert data["controllers"]["shootMaintenance"] == {"concurrentSyncs": 5}
    assert data["controllers"]["project"]["quotas"][0]["projectSelector"] == {
        "matchLabels": {"tier": "trial"},
        "matchExpressions": [],
    }
    assert load_config(text=json.dumps(data)) == cfg


# --- a real Gardener-style file ----------------------------------------------------------------------


def test_gardener_style_file_with_every_controller_section_loads():
    cfg = load_config(GARDENER_FILE)
    ctrl = cfg.controllers
    assert set(ctrl.unimplemented) == UNIMPLEMENTED_CONTROLLERS | {"plant", "backupBucket", "backupEntry"}
    assert len(ctrl.unimplemented) == 28
    assert ctrl.unimplemented["shootRetry"] == {
        "concurrentSyncs": 5,
        "retryPeriod": "10m0s",
        "retryJitterPeriod": "5m0s",
    }
    assert ctrl.project.concurrent_syncs == 20
    assert str(ctrl.project.stale_sync_period) == "12h0m0s"
    assert [q.project_selector for q in ctrl.project.quotas] == [
        LabelSelector(
            match_labels={"landscape.example.com/managed": "true"},
            match_expressions=[LabelSelectorRequirement("tier", "In", ["trial", "free"])],
        ),
        LabelSelector(),
    ]
    assert ctrl.project.quotas[1].config["spec"]["hard"]["count/secrets"] == 400
    assert (ctrl.event.concurrent_syncs, str(ctrl.event.ttl_non_shoot_events)) == (10, "2h0m0s")
    conn = cfg.garden_client_connection
    assert conn.kubeconfig == "/var/run/secrets/gardener.cloud/shoot/generic-kubeconfig/kubeconfig"
    assert (conn.qps, conn.burst, conn.content_type) == (100.0, 130, "")
    # gardener-operator renders unset durations as 0s and the lock as "": defaults apply
    le = cfg.leader_election
    assert (le.leader_elect, le.resource_lock, le.resource_namespace) == (True, "leases", "kube-system")
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (15.0, 10.0, 2.0)
    assert cfg.debugging.enable_profiling is False
    assert cfg.feature_gates == {
        "UseNamespacedCloudProfile": True,
        "CredentialsRotationWithoutWorkersRollout": False,
    }


def test_gardener_style_file_reports_what_it_ignores():
    result = decode_config(yaml.safe_load(GARDENER_FILE.read_text()))
    assert result.errors == []
    kinds = {i.path: i.kind for i in result.ignored}
    for section in UNIMPLEMENTED_CONTROLLERS:
        assert kinds[f"controllers.{section}"] == IGNORED_UNIMPLEMENTED
    for section in ("plant", "backupBucket", "backupEntry"):
        assert kinds[f"controllers.{section}"] == IGNORED_LEGACY
    assert "controllers.project" not in kinds and "controllers.event" not in kinds


# --- non-strict decoding (scenario 104) ---------------------------------------------------------------


UNKNOWN_AND_LEGACY = """
kubernetesLogLevel: 0
somethingNew: {a: 1}
clientConnection: {qps: 1}
gardenClientConnection: {qps: 70, futureOption: true}
controllers:
  projekt: {concurrentSyncs: 1}
  plant: {syncPeriod: 10s}
  shootCare: {concurrentSyncs: 5}
  project:
    concurrentSyncs: 3
    unknownKnob: x
    quotas:
    - config: {spec: {hard: {count/secrets: "1"}}}
      projectSelector: {matchLabels: {a: b}, extra: 1}
      note: hello
  event: {ttlNonShootEvents: 30m, extra: true}
leaderElection:
  lockObjectNamespace: garden
  lockObjectName: gardener-controller-manager-leader-election
  resourceLock: configmaps
server:
  http: {bindAddress: 0.0.0.0, port: 2718}
  healthProbes: {port: 3718, tls: {}}
debugging: {enableProfiling: true, future: 1}
"""


def test_unknown_and_legacy_fields_are_accepted():
    cfg = load_config(text=HEADER + UNKNOWN_AND_LEGACY)
    assert cfg.garden_client_connection.qps == 70.0
    assert cfg.controllers.project.concurrent_syncs == 3
    assert cfg.controllers.project.quotas[0].project_selector == LabelSelector(match_labels={"a": "b"})
    assert cfg.controllers.event.ttl_non_shoot_events == 1800
    assert cfg.leader_election.resource_lock == "configmaps"
    assert cfg.leader_election.resource_namespace == "garden"
    assert cfg.server.health_probes.port == 3718
    assert cfg.server.http.port == 2718  # legacy, kept but unused
    assert cfg.debugging.enable_profiling is True
    assert set(cfg.controllers.unimplemented) == {"plant", "shootCare"}  # not the typo "projekt"


def test_ignored_fields_are_classified():
    result = decode_config(yaml.safe_load(HEADER + UNKNOWN_AND_LEGACY))
    assert result.errors == []
    assert [(i.path, i.kind) for i in result.ignored] == [
        ("kubernetesLogLevel", IGNORED_LEGACY),
        ("somethingNew", IGNORED_UNKNOWN),
        ("clientConnection", IGNORED_LEGACY),
        ("gardenClientConnection.futureOption", IGNORED_UNKNOWN),
        ("controllers.projekt", IGNORED_UNKNOWN),
        ("controllers.plant", IGNORED_LEGACY),
        ("controllers.shootCare", IGNORED_LEGACY),
        ("controllers.project.unknownKnob", IGNORED_UNKNOWN),
        ("controllers.project.quotas[0].projectSelector.extra", IGNORED_UNKNOWN),
        ("controllers.project.quotas[0].note", IGNORED_UNKNOWN),
        ("controllers.event.extra", IGNORED_UNKNOWN),
        ("leaderElection.lockObjectNamespace", IGNORED_LEGACY),
        ("leaderElection.lockObjectName", IGNORED_LEGACY),
        ("server.http", IGNORED_LEGACY),
        ("server.healthProbes.tls", IGNORED_UNKNOWN),
        ("debugging.future", IGNORED_UNKNOWN),
        ("leaderElection.resourceLock", IGNORED_LEGACY),
    ]


@pytest.fixture
def debug_logs():
    """structlog at DEBUG with captured output, restoring the suite's configuration afterwards."""
    saved = structlog.get_config()
    structlog.configure(wrapper_class=structlog.make_filtering_bound_logger(logging.DEBUG))
    try:
        with structlog.testing.capture_logs() as logs:
            yield logs
    finally:
        structlog.configure(**saved)


def test_ignored_fields_are_logged_unknown_ones_as_warnings(debug_logs):
    body = UNKNOWN_AND_LEGACY.replace("server:\n", "server:\n  https: {port: 1}\n  webhooks: {port: 2}\n")
    load_config(text=HEADER + body)
    by_field = {e["field"]: e for e in debug_logs}
    # an unknown field may be a typo that turns something off: a warning, with the nearest known field
    assert by_field["somethingNew"]["log_level"] == "warning"
    assert by_field["somethingNew"]["event"] == "ignoring unknown configuration field"
    assert "did_you_mean" not in by_field["somethingNew"]
    assert by_field["controllers.projekt"]["did_you_mean"] == "controllers.project"
    assert by_field["controllers.project.unknownKnob"]["log_level"] == "warning"
    assert by_field["controllers.plant"]["event"] == "ignoring legacy configuration field"
    assert by_field["controllers.plant"]["log_level"] == "debug"
    assert by_field["server.https"]["note"] == "server.webhooks is set and takes precedence"
    # a legacy lock changes behaviour (gcm uses a Lease): worth a warning
    assert by_field["leaderElection.resourceLock"]["log_level"] == "warning"


def test_ignored_fields_can_be_logged_later(debug_logs):
    """``ignored=`` collects instead of logging, so gcm logs them once logging is configured."""
    ignored: list = []
    load_config(text=HEADER + "controlers: {project: {}}\n", ignored=ignored)
    assert debug_logs == []
    assert [(i.path, i.kind, i.suggestion) for i in ignored] == [
        ("controlers", IGNORED_UNKNOWN, "controllers")
    ]


def test_unimplemented_sections_logged_at_debug(debug_logs):
    load_config(GARDENER_FILE)
    unimplemented = [e for e in debug_logs if e["event"].startswith("ignoring configuration of a controller")]
    assert {e["field"] for e in unimplemented} == {f"controllers.{s}" for s in UNIMPLEMENTED_CONTROLLERS}
    assert all(e["log_level"] == "debug" for e in unimplemented)


def test_legacy_https_is_the_webhook_listener_unless_webhooks_is_set():
    https = "server:\n  https:\n    bindAddress: 0.0.0.0\n    port: 2719\n    tls:\n"
    https += "      serverCertPath: /srv/gcm.crt\n      serverKeyPath: /srv/gcm.key\n"
    listener = load_config(text=HEADER + https).server.webhook_listener()
    assert (listener.bind_address, listener.port, listener.source) == ("0.0.0.0", 2719, "server.https")
    assert (listener.cert_path, listener.key_path) == ("/srv/gcm.crt", "/srv/gcm.key")
    both = load_config(text=HEADER + https + "  webhooks:\n    tls: {serverCertDir: /etc/gcm/tls}\n")
    listener = both.server.webhook_listener()
    assert (listener.port, listener.cert_dir, listener.source) == (2721, "/etc/gcm/tls", "server.webhooks")
    assert listener.cert_path is None
    no_tls = load_config(text=HEADER + "server:\n  https: {port: 8443}\n").server.webhook_listener()
    assert (no_tls.port, no_tls.cert_path, no_tls.key_path) == (8443, None, None)


def test_null_entries_in_lists_and_maps():
    cfg = load_config(text=HEADER + "featureGates: {A: null}\n")
    assert cfg.feature_gates == {"A": False}  # Go's zero value
    # a null quota entry is an empty one, and its ResourceQuota is required (spec table)
    errs = config_error(text=HEADER + "controllers:\n  project:\n    quotas: [null]\n  event: {}\n").errors
    assert errs == [
        "controllers.project.quotas[0].config: Required value: a v1 ResourceQuota object is required"
    ]


# --- KUBECONFIG ---------------------------------------------------------------------------------------


def test_kubeconfig_env_overrides_the_file():
    cfg = load_config(SPEC_EXAMPLE)
    assert apply_env_overrides(cfg, {"KUBECONFIG": "/home/op/.kube/garden"}) is cfg
    assert cfg.garden_client_connection.kubeconfig == "/home/op/.kube/garden"
    cfg = apply_env_overrides(load_config(SPEC_EXAMPLE), {"KUBECONFIG": ""})
    assert cfg.garden_client_connection.kubeconfig == "/etc/gcm/kubeconfig"
    cfg = apply_env_overrides(load_config(SPEC_EXAMPLE), {})
    assert cfg.garden_client_connection.kubeconfig == "/etc/gcm/kubeconfig"


def test_load_config_does_not_read_the_environment(monkeypatch):
    monkeypatch.setenv("KUBECONFIG", "/somewhere/else")
    assert load_config(SPEC_EXAMPLE).garden_client_connection.kubeconfig == "/etc/gcm/kubeconfig"
    monkeypatch.setenv("KUBECONFIG", "/x")
    assert apply_env_overrides(load_config()).garden_client_connection.kubeconfig == "/x"


# --- bad files ----------------------------------------------------------------------------------------


def test_wrong_kind_is_named():
    err = config_error(text=f"apiVersion: {API_VERSION}\nkind: GardenletConfiguration\n")
    assert err.errors == [
        'kind: Unsupported value: "GardenletConfiguration": '
        'supported values: "ControllerManagerConfiguration"'
    ]
    assert [(e.type, e.field) for e in err.field_errors] == [("FieldValueNotSupported", "kind")]


def test_wrong_api_version_is_named():
    err = config_error(text=f"apiVersion: controllermanager.config.gardener.cloud/v1beta1\nkind: {KIND}\n")
    assert err.errors == [
        'apiVersion: Unsupported value: "controllermanager.config.gardener.cloud/v1beta1": supported values: '
        '"controllermanager.config.gardener.cloud/v1alpha1"'
    ]


def test_missing_api_version_and_kind():
    err = config_error(text="logLevel: info\ncontrollers: {}\n")
    assert err.errors == [
        "apiVersion: Required value: must be 'controllermanager.config.gardener.cloud/v1alpha1'",
        "kind: Required value: must be 'ControllerManagerConfiguration'",
    ]


def test_wrong_kind_stops_before_other_checks():
    err = config_error(text="apiVersion: v1\nkind: ConfigMap\nlogLevel: 5\ndata: {config.yaml: x}\n")
    assert [e.field for e in err.field_errors] == ["apiVersion", "kind"]


def test_not_yaml(tmp_path):
    path = tmp_path / "broken.yaml"
    path.write_text("\napiVersion: x\n  kind: y\n")
    err = config_error(path)
    assert err.errors == [
        "the file is not valid YAML or JSON: line 3, column 7: mapping values are not allowed here"
    ]
    assert str(err).startswith(
        f"invalid ControllerManagerConfiguration in {path}: the file is not valid YAML"
    )
    assert err.field_errors == []


def test_not_json():
    err = config_error(text='{"apiVersion": "x",}')
    assert err.errors[0].startswith("the file is not valid JSON: ")


@pytest.mark.parametrize(
    ("text", "what"),
    [("- a\n- b\n", "list"), ("just a string\n", "string"), ("42\n", "int"), ("---\nnull\n", "null")],
)
def test_not_an_object(text, what):
    assert config_error(text=text).errors == [
        f"the file must contain one YAML or JSON object (a ControllerManagerConfiguration), not a {what}"
    ]


def test_multiple_documents_rejected():
    assert "not valid YAML" in config_error(text=HEADER + "---\n" + HEADER).errors[0]


@pytest.mark.parametrize("text", ["", "\n\n", "   \n", b""])
def test_empty_file(text):
    assert config_error(text=text).errors == [
        f"the file is empty; it needs at least apiVersion: {API_VERSION} and kind: {KIND}"
    ]


def test_comment_only_file_is_not_an_object():
    assert "not a null" in config_error(text="# nothing here\n").errors[0]


def test_not_utf8():
    assert config_error(text=b"\xff\xfe\x00a").errors[0].startswith("the file is not UTF-8 text")


def test_missing_file(tmp_path):
    path = tmp_path / "nope.yaml"
    err = config_error(path)
    assert err.errors == [f"cannot read config file '{path}': No such file or directory"]
    assert err.source == str(path)


def test_directory_instead_of_file(tmp_path):
    assert config_error(tmp_path).errors[0].startswith(f"cannot read config file '{tmp_path}'")


def test_utf8_bom_and_crlf_accepted():
    text = "\ufeff" + (HEADER + "logLevel: debug\n").replace("\n", "\r\n")
    assert load_config(text.encode("utf-8")).log_level == "debug"


def test_yaml_anchors_and_non_string_keys():
    body = "controllers:\n  project: &p {concurrentSyncs: 7}\n  shootState: *p\nfeatureGates: {1: true}\n"
    cfg = load_config(text=HEADER + body)
    assert cfg.controllers.project.concurrent_syncs == 7
    assert cfg.controllers.unimplemented["shootState"] == {"concurrentSyncs": 7}
    assert cfg.feature_gates == {"1": True}


def test_configuration_dataclass_defaults_are_undefaulted():
    cfg = ControllerManagerConfiguration()
    assert cfg.leader_election is None and cfg.controllers.project is None and cfg.log_level == ""
