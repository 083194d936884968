"""``get_config()``: controller-runtime's GetConfig order (flag, $KUBECONFIG, in-cluster, ~/.kube/config)
and one-line errors naming what was tried."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from framework.client import Client, ConfigError, get_config
from framework.client.config import find_config


def write_kubeconfig(apiserver, path: Path, server: str | None = None, namespace: str = "default") -> Path:
    """The test server's kubeconfig, optionally naming another (unused) server URL to tell files apart."""
    doc = apiserver.kubeconfig_dict(namespace=namespace)
    if server is not None:
        doc["clusters"][0]["cluster"]["server"] = server
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(yaml.safe_dump(doc))
    return path


@pytest.fixture
def places(apiserver, tmp_path, monkeypatch):
    """A home with ~/.kube/config, a $KUBECONFIG file, a flag file and a service-account directory, each
    naming a different server; nothing is set in the environment until a test sets it."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("KUBECONFIG", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST", raising=False)
    monkeypatch.delenv("KUBERNETES_SERVICE_PORT", raising=False)
    write_kubeconfig(apiserver, home / ".kube" / "config", "https://home.example:6443")
    sa = tmp_path / "serviceaccount"
    sa.mkdir()
    (sa / "token").write_text(apiserver.token)
    (sa / "ca.crt").write_bytes(apiserver.ca_path.read_bytes())
    (sa / "namespace").write_text("in-cluster-ns")
    return {
        "home": home,
        "env": write_kubeconfig(apiserver, tmp_path / "env.kubeconfig", "https://env.example:6443"),
        "flag": write_kubeconfig(apiserver, tmp_path / "flag.kubeconfig", "https://flag.example:6443"),
        "sa": sa,
    }


def in_cluster_env(monkeypatch, port: int = 6443) -> None:
    monkeypatch.setenv("KUBERNETES_SERVICE_HOST", "127.0.0.1")
    monkeypatch.setenv("KUBERNETES_SERVICE_PORT", str(port))


def test_flag_comes_first(places, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(places["env"]))
    in_cluster_env(monkeypatch)
    cfg = get_config(places["flag"], service_account_dir=places["sa"])
    assert cfg.host == "https://flag.example:6443"
    assert cfg.source.origin == "--kubeconfig" and cfg.source.path == str(places["flag"])


def test_kubeconfig_env_before_in_cluster_and_home(places, monkeypatch):
    monkeypatch.setenv("KUBECONFIG", str(places["env"]))
    in_cluster_env(monkeypatch)
    cfg = get_config(service_account_dir=places["sa"])
    assert cfg.host == "https://env.example:6443" and cfg.source.origin == "$KUBECONFIG"


def test_in_cluster_before_home(apiserver, places, monkeypatch):
    in_cluster_env(monkeypatch, apiserver.port)
    cfg = get_config(service_account_dir=places["sa"])
    assert cfg.source.in_cluster and cfg.namespace == "in-cluster-ns"
    assert cfg.host == f"https://127.0.0.1:{apiserver.port}"
    # The service account's token and CA work against the server.
    client = Client.from_config(cfg, qps=0)
    assert client.namespace == "in-cluster-ns"
    assert client.get("v1", "Namespace", "default")["metadata"]["name"] == "default"


def test_home_last_and_in_cluster_needs_its_token(places, monkeypatch, tmp_path):
    in_cluster_env(monkeypatch)
    cfg = get_config(service_account_dir=tmp_path / "no-serviceaccount")
    assert cfg.host == "https://home.example:6443" and cfg.source.origin == "~/.kube/config"
    monkeypatch.delenv("KUBERNETES_SERVICE_HOST")
    assert get_config(service_account_dir=places["sa"]).source.origin == "~/.kube/config"


def test_the_client_works_with_the_config_found(apiserver, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    path = write_kubeconfig(apiserver, tmp_path / "kc", namespace="kube-system")
    client = Client.from_config(get_config(path), qps=0)
    assert client.namespace == "kube-system"
    assert client.get("v1", "Namespace", "kube-system")["metadata"]["name"] == "kube-system"


def test_context_picks_another_context(apiserver, places):
    doc = yaml.safe_load(places["flag"].read_text())
    other = {"name": "other", "context": {**doc["contexts"][0]["context"], "namespace": "other-ns"}}
    doc["contexts"].append(other)
    places["flag"].write_text(yaml.safe_dump(doc))
    assert get_config(places["flag"]).namespace == "default"
    assert get_config(places["flag"], context="other").namespace == "other-ns"
    with pytest.raises(ConfigError, match=r"(?s)from --kubeconfig\) is not usable: .*nowhere"):
        get_config(places["flag"], context="nowhere")


def test_nothing_found_names_everything_tried(places, monkeypatch, tmp_path):
    monkeypatch.setenv("HOME", str(tmp_path / "empty-home"))
    with pytest.raises(ConfigError) as err:
        get_config(service_account_dir=places["sa"])
    message = str(err.value)
    assert "\n" not in message
    assert message.startswith("no kubeconfig found; tried --kubeconfig (not set), $KUBECONFIG (not set)")
    assert "in-cluster ($KUBERNETES_SERVICE_HOST not set)" in message
    assert f"~/.kube/config ({tmp_path / 'empty-home' / '.kube' / 'config'} missing)" in message


def test_a_flag_naming_a_missing_file_is_an_error_not_a_fallback(places, tmp_path):
    missing = tmp_path / "missing.kubeconfig"
    with pytest.raises(ConfigError) as err:
        get_config(missing)
    assert str(err.value) == (
        f"kubeconfig {missing} (from --kubeconfig) does not exist; point --kubeconfig at a kubeconfig file"
    )


def test_a_kubeconfig_that_is_not_yaml_names_the_line(places, monkeypatch):
    places["env"].write_text("clusters: [\n  - a\n b: c\n")
    monkeypatch.setenv("KUBECONFIG", str(places["env"]))
    with pytest.raises(ConfigError, match=r"\(from \$KUBECONFIG\) is not valid YAML at line \d+"):
        get_config()


def test_find_config_takes_places_of_a_program(places, tmp_path):
    """gcm adds gardenClientConnection.kubeconfig after $KUBECONFIG and .gcm/kubeconfig before home."""
    extra = places["flag"]
    found = find_config(after_env=[(str(extra), "gardenClientConnection.kubeconfig")])
    assert found is not None and found.origin == "gardenClientConnection.kubeconfig"
    local = tmp_path / "local.kubeconfig"
    assert find_config(before_home=[(str(local), "local")]).origin == "~/.kube/config"  # type: ignore[union-attr]
    local.write_text(extra.read_text())
    assert find_config(before_home=[(str(local), "local")]).origin == "local"  # type: ignore[union-attr]
