"""The lookup layer: every name-to-implementation lookup of every seam, on an explicit manager.

Seams take objects (``egress(guardrail)``, ``compaction(compactor)``); names belong here. Each
function takes the :class:`PluginManager` to look in; the process-wide default
(:func:`get_plugin_manager`) is used only where none is given, so two kits on two managers in
one process never see each other's plugins. A factory that builds the wrong kind of object is a
:class:`PluginError` naming the plugin, never a confusing failure later.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from collections.abc import Mapping
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ConfigError
from ._errors import PluginError
from ._errors import UnknownNameError
from ._plugins import PluginManager
from ._plugins import Registration
from ._plugins import get_plugin_manager
from ._urls import mask_url
from ._urls import url_scheme

if TYPE_CHECKING:
    from ._checkpoint import CheckpointPort
    from ._compaction import Compactor
    from ._guardrails import Guardrail
    from ._hooks import Hooks
    from ._instructions import PartSource
    from ._models import Model
    from ._output import SchemaAdapter

#: The environment variable naming the model when none is passed.
MODEL_ENV = "AGENTKIT_MODEL"


def manager_or_default(manager: PluginManager | None) -> PluginManager:
    """``manager`` loaded, or the process-wide default when it is None."""
    return get_plugin_manager() if manager is None else manager.load()


def lookup(seam: str, name: str, manager: PluginManager | None = None) -> Registration:
    """The registration named ``name`` on ``seam``; an unknown name lists the installed."""
    return manager_or_default(manager).lookup(seam, name)


def build(
    seam: str,
    name: str,
    options: Mapping[str, Any] | None = None,
    manager: PluginManager | None = None,
    *,
    check: Callable[[Any], bool] | None = None,
    expected: str = "",
) -> Any:
    """``factory(**options)`` of the plugin that registered ``name`` on ``seam``.

    With ``check``, a built value it rejects is a :class:`PluginError` naming the plugin and
    ``expected`` (what the seam asks for).
    """
    reg = lookup(seam, name, manager)
    made = reg.value(**dict(options or {}))
    if check is not None and not check(made):
        raise PluginError(
            f"{seam.replace('_', ' ')[:-1]} {name!r} from plugin {reg.plugin!r} built "
            f"{type(made).__name__} {made!r}, not {expected}; report it to the plugin's authors",
            plugin=reg.plugin,
        )
    return made


async def open_by_url(
    seam: str,
    url: str,
    manager: PluginManager | None = None,
    *,
    what: str,
    examples: str,
    check: Callable[[Any], bool],
    expected: str,
) -> Any:
    """Open ``url`` with the opener the plugin registered for its scheme on ``seam``.

    One dispatch for every URL-keyed seam (checkpoint stores, session stores...): a URL with no
    scheme names ``examples``; an unknown scheme lists the installed ones; an opener may be
    async; what it opens must pass ``check``. Errors show the URL through :func:`mask_url`.
    """
    scheme = url_scheme(url)
    if not scheme:
        raise ConfigError(
            f"{what} URL {mask_url(url)!r} has no scheme; write it like {examples}",
            value=mask_url(url),
            source=what,
        )
    pm = manager_or_default(manager)
    try:
        reg = pm.lookup(seam, scheme)
    except UnknownNameError as exc:
        raise UnknownNameError(
            f"no {what} handles the scheme {scheme!r} of {mask_url(url)!r}; installed schemes: "
            f"{', '.join(exc.available) or 'none'} (install the plugin for it)",
            name=scheme,
            available=exc.available,
        ) from None
    opened = reg.value(url)
    if inspect.isawaitable(opened):
        opened = await opened
    if not check(opened):
        raise PluginError(
            f"plugin {reg.plugin!r} opened {mask_url(url)!r} as {opened!r}, which is not "
            f"{expected}; "
            "report it to the plugin's authors",
            plugin=reg.plugin,
        )
    return opened


# ---------------------------------------------------------------------- one function per seam


def get_compactor(name: str, *, manager: PluginManager | None = None, **options: Any) -> Compactor:
    """The compactor an installed plugin registered as ``name``, built with ``options``."""
    from ._compaction import Compactor

    made: Compactor = build(
        "compactors",
        name,
        options,
        manager,
        check=lambda c: isinstance(c, Compactor),
        expected="a Compactor (async compact(messages, ctx))",
    )
    return made


def get_guardrail(name: str, *, manager: PluginManager | None = None, **options: Any) -> Guardrail:
    """The guardrail an installed plugin registered as ``name``, built with ``options``."""
    from ._guardrails import Guardrail

    made: Guardrail = build(
        "guardrails",
        name,
        options,
        manager,
        check=lambda g: isinstance(g, Guardrail),
        expected="an agentkit_core.Guardrail subclass instance",
    )
    return made


def get_instruction_part(
    name: str, *, manager: PluginManager | None = None, **options: Any
) -> PartSource:
    """The instruction-part source an installed plugin registered as ``name``."""
    from ._instructions import PartSource

    made: PartSource = build(
        "instruction_parts",
        name,
        options,
        manager,
        check=lambda p: isinstance(p, PartSource),
        expected="a PartSource (id, source, shrinkable, tools, render(max_bytes))",
    )
    return made


def get_tool_source(name: str, *, manager: PluginManager | None = None, **options: Any) -> Any:
    """What the tool-source factory an installed plugin registered as ``name`` returns.

    A source, a list of sources, or an awaitable of either (a source that must connect).
    """
    return build("tool_sources", name, options, manager)


async def open_checkpoint_store(
    url: str, *, manager: PluginManager | None = None
) -> CheckpointPort:
    """Open the checkpoint store for ``url`` through the plugin that registered its scheme.

    ``memory://`` (checkpoint-memory), ``sqlite:///path/runs.db`` (checkpoint-sqlite),
    ``postgresql://user@host/db`` (checkpoint-postgres). An unknown scheme raises
    :class:`UnknownNameError` naming the installed ones.
    """
    from ._checkpoint import CheckpointPort

    port: CheckpointPort = await open_by_url(
        "checkpoint_stores",
        url,
        manager,
        what="checkpoint store",
        examples="'memory://', 'sqlite:///runs.db' or 'postgresql://user@host/db'",
        check=lambda p: isinstance(p, CheckpointPort),
        expected="a CheckpointPort (put, latest, get, versions, aclose)",
    )
    return port


def resolve_model(
    model: Model | str | None,
    *,
    manager: PluginManager | None = None,
    environ: Mapping[str, str] | None = None,
) -> Model:
    """A Model from a Model, a model string, or None.

    ``None`` reads ``AGENTKIT_MODEL``; with that unset it is a :class:`ConfigError` saying how
    to pass one: no run ever falls back to a stand-in model silently. ``"test"`` is the
    built-in TestModel, asked for by name. ``"prefix:name"`` goes to the model plugin that
    registered ``prefix`` (``"openai:gpt-4o-mini"``), whose factory gets ``name``.
    """
    if model is None:
        env = os.environ if environ is None else environ
        value = env.get(MODEL_ENV, "").strip()
        if not value:
            empty = MODEL_ENV in env
            raise ConfigError(
                f"no model given: pass model= (a Model, or a string such as "
                f"'openai:gpt-4o-mini'), or set {MODEL_ENV}"
                + (f" ({MODEL_ENV} is set but empty)" if empty else "")
                + "; model='test' runs the built-in TestModel, which calls every tool with "
                "made-up arguments",
                value=None,
                source=f"model= / {MODEL_ENV}",
            )
        model = value
    if model == "test":
        from ._test_model import TestModel

        return TestModel()
    if not isinstance(model, str):
        return model
    prefix, sep, name = model.partition(":")
    if not sep or not prefix or not name:
        raise ConfigError(
            f"model string {model!r} is not 'provider:model' (for example "
            "'openai:gpt-4o-mini'); pass a Model object or a string of that form",
            value=model,
            source="model=",
        )
    factory = lookup("models", prefix, manager).value
    made: Model = factory(name)
    return made


def adapt(tp: Any, *, manager: PluginManager | None = None) -> SchemaAdapter[Any]:
    """The schema adapter for ``tp`` from the installed flavours (an adapter is returned as is).

    Flavours are probed by ascending ``rank``, then name; the first that accepts builds it.
    """
    from ._output import adapt_with

    return adapt_with(tp, manager_or_default(manager).registrations("schema_adapters"))


def plugin_hooks(manager: PluginManager | None = None) -> Hooks:
    """Every loaded plugin's contested-field hooks, in plugin order."""
    from ._hooks import Hooks

    return Hooks.from_plugins(manager)
