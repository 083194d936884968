"""Defaulting (component-config.md §3, scenarios J 97-100): every default, and explicit values kept."""

import pytest

from gcm.config import (
    ControllerManagerConfiguration,
    Duration,
    LabelSelector,
    LabelSelectorRequirement,
    QuotaConfiguration,
    load_config,
    parse_duration,
    set_defaults,
)
from gcm.config.types import (
    ControllerManagerControllerConfiguration,
    EventControllerConfiguration,
    LeaderElectionConfiguration,
    ProjectControllerConfiguration,
    Server,
    ServerConfiguration,
)

HEADER = (
    "apiVersion: controllermanager.config.gardener.cloud/v1alpha1\nkind: ControllerManagerConfiguration\n"
)


def load(body: str = "") -> ControllerManagerConfiguration:
    return load_config(text=HEADER + body)


def assert_all_defaults(cfg: ControllerManagerConfiguration) -> None:
    assert cfg.log_level == "info"
    assert cfg.log_format == "json"
    conn = cfg.garden_client_connection
    assert (conn.kubeconfig, conn.qps, conn.burst) == ("", 50.0, 100)
    assert (conn.accept_content_types, conn.content_type) == ("", "")  # not defaulted
    le = cfg.leader_election
    assert le is not None
    assert le.leader_elect is True
    assert le.resource_lock == "leases"
    assert str(le.lease_duration) == "15s" and le.lease_duration == 15.0
    assert str(le.renew_deadline) == "10s" and le.renew_deadline == 10.0
    assert str(le.retry_period) == "2s" and le.retry_period == 2.0
    assert le.resource_namespace == "garden"
    assert le.resource_name == "gardener-controller-manager-leader-election"
    assert cfg.server.health_probes == Server(bind_address="", port=2718)
    assert cfg.server.metrics == Server(bind_address="", port=2719)
    assert cfg.server.webhooks is None
    assert cfg.server.https is None
    assert cfg.server.webhook_listener() is None
    ctrl = cfg.controllers
    assert str(ctrl.cache_sync_timeout) == "2m0s" and ctrl.cache_sync_timeout == 120.0
    p = ctrl.project
    assert p is not None
    assert p.concurrent_syncs == 5
    assert p.minimum_lifetime_days == 30
    assert p.stale_grace_period_days == 14
    assert p.stale_expiration_time_days == 90
    assert str(p.stale_sync_period) == "12h0m0s" and p.stale_sync_period == 12 * 3600
    assert p.quotas == []
    assert p.extension_roles is False  # gcm's switch: off unless asked for (docs/rbac.md)
    assert ctrl.event is None  # Event controller disabled
    assert ctrl.unimplemented == {}
    assert cfg.debugging is not None
    assert cfg.debugging.enable_profiling is False
    assert cfg.debugging.enable_contention_profiling is False
    assert cfg.feature_gates is None


def test_scenario_97_empty_config_gets_every_default():
    assert_all_defaults(set_defaults(ControllerManagerConfiguration()))


def test_minimal_file_and_no_file_are_all_defaults():
    assert_all_defaults(load())
    assert_all_defaults(load_config())
    assert_all_defaults(load_config(None))
    assert load() == load_config()


def test_empty_sections_are_defaulted_like_absent_ones():
    body = (
        "gardenClientConnection: {}\ncontrollers: {project: {}}\nleaderElection: {}\n"
        "server: {healthProbes: {}, metrics: {}}\ndebugging: {}\nlogLevel: ''\nlogFormat: ''\n"
    )
    assert_all_defaults(load(body))


def test_null_sections_are_absent():
    body = (
        "gardenClientConnection:\ncontrollers:\n  project:\n  event:\nleaderElection:\nserver:\ndebugging:\n"
    )
    assert_all_defaults(load(body))


def test_scenario_98_event_section_present_gets_defaults():
    cfg = load("controllers:\n  event: {}\n")
    assert cfg.controllers.event == EventControllerConfiguration(
        concurrent_syncs=5, ttl_non_shoot_events=parse_duration("1h")
    )
    assert str(cfg.controllers.event.ttl_non_shoot_events) == "1h0m0s"


def test_event_explicit_values_kept():
    cfg = load("controllers:\n  event: {concurrentSyncs: 0, ttlNonShootEvents: 30m}\n")
    assert cfg.controllers.event.concurrent_syncs == 0
    assert cfg.controllers.event.ttl_non_shoot_events == 1800.0


def test_scenario_99_quota_selectors_default_to_empty():
    project = ProjectControllerConfiguration(
        quotas=[
            QuotaConfiguration(),
            QuotaConfiguration(project_selector=LabelSelector(match_labels={"foo": "bar"})),
            QuotaConfiguration(),
        ]
    )
    cfg = set_defaults(
        ControllerManagerConfiguration(controllers=ControllerManagerControllerConfiguration(project=project))
    )
    assert [q.project_selector for q in cfg.controllers.project.quotas] == [
        LabelSelector(),
        LabelSelector(match_labels={"foo": "bar"}),
        LabelSelector(),
    ]


def test_scenario_99_from_a_file():
    body = """
controllers:
  project:
    quotas:
    - config: {spec: {hard: {count/secrets: "1"}}}
    - config: {}
      projectSelector: {matchLabels: {foo: bar}}
    - config: {}
      projectSelector:
"""
    quotas = load(body).controllers.project.quotas
    assert [q.project_selector for q in quotas] == [
        LabelSelector(),
        LabelSelector({"foo": "bar"}),
        LabelSelector(),
    ]


def test_scenario_100_explicit_values_are_never_overwritten():
    le = LeaderElectionConfiguration(
        leader_elect=False,
        lease_duration=Duration(60),
        renew_deadline=Duration(30),
        retry_period=Duration(5),
        resource_lock="leases",
        resource_name="custom-lock",
        resource_namespace="custom-namespace",
    )
    cfg = ControllerManagerConfiguration(
        log_level="warning",
        log_format="md",
        leader_election=le,
        server=ServerConfiguration(health_probes=Server("127.0.0.1", 3000), metrics=Server("::1", 4000)),
        controllers=ControllerManagerControllerConfiguration(
            cache_sync_timeout=Duration(30),
            project=ProjectControllerConfiguration(
                concurrent_syncs=20,
                minimum_lifetime_days=40,
                stale_grace_period_days=24,
                stale_expiration_time_days=100,
                stale_sync_period=parse_duration("12h"),
                quotas=[QuotaConfiguration(project_selector=LabelSelector(match_labels={"a": "b"}))],
            ),
        ),
    )
    cfg.garden_client_connection.qps = 60.0
    cfg.garden_client_connection.burst = 70
    cfg.garden_client_connection.content_type = "application/vnd.kubernetes.protobuf"
    set_defaults(cfg)
    assert (cfg.log_level, cfg.log_format) == ("warning", "md")
    assert (cfg.garden_client_connection.qps, cfg.garden_client_connection.burst) == (60.0, 70)
    assert cfg.garden_client_connection.content_type == "application/vnd.kubernetes.protobuf"
    assert cfg.leader_election == LeaderElectionConfiguration(
        leader_elect=False,
        lease_duration=Duration(60),
        renew_deadline=Duration(30),
        retry_period=Duration(5),
        resource_lock="leases",
        resource_name="custom-lock",
        resource_namespace="custom-namespace",
    )
    assert cfg.server.health_probes == Server("127.0.0.1", 3000)
    assert cfg.server.metrics == Server("::1", 4000)
    assert cfg.controllers.cache_sync_timeout == 30
    p = cfg.controllers.project
    assert (p.concurrent_syncs, p.minimum_lifetime_days, p.stale_grace_period_days) == (20, 40, 24)
    assert p.stale_expiration_time_days == 100
    assert p.stale_sync_period == 12 * 3600
    assert p.quotas[0].project_selector == LabelSelector(match_labels={"a": "b"})


def test_extension_roles_switch():
    """gcm's own field (docs/rbac.md): unset defaults to false (writing extension roles needs RBAC
    equivalent to cluster-admin); true and false are kept."""
    assert (
        load("controllers:\n  project:\n    extensionRoles: false\n").controllers.project.extension_roles
        is False
    )
    assert (
        load("controllers:\n  project:\n    extensionRoles: true\n").controllers.project.extension_roles
        is True
    )
    assert load("controllers:\n  project: {}\n").controllers.project.extension_roles is False


def test_explicit_zero_project_values_are_kept():
    cfg = load(
        "controllers:\n  project:\n    concurrentSyncs: 0\n    minimumLifetimeDays: 0\n"
        "    staleGracePeriodDays: 0\n    staleExpirationTimeDays: 0\n"
    )
    p = cfg.controllers.project
    assert (p.concurrent_syncs, p.minimum_lifetime_days, p.stale_grace_period_days) == (0, 0, 0)
    assert p.stale_expiration_time_days == 0


def test_zero_qps_and_burst_are_unset_like_in_go():
    cfg = load("gardenClientConnection: {qps: 0, burst: 0}\n")
    assert (cfg.garden_client_connection.qps, cfg.garden_client_connection.burst) == (50.0, 100)


@pytest.mark.parametrize("zero", ["0s", "0", "0ms", "-0"])
def test_zero_leader_election_durations_are_unset_like_in_component_base(zero):
    # gardener-operator renders `leaseDuration: 0s` etc.; component-base treats zero as unset.
    cfg = load(
        f"leaderElection: {{leaseDuration: '{zero}', renewDeadline: '{zero}', retryPeriod: '{zero}'}}\n"
    )
    le = cfg.leader_election
    assert (le.lease_duration, le.renew_deadline, le.retry_period) == (15.0, 10.0, 2.0)


def test_leader_election_partial_values():
    cfg = load(
        "leaderElection:\n  leaderElect: false\n  leaseDuration: 1m\n  resourceNamespace: kube-system\n"
    )
    le = cfg.leader_election
    assert le.leader_elect is False
    assert le.lease_duration == 60 and le.lease_duration.original == "1m"
    assert le.renew_deadline == 10 and le.retry_period == 2
    assert le.resource_lock == "leases"
    assert le.resource_namespace == "kube-system"
    assert le.resource_name == "gardener-controller-manager-leader-election"


def test_leader_elect_unset_becomes_true():
    assert load("leaderElection: {resourceLock: leases}\n").leader_election.leader_elect is True


def test_server_ports_defaulted_bind_addresses_kept_empty():
    cfg = load("server:\n  healthProbes: {bindAddress: 127.0.0.1}\n  metrics: {port: 9090}\n")
    assert cfg.server.health_probes == Server("127.0.0.1", 2718)
    assert cfg.server.metrics == Server("", 9090)


def test_webhooks_port_defaults_to_2721_only_when_configured():
    cfg = load("server:\n  webhooks:\n    tls: {serverCertDir: /certs}\n")
    assert cfg.server.webhooks.port == 2721
    assert cfg.server.webhooks.bind_address == ""
    assert cfg.server.webhooks.tls.server_cert_dir == "/certs"
    listener = cfg.server.webhook_listener()
    assert (listener.bind_address, listener.port, listener.cert_dir) == ("", 2721, "/certs")
    assert listener.source == "server.webhooks"
    assert load("server:\n  webhooks: {}\n").server.webhook_listener().cert_dir is None
    assert load("server:\n  webhooks:\n    port: 10443\n").server.webhooks.port == 10443


def test_legacy_https_port_defaults_to_2721_not_2719():
    cfg = load("server:\n  https:\n    tls: {serverCertPath: /srv/tls.crt, serverKeyPath: /srv/tls.key}\n")
    assert cfg.server.https.port == 2721
    listener = cfg.server.webhook_listener()
    assert listener.port == 2721
    assert (listener.cert_path, listener.key_path, listener.cert_dir) == (
        "/srv/tls.crt",
        "/srv/tls.key",
        None,
    )
    assert listener.source == "server.https"


def test_debugging_explicit_values_kept():
    cfg = load("debugging: {enableProfiling: true}\n")
    assert cfg.debugging.enable_profiling is True
    assert cfg.debugging.enable_contention_profiling is False


def test_feature_gates_kept_as_given():
    assert load("featureGates: {}\n").feature_gates == {}
    assert load("featureGates: {Foo: true, Bar: false}\n").feature_gates == {"Foo": True, "Bar": False}


def test_defaulting_is_idempotent():
    cfg = load("controllers:\n  event: {}\n  project:\n    quotas: [{config: {}}]\n")
    again = set_defaults(load_config(text=HEADER + _yaml(cfg.to_dict())))
    assert again == cfg


def test_label_selector_matching():
    assert LabelSelector().matches({}) and LabelSelector().matches({"a": "b"})
    sel = LabelSelector(
        match_labels={"tier": "trial"},
        match_expressions=[
            LabelSelectorRequirement("region", "In", ["eu", "us"]),
            LabelSelectorRequirement("legacy", "DoesNotExist"),
            LabelSelectorRequirement("team", "NotIn", ["ops"]),
            LabelSelectorRequirement("owner", "Exists"),
        ],
    )
    assert sel.matches({"tier": "trial", "region": "eu", "owner": "x"})
    assert sel.matches({"tier": "trial", "region": "us", "owner": "x", "team": "dev"})
    assert not sel.matches({"tier": "paid", "region": "eu", "owner": "x"})
    assert not sel.matches({"tier": "trial", "region": "ap", "owner": "x"})
    assert not sel.matches({"tier": "trial", "region": "eu", "owner": "x", "legacy": ""})
    assert not sel.matches({"tier": "trial", "region": "eu", "owner": "x", "team": "ops"})
    assert not sel.matches({"tier": "trial", "region": "eu"})
    assert not sel.matches(None)


def _yaml(data: dict) -> str:
    import yaml

    data = {k: v for k, v in data.items() if k not in ("apiVersion", "kind")}
    return yaml.safe_dump(data)
