"""The lookup layer: every name-to-implementation lookup of every seam, on an explicit manager.

Seams take objects (``egress(guardrail)``, ``compaction(compactor)``); names belong here. Each
function takes the :class:`PluginManager` to look in as a required ``manager``: only the edges
(``Kit``, ``Agent(...)``, the CLI) fall back to the process-wide one
(:func:`~agentkit_core._plugins.manager_or_default`), so two kits on two managers in one process
never see each other's plugins. A factory that builds the wrong kind of object is a
:class:`PluginError` naming the plugin, never a confusing failure later.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable
from collections.abc import Collection
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any

from ._errors import ConfigError
from ._errors import PluginError
from ._errors import UnknownNameError
from ._once import per_arguments
from ._plugins import PluginManager
from ._plugins import Registration
from ._tables import check_given
from ._tables import check_options
from ._tables import settings_schema
from ._urls import mask_url
from ._urls import url_scheme

if TYPE_CHECKING:
    from ._checkpoint import Checkpointer
    from ._checkpoint import CheckpointPort
    from ._checkpoint import Clock
    from ._compaction import Compactor
    from ._guard import Guard
    from ._guard_chain import GuardChain
    from ._guardrails import Guardrail
    from ._hooks import Hooks
    from ._instructions import PartSource
    from ._memory import Memory
    from ._memory import MemoryStore
    from ._memory_block import MemoryBlock
    from ._models import Model
    from ._output import SchemaAdapter
    from ._policy import PolicyEngine
    from ._sessions import Sessions
    from ._sessions import SessionStore
    from ._tracing import SpanExporter
    from .hookspecs import MCPTokenStore

#: The environment variable naming the model when none is passed.
MODEL_ENV = "AGENTKIT_MODEL"


def build(
    seam: str,
    name: str,
    options: Mapping[str, object] | None,
    manager: PluginManager,
    *,
    where: str = "",
    check: Callable[[object], bool] | None = None,
    expected: str = "",
) -> Any:
    """``factory(**options)`` of the plugin that registered ``name`` on ``seam``.

    When the registration declared ``settings=`` (a ``TypedDict``), ``options`` are checked
    against it first (:func:`check_given`): an unknown key (with the nearest one) or a value of
    the wrong kind is a :class:`ConfigError` naming ``where`` (the code expression that gave
    them, as ``guard_options['redact']``) and the plugin, never a ``TypeError`` from inside
    the factory. A factory that declares a ``manager`` parameter also gets the manager
    the lookup ran on, so what it looks up in turn (a compactor's model string) stays on that
    manager. With ``check``, a built value it rejects is a :class:`PluginError` naming the
    plugin and ``expected`` (what the seam asks for).
    """
    pm = manager.load()
    reg = pm.lookup(seam, name)
    what = f"{seam.replace('_', ' ')[:-1]} {name!r}"
    options = dict(options or {})
    settings = reg.meta.get("settings")
    if settings is not None:
        whose = f"{what} from plugin {reg.plugin!r}"
        check_given(
            options,
            settings_schema(settings),
            f"{where} ({whose})" if where else f"the options of {whose}",
            naming=lambda key: (
                f"{where}[{key!r}] ({whose})" if where else f"{key} in the options of {whose}"
            ),
        )
    made = call_factory(reg, pm, **options)
    if check is not None and not check(made):
        raise PluginError(
            f"{what} from plugin {reg.plugin!r} built "
            f"{type(made).__name__} {made!r}, not {expected}; report it to the plugin's authors",
            plugin=reg.plugin,
        )
    return made


def check_plugin_options(
    reg: Registration, options: Mapping[str, object], where: str, *, returned: bool = False
) -> None:
    """Check ``options`` for ``reg``'s factory before the call, naming ``where``.

    Against the ``settings=`` it declared, else against the factory's signature
    (:func:`check_options`; ``returned`` as there).
    """
    settings = reg.meta.get("settings")
    if settings is None:
        check_options(reg.value, options, where, returned=returned)
    else:
        check_given(options, settings_schema(settings), where)


async def open_by_url(
    seam: str,
    url: str,
    manager: PluginManager,
    *,
    what: str,
    examples: str,
    check: Callable[[object], bool],
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
    pm = manager.load()
    try:
        reg = pm.lookup(seam, scheme)
    except UnknownNameError as exc:
        raise UnknownNameError(
            f"no {what} handles the scheme {scheme!r} of {mask_url(url)!r}; installed schemes: "
            f"{', '.join(exc.available) or 'none'} (install the plugin for it)",
            name=scheme,
            available=exc.available,
        ) from None
    opened = call_factory(reg, pm, url)
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


def call_factory(reg: Registration, pm: PluginManager, *args: object, **options: object) -> Any:
    """``reg.value(*args, **options)``, with ``manager=pm`` when the factory declares it.

    One rule for every seam's factory or opener: whatever it looks up in turn (a compactor's
    model string, say) stays on the manager it was found on.
    """
    if _declares_manager(reg.value):
        options["manager"] = pm
    return reg.value(*args, **options)


@per_arguments
def _declares_manager(factory: Callable[..., object]) -> bool:
    """Whether ``factory`` takes a ``manager`` keyword: like pluggy, it gets only what it names.

    Read once per hashable factory: a Kit calls several on every construction.
    """
    try:
        parameters = inspect.signature(factory).parameters
    except (TypeError, ValueError):  # a builtin without a signature declares nothing
        return False
    param = parameters.get("manager")
    return param is not None and param.kind in (param.KEYWORD_ONLY, param.POSITIONAL_OR_KEYWORD)


# ---------------------------------------------------------------------- one function per seam


def get_compactor(name: str, *, manager: PluginManager, **options: object) -> Compactor:
    """The compactor an installed plugin registered as ``name``, built with ``options``."""
    from ._compaction import Compactor

    made: Compactor = build(
        "compactors",
        name,
        options,
        manager,
        where="compactor_options",
        check=lambda c: isinstance(c, Compactor),
        expected="a Compactor (async compact(messages, ctx))",
    )
    return made


def get_guardrail(
    name: str,
    *,
    manager: PluginManager,
    environ: Mapping[str, str] | None = None,
    **options: Any,
) -> Guardrail:
    """The guardrail an installed plugin registered as ``name``, built with its settings.

    The settings are layered key by key: the ``[guardrail.NAME]`` table of ``manager``'s
    configuration file, then the environment variables the plugin declared (``env_prefix=``
    at registration, such as ``AGENTKIT_WEB_``), then ``options``. When the plugin declared
    ``settings=`` (a ``TypedDict``), the file and the environment are checked against it. A
    value of the file or the environment that the guardrail itself refuses (a
    :class:`ConfigError` whose ``value`` is that setting or one of its items) is named with
    where it was set, which becomes the error's ``source``.
    """
    from ._config import layered_settings
    from ._guardrails import Guardrail

    pm = manager.load()
    reg = pm.lookup("guardrails", name)
    origins: dict[str, str] = {}
    layered = layered_settings(
        options,
        settings=reg.meta.get("settings"),
        env_prefix=reg.meta.get("env_prefix", ""),
        file_table=pm.config.guardrail.get(name),
        file_where=pm.config.source_of(f"guardrail.{name}"),
        environ=environ,
        origins=origins,
    )
    try:
        made: Guardrail = build(
            "guardrails",
            name,
            layered,
            pm,
            check=lambda g: isinstance(g, Guardrail),
            expected="an agentkit_core.plugin.Guardrail subclass instance",
        )
    except ConfigError as exc:  # the guardrail refused a value: say where it was set
        held = [k for k in layered if _holds(layered[k], exc.value)]
        if len(held) != 1 or held[0] not in origins:  # given in code, or not to be told
            raise
        key = held[0]
        raise ConfigError(
            f"{exc} ({key} was set in {origins[key]})", value=exc.value, source=origins[key]
        ) from exc
    return made


def _holds(setting: object, value: object) -> bool:
    """Whether ``value`` is ``setting``, or one of its items (the same object, not an equal one)."""
    items = setting if isinstance(setting, list | tuple) else ()
    return setting is value or any(item is value for item in items)


def configured_guardrails(
    manager: PluginManager, environ: Mapping[str, str] | None = None
) -> list[str]:
    """The guardrails the configuration names.

    A file's ``[guardrail.NAME]`` tables, and the installed guardrails whose declared
    environment variables are set (in any case: a variable named in lower case is then refused
    where the settings are read, rather than left unread).
    """
    pm = manager.load()
    env = os.environ if environ is None else environ
    names = list(pm.config.guardrail)
    for reg in pm.registrations("guardrails"):
        prefix = reg.meta.get("env_prefix", "")
        if reg.name not in names and prefix and any(v.upper().startswith(prefix) for v in env):
            names.append(reg.name)
    return names


def resolve_guardrail(
    guardrail: Guardrail | str | None,
    *,
    manager: PluginManager,
    environ: Mapping[str, str] | None = None,
) -> Guardrail | None:
    """An agent's guardrail from a Guardrail, a registered name, or None.

    A name is built by :func:`get_guardrail` (with its configured settings). None is the
    guardrail the configuration names (:func:`configured_guardrails`), or no guardrail when it
    names none; naming two is a :class:`ConfigError`, since a run has one guardrail.
    """
    if guardrail is not None:  # the URL and address checks load with a guardrail
        from ._guardrails import Guardrail

        if isinstance(guardrail, Guardrail):
            return guardrail
        if isinstance(guardrail, str):
            return get_guardrail(guardrail, manager=manager, environ=environ)
        raise ConfigError(
            "guardrail= takes an agentkit_core.plugin.Guardrail, the name of an installed "
            f"guardrail or None, got {type(guardrail).__name__} {guardrail!r}",
            value=guardrail,
            source="guardrail=",
        )
    pm = manager.load()
    names = configured_guardrails(pm, environ)
    if not names:
        return None
    if len(names) > 1:
        raise ConfigError(
            f"the configuration names {len(names)} guardrails ({', '.join(names)}); a run has "
            "one: keep one [guardrail.NAME] table (or one plugin's variables), or pass "
            "guardrail= in code",
            value=names,
            source=pm.config.file_hint(),
        )
    try:
        return get_guardrail(names[0], manager=pm, environ=environ)
    except UnknownNameError as exc:
        where = pm.config.source_of(f"guardrail.{names[0]}")
        raise ConfigError(
            f"{where} configures the guardrail {names[0]!r}, which is not installed or not "
            f"loaded ({exc}); install its plugin or remove the table",
            value=names[0],
            source=where,
        ) from None


def get_guard(name: str, *, manager: PluginManager, **options: object) -> Guard:
    """The guard an installed plugin registered as ``name``, built with ``options``.

    An unknown name is an :class:`UnknownNameError` listing the installed guards.
    """
    from ._guard import Guard

    made: Guard = build(
        "guards",
        name,
        options,
        manager,
        where=f"guard_options[{name!r}]",
        check=lambda g: isinstance(g, Guard),
        expected="an agentkit_core.plugin.Guard (check_input, check_output, check_turn)",
    )
    return made


def build_guard_chain(
    guards: Sequence[str | Guard],
    *,
    options: Mapping[str, Mapping[str, object] | None] | None = None,
    fail_open: Collection[str] = (),
    manager: PluginManager,
) -> GuardChain:
    """The chain ``Kit(guards=..., guard_options=..., guard_fail_open=...)`` builds.

    Installed guards named in ``guards`` come first, in the plugin order of the plugins that
    registered them (registration order within one plugin), each built by :func:`get_guard`
    with its ``options``; then the product's own :class:`Guard` objects, in the order given.
    An unknown name lists the installed guards; options for a guard not named are an error.
    """
    from ._guard import ChainedGuard
    from ._guard_chain import GuardChain
    from ._guard_chain import only_named

    pm = manager.load()
    names = [g for g in guards if isinstance(g, str)]
    options = dict(options or {})
    only_named(options, names, "guard_options=")
    for name in names:
        pm.lookup("guards", name)  # an unknown name lists the installed ones
    order = {reg.name: i for i, reg in enumerate(pm.registrations("guards"))}
    entries: list[Guard | ChainedGuard] = []
    for name in sorted(dict.fromkeys(names), key=order.__getitem__):
        reg = pm.lookup("guards", name)
        guard = get_guard(name, manager=pm, **dict(options.get(name) or {}))
        entries.append(ChainedGuard(name, guard, reg.plugin))
    entries.extend(g for g in guards if not isinstance(g, str))
    return GuardChain(entries, fail_open=fail_open)


def get_instruction_part(name: str, *, manager: PluginManager, **options: object) -> PartSource:
    """The instruction-part source an installed plugin registered as ``name``."""
    from ._instructions import PartSource

    made: PartSource = build(
        "instruction_parts",
        name,
        options,
        manager,
        where=f"parts[{name!r}]",
        check=lambda p: isinstance(p, PartSource),
        expected="a PartSource (id, source, shrinkable, tools, render(max_bytes))",
    )
    return made


def load_policy(
    path: str | os.PathLike[str],
    *,
    engine: str | None = None,
    manager: PluginManager,
) -> PolicyEngine:
    """The policy engine ``path`` (a policy file) describes, read by an installed engine plugin.

    ``engine`` names the plugin's registration (``"rules"``); None takes the one installed, and
    is a :class:`ConfigError` listing them when several are.
    """
    from ._policy import PolicyEngine

    pm = manager.load()
    if engine is None:
        names = [reg.name for reg in pm.registrations("policy_engines")]
        if len(names) != 1:
            what = "no policy engine is installed" if not names else f"{len(names)} are"
            raise ConfigError(
                f"reading the policy file {os.fspath(path)!r} needs one policy engine, and "
                f"{what}{': ' + ', '.join(names) if names else ''}; "
                + (
                    "install one (pip install agentkit-policy-rules)"
                    if not names
                    else "name one: policy_engine= (Kit) or engine= (load_policy)"
                ),
                value=names,
                source="policy=",
            )
        engine = names[0]
    made: PolicyEngine = build(
        "policy_engines",
        engine,
        {"path": path},
        pm,
        check=lambda e: isinstance(e, PolicyEngine),
        expected="an agentkit_core.plugin.PolicyEngine",
    )
    return made


def resolve_policy(
    policy: PolicyEngine | str | os.PathLike[str] | None,
    *,
    engine: str | None = None,
    manager: PluginManager,
) -> PolicyEngine | None:
    """An agent's policy engine from an engine, a policy file's path, or None (no policy).

    ``engine`` without a policy is refused: it names the engine that reads ``policy``, and
    alone it would leave every call unchecked while the configuration seems to ask for a policy.
    """
    if policy is None:
        if engine is not None:
            raise ConfigError(
                f"policy_engine={engine!r} names the engine that reads policy=, and no policy= "
                "is given, so no tool call would be checked; give policy= (a policy file) or "
                "leave policy_engine out",
                value=engine,
                source="policy_engine=",
            )
        return None
    from ._policy import PolicyEngine  # imported only when an agent has a policy

    if isinstance(policy, PolicyEngine):
        return policy
    if isinstance(policy, str | os.PathLike):
        return load_policy(policy, engine=engine, manager=manager)
    raise ConfigError(
        "policy= takes an agentkit_core.plugin.PolicyEngine, the path of a policy file or None, "
        f"got {type(policy).__name__} {policy!r}",
        value=policy,
        source="policy=",
    )


def get_tool_source(name: str, *, manager: PluginManager, **options: object) -> Any:
    """What the tool-source factory an installed plugin registered as ``name`` returns.

    A source, a list of sources, or an awaitable of either (a source that must connect).
    """
    return build("tool_sources", name, options, manager, where=f"tool_sources[{name!r}]")


async def open_checkpoint_store(url: str, *, manager: PluginManager) -> CheckpointPort:
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


async def open_session_store(url: str, *, manager: PluginManager) -> SessionStore:
    """Open the session store for ``url`` through the plugin that registered its scheme.

    ``memory://`` (session-memory), ``sqlite:///path/sessions.db`` (session-sqlite),
    ``postgresql://user@host/db`` (session-postgres). An unknown scheme raises
    :class:`UnknownNameError` naming the installed ones. Wrap it in :class:`Sessions` to use it.
    """
    from ._sessions import SessionStore

    store: SessionStore = await open_by_url(
        "session_stores",
        url,
        manager,
        what="session store",
        examples="'memory://', 'sqlite:///sessions.db' or 'postgresql://user@host/db'",
        check=lambda s: isinstance(s, SessionStore),
        expected="a SessionStore (url, create, append, item, leaf, path, info, sessions, aclose)",
    )
    return store


async def open_memory_store(url: str, *, manager: PluginManager) -> MemoryStore:
    """Open the memory store for ``url`` through the plugin that registered its scheme.

    ``file:///path/to/dir`` or ``file:relative/dir`` (memory-files), ``sqlite:///memory.db``
    (memory-sqlite), ``postgresql://user@host/db`` (memory-postgres). An unknown scheme raises
    :class:`UnknownNameError` naming the installed ones. Wrap it in :class:`Memory` to use it.
    """
    from ._memory import MemoryStore

    store: MemoryStore = await open_by_url(
        "memory_stores",
        url,
        manager,
        what="memory store",
        examples="'file:///path/to/memory', 'sqlite:///memory.db' or 'postgresql://user@host/db'",
        check=lambda s: isinstance(s, MemoryStore),
        expected="a MemoryStore (url, scopes, entries, get, put, delete, aclose)",
    )
    return store


async def open_mcp_token_store(url: str, *, manager: PluginManager) -> MCPTokenStore:
    """Open the store of MCP servers' OAuth grants for ``url``, by its scheme's plugin.

    ``file:///path/to/dir`` or ``file:relative/dir`` (one JSON file per server and user) and
    ``sqlite:///tokens.db``, both from agentkit-mcp-client. An unknown scheme raises
    :class:`UnknownNameError` naming the installed ones.
    """
    store: MCPTokenStore = await open_by_url(
        "mcp_token_stores",
        url,
        manager,
        what="MCP token store",
        examples="'file:///var/lib/agent/mcp-tokens' or 'sqlite:///mcp-tokens.db'",
        check=lambda s: (
            all(callable(getattr(s, m, None)) for m in ("get", "put", "delete", "aclose"))
            and isinstance(getattr(s, "url", None), str)
        ),
        expected="an MCPTokenStore (url, get, put, delete, aclose)",
    )
    return store


def resolve_model_option(model: Model | str, *, manager: PluginManager | None, owner: str) -> Model:
    """``owner``'s ``model=``, for a component a user may build by hand (the compactors).

    A Model as it is, a model string resolved on ``manager``. A string without a manager is a
    :class:`ConfigError` naming both ways out: nothing below the edges falls back to the
    process-wide manager.
    """
    if not isinstance(model, str):
        return model
    if manager is None:
        raise ConfigError(
            f"{owner}(model={model!r}) needs manager=, the plugin manager to resolve the model "
            "string on (get_compactor and Kit pass theirs), or a Model object instead of the "
            "string",
            value=model,
            source=f"{owner}(model=)",
        )
    return resolve_model(model, manager=manager)


def resolve_model(
    model: Model | str | Sequence[Model | str] | None,
    *,
    manager: PluginManager,
    environ: Mapping[str, str] | None = None,
) -> Model:
    """A Model from a Model, a model string, or None.

    ``None`` reads ``AGENTKIT_MODEL``; with that unset it is a :class:`ConfigError` saying how
    to pass one: no run ever falls back to a stand-in model silently. ``"test"`` is the
    built-in TestModel, asked for by name. ``"prefix:name"`` goes to the model plugin that
    registered ``prefix`` (``"openai:gpt-4o-mini"``), whose factory gets ``name`` and the
    options of the configuration file's ``[models.PREFIX]`` table, checked against the settings
    (a ``TypedDict``) the plugin registered with the prefix, when it declared them. A list of
    them, or one string of comma-separated ones (``"anthropic:a,openai:b"``), is a
    :class:`~agentkit_core.FallbackModel` trying them in order.
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
    if isinstance(model, str) and "," in model:  # "--model a,b", AGENTKIT_MODEL="a,b"
        model = [part.strip() for part in model.split(",")]
    if isinstance(model, Sequence) and not isinstance(model, str):
        from ._fallback import FallbackModel

        return FallbackModel([resolve_model(m, manager=manager) for m in model])
    if model == "test":
        from ._test_model import TestModel

        return TestModel()
    if not isinstance(model, str):
        from ._models import checked_model  # a Model given: its module is loaded already

        return checked_model(model, "model=")
    prefix, sep, name = model.partition(":")
    if not sep or not prefix or not name:
        raise ConfigError(
            f"model string {model!r} is not 'provider:model' (for example "
            "'openai:gpt-4o-mini'); pass a Model object or a string of that form",
            value=model,
            source="model=",
        )
    pm = manager.load()
    reg = pm.lookup("models", prefix)
    table = pm.config.models.get(prefix)
    if not table:
        made: Model = call_factory(reg, pm, name)
        return made
    from ._config import layered_settings

    where = pm.config.source_of(f"models.{prefix}")
    options = layered_settings(
        {}, settings=reg.meta.get("settings"), env_prefix="", file_table=table, file_where=where
    )
    try:
        made = call_factory(reg, pm, name, **options)
    except TypeError as exc:  # a plugin that declared no settings, given a key it does not take
        raise ConfigError(
            f"{where}: model plugin {reg.plugin!r} refused these options ({exc}); check the "
            f"keys against its documentation",
            value=dict(table),
            source=where,
        ) from exc
    return made


def adapt(tp: object, *, manager: PluginManager) -> SchemaAdapter[Any]:
    """The schema adapter for ``tp`` from the installed flavours (an adapter is returned as is).

    Flavours are probed by ascending ``rank``, then name; the first that accepts builds it.
    """
    from ._output import adapt_with

    return adapt_with(tp, manager.load().registrations("schema_adapters"))


async def open_checkpointer(
    url: str, *, clock: Clock | None = None, manager: PluginManager
) -> Checkpointer:
    """A :class:`Checkpointer` over :func:`open_checkpoint_store`; ``aclose`` closes the store."""
    from ._checkpoint import Checkpointer

    port = await open_checkpoint_store(url, manager=manager)
    return (
        Checkpointer(port, url=url) if clock is None else Checkpointer(port, clock=clock, url=url)
    )


async def open_sessions(url: str, *, manager: PluginManager) -> Sessions:
    """:class:`Sessions` over :func:`open_session_store`; ``aclose`` closes the store."""
    from ._sessions import Sessions

    return Sessions(await open_session_store(url, manager=manager))


async def open_memory(
    url: str, *, max_entry_bytes: int | None = None, manager: PluginManager
) -> Memory:
    """:class:`Memory` over :func:`open_memory_store`; ``aclose`` closes the store."""
    from ._memory import Memory

    store = await open_memory_store(url, manager=manager)
    try:
        return (
            Memory(store)
            if max_entry_bytes is None
            else Memory(store, max_entry_bytes=max_entry_bytes)
        )
    except BaseException:  # a bad limit: the store opened for nothing is closed, not leaked
        await store.aclose()
        raise


async def open_memory_block(
    store: str | MemoryStore | Memory | None = None,
    scopes: Sequence[str] = ("user",),
    *,
    read_only: Sequence[str] = (),
    max_entry_bytes: int | None = None,
    max_bytes: int | None = None,
    manager: PluginManager,
) -> MemoryBlock:
    """A :class:`MemoryBlock` over ``store``, its scopes read once.

    A URL is opened on ``manager`` and closed by the block's ``aclose``; a store or a Memory
    given stays the caller's to close. None is ``$AGENTKIT_MEMORY_STORE``, or a directory of
    Markdown files, ``.agentkit/memory`` under the working directory.
    """
    from ._memory import DEFAULT_MAX_ENTRY_BYTES
    from ._memory_block import MemoryBlock
    from ._memory_block import default_memory_store

    limit = DEFAULT_MAX_ENTRY_BYTES if max_entry_bytes is None else max_entry_bytes
    if store is None:
        store = default_memory_store()
    owns = isinstance(store, str)
    if isinstance(store, str):
        store = await open_memory(store, manager=manager, max_entry_bytes=limit)
    return await MemoryBlock.open(
        store, scopes, read_only=read_only, max_entry_bytes=limit, max_bytes=max_bytes, owns=owns
    )


def plugin_hooks(manager: PluginManager) -> Hooks:
    """Every loaded plugin's contested-field hooks, in plugin order."""
    from ._hooks import Hooks

    return Hooks.from_plugins(manager.load())


def span_exporters(manager: PluginManager) -> list[SpanExporter]:
    """The span exporters the installed plugins offer, in plugin order.

    Each registered factory is called with no arguments (``manager=`` when it declares one);
    one that returns None is not configured (the OpenTelemetry plugin without any ``OTEL_*``
    endpoint) and is left out.
    """
    from ._tracing import SpanExporter

    pm = manager.load()
    made: list[SpanExporter] = []
    for reg in pm.registrations("span_exporters"):
        exporter = call_factory(reg, pm)
        if exporter is None:
            continue
        if not isinstance(exporter, SpanExporter):
            raise PluginError(
                f"span exporter {reg.name!r} from plugin {reg.plugin!r} built "
                f"{type(exporter).__name__} {exporter!r}, not an agentkit_core.plugin.SpanExporter "
                "(or None when not configured); report it to the plugin's authors",
                plugin=reg.plugin,
            )
        made.append(exporter)
    return made
