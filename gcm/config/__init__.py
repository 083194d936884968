"""gcm's component configuration: Gardener's ``controllermanager.config.gardener.cloud/v1alpha1``
``ControllerManagerConfiguration`` (``pkg/controllermanager/apis/config/v1alpha1``), loaded from YAML or JSON,
defaulted and validated.

    from gcm.config import ConfigError, load_config

    try:
        cfg = load_config("/etc/gcm/config.yaml")   # or load_config(None): all defaults
    except ConfigError as exc:
        for line in exc.errors:                      # every problem, with its field path
            print(line)
    cfg.controllers.project.stale_sync_period       # Duration: 43200.0 seconds, str() == "12h0m0s"
"""

from framework.meta.duration import (
    Duration,
    DurationError,
    format_duration,
    format_duration_ns,
    parse_duration,
    parse_duration_ns,
)
from gcm.config.defaults import set_defaults
from gcm.config.errors import ConfigError, FieldError
from gcm.config.load import (
    IgnoredField,
    apply_env_overrides,
    decode_config,
    default_config,
    load_config,
    log_ignored_fields,
)
from gcm.config.types import (
    API_VERSION,
    KIND,
    ClientConnectionConfiguration,
    ControllerManagerConfiguration,
    ControllerManagerControllerConfiguration,
    DebuggingConfiguration,
    EventControllerConfiguration,
    LabelSelector,
    LabelSelectorRequirement,
    LeaderElectionConfiguration,
    LegacyHTTPSServer,
    LegacyTLSServer,
    ProjectControllerConfiguration,
    QuotaConfiguration,
    Server,
    ServerConfiguration,
    WebhookListener,
    WebhooksConfiguration,
    WebhookServer,
    WebhookSwitch,
    WebhookTLS,
)
from gcm.config.validation import validate

__all__ = [
    "API_VERSION",
    "KIND",
    "ClientConnectionConfiguration",
    "ConfigError",
    "ControllerManagerConfiguration",
    "ControllerManagerControllerConfiguration",
    "DebuggingConfiguration",
    "Duration",
    "DurationError",
    "EventControllerConfiguration",
    "FieldError",
    "IgnoredField",
    "LabelSelector",
    "LabelSelectorRequirement",
    "LeaderElectionConfiguration",
    "LegacyHTTPSServer",
    "LegacyTLSServer",
    "ProjectControllerConfiguration",
    "QuotaConfiguration",
    "Server",
    "ServerConfiguration",
    "WebhookListener",
    "WebhookServer",
    "WebhookSwitch",
    "WebhookTLS",
    "WebhooksConfiguration",
    "apply_env_overrides",
    "decode_config",
    "default_config",
    "format_duration",
    "format_duration_ns",
    "load_config",
    "log_ignored_fields",
    "parse_duration",
    "parse_duration_ns",
    "set_defaults",
    "validate",
]
