"""What turns OpenTelemetry on, read without importing it (the first run stays light)."""

from __future__ import annotations

import math
import os
import sys

from agentkit_core import ConfigError

#: Variables any of which turns export on when the application set no tracer provider.
ENDPOINT_ENVS = (
    "OTEL_EXPORTER_OTLP_ENDPOINT",
    "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
    "OTEL_TRACES_EXPORTER",
)

#: OpenTelemetry's own variable naming a tracer provider to build on first use.
PROVIDER_ENV = "OTEL_PYTHON_TRACER_PROVIDER"


def may_be_configured() -> bool:
    """Whether OpenTelemetry could be on: False means it is off, and it was not imported.

    An application that set a tracer provider imported ``opentelemetry.trace`` to do it;
    otherwise only the environment can turn export on.
    """
    if "opentelemetry.trace" in sys.modules:
        return True
    return any(os.environ.get(name, "").strip() for name in (*ENDPOINT_ENVS, PROVIDER_ENV))


# ---------------------------------------------------------------------- values, checked

#: The flag spellings read as on and as off; any other value is refused.
_ON = ("1", "true", "yes", "on")
_OFF = ("", "0", "false", "no", "off")

#: The samplers the SDK's tracer provider builds from ``OTEL_TRACES_SAMPLER``.
SAMPLERS = (
    "always_on",
    "always_off",
    "traceidratio",
    "parentbased_always_on",
    "parentbased_always_off",
    "parentbased_traceidratio",
)

#: The batch processor's variables (all whole numbers) and the SDK's defaults for them.
_BSP = {
    "OTEL_BSP_SCHEDULE_DELAY": 5000,
    "OTEL_BSP_EXPORT_TIMEOUT": 30000,
    "OTEL_BSP_MAX_QUEUE_SIZE": 2048,
    "OTEL_BSP_MAX_EXPORT_BATCH_SIZE": 512,
}


def _refuse(name: str, value: str, wanted: str, *, secret: bool = False) -> ConfigError:
    """The error for ``name``; a ``secret`` one's value (an API key's header) is not quoted."""
    shown = "(its value not shown: it may hold a key)" if secret else repr(value)
    return ConfigError(
        f"{name}={shown} is not {wanted}; fix or unset it (agentkit-tracing-otel refuses "
        "rather than export with a setting it guessed)",
        value=None if secret else value,
        source=name,
    )


def flag(name: str) -> bool:
    """The boolean variable ``name``: on, off (also when unset), or a :class:`ConfigError`.

    ``OTEL_SDK_DISABLED=ture`` was read as off, so spans went to the collector of a run whose
    owner turned export off; an unclear value is refused.
    """
    value = os.environ.get(name, "")
    word = value.strip().lower()
    if word in _ON:
        return True
    if word in _OFF:
        return False
    raise _refuse(name, value, "true or false")


def check_provider_environment(exporters: list[str]) -> None:
    """The variables the plugin's own tracer provider is built from, each checked.

    The SDK reads a malformed one as its default with at most a log line (an unknown sampler or
    a ratio of ``abc`` records every run, a header list without ``=`` sends no API key, an
    endpoint with no scheme fails every export) or raises a bare ``ValueError``
    (``OTEL_BSP_MAX_QUEUE_SIZE=-1``); here each is a :class:`ConfigError` naming it.
    """
    sampler = os.environ.get("OTEL_TRACES_SAMPLER", "")
    if sampler.strip() and sampler.strip().lower() not in SAMPLERS:
        raise _refuse("OTEL_TRACES_SAMPLER", sampler, "one of " + ", ".join(SAMPLERS))
    ratio = os.environ.get("OTEL_TRACES_SAMPLER_ARG", "")
    if ratio.strip() and sampler.strip().lower().endswith("traceidratio"):
        try:
            rate = float(ratio)
        except ValueError:
            rate = math.nan
        if not 0.0 <= rate <= 1.0:
            raise _refuse("OTEL_TRACES_SAMPLER_ARG", ratio, "a ratio from 0 to 1 (0.1: one in ten)")
    sizes = {name: _whole(name, default) for name, default in _BSP.items()}
    if sizes["OTEL_BSP_MAX_EXPORT_BATCH_SIZE"] > sizes["OTEL_BSP_MAX_QUEUE_SIZE"]:
        name = "OTEL_BSP_MAX_EXPORT_BATCH_SIZE"
        raise _refuse(name, os.environ.get(name, ""), "at most OTEL_BSP_MAX_QUEUE_SIZE")
    if "otlp" not in exporters:
        return
    from urllib.parse import urlsplit  # here: may_be_configured runs on every first run

    for name in ("OTEL_EXPORTER_OTLP_ENDPOINT", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"):
        url = os.environ.get(name, "")
        if url.strip():
            parts = urlsplit(url.strip())
            if parts.scheme not in ("http", "https") or not parts.hostname:
                wanted = "an http:// or https:// URL (http://127.0.0.1:4318)"
                raise _refuse(name, url, wanted, secret="@" in url)  # user:password@
    for name in ("OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"):
        headers = os.environ.get(name, "")
        items = [item for item in headers.split(",") if item.strip()]
        for number, item in enumerate(items, 1):
            if "=" not in item or not item.partition("=")[0].strip():
                wanted = f"a comma-separated list of name=value: item {number} has no name="
                raise _refuse(name, headers, wanted, secret=True)
    for name in ("OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"):
        timeout = os.environ.get(name, "")
        if timeout.strip():
            try:
                seconds = float(timeout)
            except ValueError:
                seconds = math.nan
            if not 0 < seconds < math.inf:
                raise _refuse(name, timeout, "a positive number")
    for name in ("OTEL_EXPORTER_OTLP_PROTOCOL", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"):
        protocol = os.environ.get(name, "")
        if protocol.strip() and protocol.strip().lower() != "http/protobuf":
            raise _refuse(name, protocol, "http/protobuf, the only protocol the plugin sends")


def _whole(name: str, default: int) -> int:
    value = os.environ.get(name, "")
    if not value.strip():
        return default
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number <= 0:
        raise _refuse(name, value, "a whole number above 0")
    return number
