"""The plugin contract: every hook an agentkit plugin may implement.

A plugin is a module or object found through the ``agentkit`` entry-point group (or registered in
code). It implements hooks by decorating functions with :data:`hookimpl` and naming them after
the specs below. Implementations may be ``async def``; the kit awaits them.

Two kinds of hook:

* **Registration hooks** (``agentkit_register_*``) are called once per plugin when the plugin
  manager loads it, with a ``register`` callback. Calling ``register(name, value, **meta)``
  records what the plugin offers and which plugin offered it, so the host, not the plugin,
  detects two plugins claiming one name on one seam and words the conflict (``pick`` under
  ``[tool.agentkit]`` settles one). ``meta`` keywords are kept on the registration and shown by
  ``agentkit plugins list``. They return nothing and must be plain functions. A registration is
  whole or nothing: if the hook raises part-way, nothing it registered is kept and none of the
  plugin's hooks stay registered. What is registered is reached by name only through the
  lookup functions (``get_compactor``, ``resolve_model``...), on one explicit plugin manager; a
  factory that declares a ``manager`` parameter is handed that manager, so whatever it looks
  up in turn stays on it.
* **Contested-field hooks** are called during a run. Several plugins may implement one; the kit
  calls them in the plugin order (see ``docs/ordering.md``) and folds their results with the rule
  stated in each docstring. Returning ``None`` always means "no opinion".

How a contested hook is called (the same for a user's function in ``Hooks.of``):

* **By name, any subset.** An implementation receives the arguments it names, as pluggy passes
  them: ``def agentkit_transform(transcript)`` is as good as ``(ctx, transcript)``. Parameters
  with a default are left to their default; a name the spec does not have, or a keyword-only
  parameter without a default, leaves the plugin out at load.
* **Sync or async.** An ``async def`` implementation is awaited under the deadline
  (``Hooks.timeout``, 30 s by default; ``None`` for none) and cancelled when it passes it: the
  run fails with ``HookTimeoutError`` naming the plugin. A plain function runs on the event
  loop and must be fast: one that computes for more than ``Hooks.slow`` (0.1 s) of CPU time,
  or blocks the loop for more than 5 x that (0.5 s), is reported as a ``hook`` span on the
  run's trace and a ``SlowHookWarning`` naming the plugin.
* **Returns are checked.** A value the hook's docstring does not allow raises ``HookError``
  naming the plugin, the hook, the value and what is allowed.
* **A raise stops the run**, re-raised as ``HookError`` naming the plugin and the hook (the
  original is its ``__cause__``). These pass through unchanged: ``GuardrailViolation`` (a
  refusal), ``RunError`` and its subclasses (``BudgetExceeded``, ``ElicitationError``...),
  ``UsageError`` (bad configuration, already naming where it came from) and ``HookError``.
* **No markers.** ``wrapper=True``/``hookwrapper=True`` (on any agentkit hook) and
  ``tryfirst``/``trylast`` (on a contested hook or the commands hook) leave the plugin out at
  load: agentkit calls each implementation itself, in the one plugin order.

Plugin order is the kit's, not pluggy's: the plugin manager registers plugins so that pluggy's
call order is exactly the resolved plugin order, first plugin first.
"""

from __future__ import annotations

from collections.abc import Awaitable
from collections.abc import Callable
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal
from typing import Protocol
from typing import TypeAlias
from typing import TypeVar
from typing import Union

import pluggy

if TYPE_CHECKING:
    import argparse
    from collections.abc import Sequence

    from ._checkpoint import CheckpointPort
    from ._compaction import Compactor
    from ._context import RunContext
    from ._executor import Executor
    from ._guard import Guard
    from ._guardrails import Guardrail
    from ._hooks import ToolDecision
    from ._hooks import TurnInfo
    from ._instructions import PartSource
    from ._memory import MemoryStore
    from ._messages import Message
    from ._messages import ToolCall
    from ._models import Model
    from ._models import ModelRequest
    from ._output import SchemaAdapter
    from ._policy import PolicyEngine
    from ._pricing import PriceSource
    from ._sessions import SessionStore
    from ._tools import ToolResult
    from ._toolsource import ToolSource
    from ._tracing import SpanExporter

PROJECT = "agentkit"

#: Marks a function as a hook specification (used only in this module).
hookspec = pluggy.HookspecMarker(PROJECT)
#: Marks a plugin's function as the implementation of a hook.
hookimpl = pluggy.HookimplMarker(PROJECT)


T = TypeVar("T")
V_contra = TypeVar("V_contra", contravariant=True)

#: What a contested-field hook returns: a value, an awaitable of one (``async def``), or None
#: for "no opinion". ``HookResult[ModelRequest]`` is what a before_model_call hook returns.
HookResult: TypeAlias = T | Awaitable[T | None] | None

#: A contested-field hook as a user passes one (``Hooks.of``, ``Kit(before_turn=...)``): it may
#: take any of the spec's arguments by name, and returns ``HookResult[T]``.
HookFunction: TypeAlias = Callable[..., HookResult[T]]

#: What a before_tool_call hook returns: a ToolDecision, or just its kind.
ToolVerdict: TypeAlias = Union["ToolDecision", Literal["allow", "ask", "deny"]]


class Register(Protocol[V_contra]):
    """The callback a registration hook receives: ``register(name, value, **meta)``.

    ``name`` is what users pick on that seam; ``value`` is what the seam's docstring asks for
    (``Register[ModelFactory]`` takes a model factory); ``meta`` keywords are kept on the
    :class:`~agentkit_core.plugin.Registration` and shown by ``agentkit plugins list``. Registering
    one name twice raises.
    """

    def __call__(self, name: str, value: V_contra, /, **meta: Any) -> None:
        """Record ``value`` under ``name`` on this hook's seam, for the calling plugin."""


class RegisterSchemaAdapter(Protocol):
    """The schema-adapter callback: ``register(name, probe, factory, rank=...)``."""

    def __call__(
        self,
        name: str,
        probe: Callable[[Any], bool],
        factory: Callable[[Any], SchemaAdapter[Any]],
        /,
        *,
        rank: int = 100,
        **meta: Any,
    ) -> None:
        """Record flavour ``name``: ``probe(tp)`` says if it handles ``tp``; ``factory`` builds."""


class MCPTokenStore(Protocol):
    """Where OAuth grants for MCP servers are kept, one per (server URL, user).

    A grant is a JSON object the MCP client writes and reads back unchanged (its tokens, its
    registered client, when the access token expires); the store never looks inside. Keys are
    any strings, Unicode included. ``put`` replaces the whole grant at once: a reader sees the
    old grant or the new one, never a mix. ``agentkit_core.testing.MCPTokenStoreConformance``
    checks an implementation.
    """

    url: str

    async def get(self, server: str, user: str) -> dict[str, Any] | None:
        """The grant stored for ``(server, user)``, or None."""

    async def put(self, server: str, user: str, grant: dict[str, Any]) -> None:
        """Store ``grant`` for ``(server, user)``, replacing any earlier one."""

    async def delete(self, server: str, user: str) -> bool:
        """Forget the grant; whether there was one."""

    async def aclose(self) -> None:
        """Release what the store holds open; later calls raise ``StorageError``."""


#: What each seam's factory builds. A factory that declares a ``manager`` parameter is also
#: given the plugin manager it was looked up on (see ``docs/plugins.md``).
CompactorFactory: TypeAlias = Callable[..., "Compactor"]
#: ``factory(**options)``: a guardrail.
GuardrailFactory: TypeAlias = Callable[..., "Guardrail"]
#: ``factory(**options)``: a guard, built with the options ``Kit(guard_options={name: ...})``.
GuardFactory: TypeAlias = Callable[..., "Guard"]
#: ``factory(**options)``: a run executor, built with ``Kit(executor_options=...)``.
ExecutorFactory: TypeAlias = Callable[..., "Executor"]
#: ``factory(**options)``: an instruction part (a ``PartSource``).
InstructionPartFactory: TypeAlias = Callable[..., "PartSource"]
#: ``loader(path)``: the policy engine a policy file describes.
PolicyLoader: TypeAlias = Callable[..., "PolicyEngine"]
#: ``factory(model_name, **options)``: a model.
ModelFactory: TypeAlias = Callable[..., "Model"]
#: ``factory()``: the exporter, or None when it is not configured.
SpanExporterFactory: TypeAlias = Callable[..., "SpanExporter | None"]
#: ``opener(url)``: the store for ``url``, or an awaitable of it.
StoreOpener: TypeAlias = Callable[..., "CheckpointPort | Awaitable[CheckpointPort]"]
#: ``opener(url)``: the session store for ``url``, or an awaitable of it.
SessionStoreOpener: TypeAlias = Callable[..., "SessionStore | Awaitable[SessionStore]"]
#: ``opener(url)``: the memory store for ``url``, or an awaitable of it.
MemoryStoreOpener: TypeAlias = Callable[..., "MemoryStore | Awaitable[MemoryStore]"]
#: ``opener(url)``: the MCP token store for ``url``, or an awaitable of it.
MCPTokenStoreOpener: TypeAlias = Callable[..., "MCPTokenStore | Awaitable[MCPTokenStore]"]
#: ``serve(kit, *, host, port, ready, **options)``: serve ``kit`` until cancelled.
ServerFactory: TypeAlias = Callable[..., Awaitable[None]]
#: ``factory(**options)``: a tool source, several, or an awaitable of either (one that connects).
ToolSourceFactory: TypeAlias = Callable[
    ..., "ToolSource | Sequence[ToolSource] | Awaitable[ToolSource | Sequence[ToolSource]]"
]


# --------------------------------------------------------------------------- registration hooks


@hookspec
def agentkit_register_compactors(register: Register[CompactorFactory]) -> None:
    """Offer compactors.

    Called once, when the plugin manager loads the plugin. Call
    ``register(name, factory, settings=Options)`` for each compactor: ``factory(**options)``
    returns an object with ``async compact(messages, ctx) -> messages``; ``settings`` is the
    ``TypedDict`` of its options, against which the lookup checks ``compactor_options`` before
    the call. ``name`` is what users pick (``"sliding-window"``). Two plugins registering one
    name is a conflict the manager reports, naming both distributions, unless the
    configuration picks one.
    """


@hookspec
def agentkit_register_schema_adapters(register: RegisterSchemaAdapter) -> None:
    """Offer schema-adapter flavours for typed output.

    Called once at load. Call ``register(name, probe, factory, rank=...)``: ``probe(tp) -> bool``
    says whether the flavour handles the type ``tp`` and must be cheap and import nothing heavy
    (check ``sys.modules`` before touching an optional library); ``factory(tp)`` builds the
    adapter. ``adapt()`` tries flavours by ascending ``rank``, then name; the first probe that
    accepts wins. Ranks in use: pydantic 10, attrs 20, dataclass 30, jsonschema 40.
    """


@hookspec
def agentkit_register_checkpoint_stores(register: Register[StoreOpener]) -> None:
    """Offer checkpoint stores, keyed by URL scheme.

    Called once at load. Call ``register(scheme, opener)``: ``opener(url)`` returns a
    ``CheckpointPort`` (it may be async and must not connect before first use if it cannot fail
    cleanly). ``open_checkpoint_store(url)`` dispatches on the scheme; two plugins registering
    one scheme is a conflict.
    """


@hookspec
def agentkit_register_session_stores(register: Register[SessionStoreOpener]) -> None:
    """Offer session stores, keyed by URL scheme.

    Called once at load. Call ``register(scheme, opener)``: ``opener(url)`` returns a
    ``SessionStore`` (it may be async; a store that connects should do so on first use, so a
    bad URL fails here and an unreachable server on the first call). ``open_session_store(url)``
    and ``open_sessions(url)`` dispatch on the scheme; two plugins registering one scheme is a
    conflict. The schemes are the session seam's own: a plugin may offer ``sqlite`` here while
    another offers it for checkpoints.
    """


@hookspec
def agentkit_register_memory_stores(register: Register[MemoryStoreOpener]) -> None:
    """Offer memory stores, keyed by URL scheme.

    Called once at load. Call ``register(scheme, opener)``: ``opener(url)`` returns a
    ``MemoryStore`` (it may be async; a bad URL fails here, an unreachable server on the first
    call). ``open_memory_store(url)``, ``open_memory(url)`` and ``Kit(memory={"store": url})``
    dispatch on the scheme; two plugins registering one scheme is a conflict. The schemes are
    the memory seam's own: ``sqlite`` here and for sessions are two registrations.
    """


@hookspec
def agentkit_register_mcp_token_stores(register: Register[MCPTokenStoreOpener]) -> None:
    """Offer stores for MCP servers' OAuth grants, keyed by URL scheme.

    Called once at load. Call ``register(scheme, opener)``: ``opener(url)`` returns an
    :class:`MCPTokenStore` (it may be async; a bad URL fails here, an unreachable backend on
    the first call). ``open_mcp_token_store(url)``, ``Kit(mcp=[{"url": ..., "auth": "oauth",
    "token_store": url}])`` and ``agentkit mcp login --store URL`` dispatch on the scheme; two
    plugins registering one scheme is a conflict (``pick`` settles it). The schemes are this
    seam's own: ``sqlite`` here and for sessions are two registrations.
    """


@hookspec
def agentkit_register_guardrails(register: Register[GuardrailFactory]) -> None:
    """Offer guardrails.

    Called once at load. Call ``register(name, factory, settings=..., env_prefix=...)``:
    ``factory(**options)`` returns a ``Guardrail``. ``settings`` is the ``TypedDict`` of its
    options; with it, ``get_guardrail(name)`` layers the ``[guardrail.NAME]`` table of the
    configuration, then the variables ``env_prefix`` + KEY, then the caller's options, each
    checked. Users pick one by name; two plugins registering
    one name is a conflict.
    """


@hookspec
def agentkit_register_tool_sources(register: Register[ToolSourceFactory]) -> None:
    """Offer tool sources (an MCP bridge, a skills directory...).

    Called once at load. Call ``register(name, factory, settings=Options)``:
    ``factory(**options)`` returns a tool source, an object with a ``label`` and ``tools()``;
    ``settings`` is the ``TypedDict`` of its options, against which the lookup checks
    ``Kit(tool_sources={name: {...}})`` before the call. The kit unions every source's tools into
    one namespace, in a stable source order.
    """


@hookspec
def agentkit_register_models(register: Register[ModelFactory]) -> None:
    """Offer model providers, keyed by the prefix of a model string.

    Called once at load. Call ``register(prefix, factory, settings=Options)``:
    ``factory(model_name, **options)`` returns a ``Model``; ``settings`` is the ``TypedDict`` of
    the options a ``[models.PREFIX]`` table of the configuration may set, checked against it.
    ``"openai:gpt-4o-mini"`` goes to the factory registered for ``"openai"`` with
    ``"gpt-4o-mini"``. Two plugins registering one prefix is a conflict.
    """


@hookspec
def agentkit_register_instruction_parts(
    register: Register[InstructionPartFactory],
) -> None:
    """Offer instruction parts for the kit's instructions.

    Called once at load. Call ``register(name, provider, settings=Options)``: the kit calls
    ``provider(**options)`` with the options ``Kit(parts={name: {...}})`` gives that part,
    checked first against ``settings`` (the ``TypedDict`` of its options), and it returns a
    ``PartSource`` (``TextPart(text, id=name, source=name)`` for fixed text; a
    plain string is refused with a ``PluginError`` naming the plugin). The kit joins the parts
    in its stated order under the instruction budget and reports what it left out.
    """


@hookspec
def agentkit_register_span_exporters(register: Register[SpanExporterFactory]) -> None:
    """Offer span exporters, which receive every run's trace spans.

    Called once at load. Call ``register(name, factory)``: ``factory()`` returns an
    ``agentkit_core.plugin.SpanExporter``, or None when it is not configured (an OpenTelemetry
    exporter with no ``OTEL_*`` endpoint set). Every agent built without ``exporters=`` attaches
    all of them, in plugin order, to each of its runs; each is told of every span's start and
    end. Two plugins registering one name is a conflict.
    """


@hookspec
def agentkit_register_policy_engines(register: Register[PolicyLoader]) -> None:
    """Offer policy engines: what reads a policy file into a ``PolicyEngine``.

    Called once at load. Call ``register(name, loader)``: ``loader(path)`` returns a
    ``PolicyEngine`` (a subclass of ``agentkit_core.plugin.PolicyEngine``) deciding tool calls as
    the file at ``path`` says, and raises ``ConfigError`` naming the file and the line of what it
    cannot read. ``load_policy(path)`` and ``Kit(policy="policy.toml")`` use the one engine
    installed, or the one named (``engine=``, ``policy_engine=``); two plugins registering one
    name is a conflict.
    """


@hookspec
def agentkit_register_guards(register: Register[GuardFactory]) -> None:
    """Offer guards: checks of what is sent to a model, what comes back, and each turn.

    Called once at load. Call ``register(name, factory, settings=Options)`` for each guard:
    ``factory(**options)`` returns an ``agentkit_core.plugin.Guard`` (a subclass), built with the
    options ``Kit(guard_options={name: {...}})`` or ``get_guard(name, **options)`` give, which
    the lookup first checks against ``settings`` (the ``TypedDict`` of its options): an unknown
    key or a value of the wrong kind is a ``ConfigError`` naming it; the factory raises
    ``ConfigError`` naming a bad value. Users pick guards by name (``Kit(guards=["redact"])``);
    the chain runs the named guards in plugin order (a plugin's own in the order it registered
    them), then the product's ``Guard`` objects. Two plugins registering one name is a conflict.
    A guard's checks are synchronous, pure functions of their input (see ``Guard``).
    """


@hookspec
def agentkit_register_executors(register: Register[ExecutorFactory]) -> None:
    """Offer run executors: how a run's model calls and tool calls are executed.

    Called once at load. Call ``register(name, factory, settings=Options)`` for each executor:
    ``factory(**options)`` returns an ``agentkit_core.plugin.Executor`` (a subclass), built with the
    options ``Kit(executor=name, executor_options={...})`` or ``get_executor(name, **options)``
    give. The host checks the options against the factory's keyword parameters first and
    refuses an unknown one with a ``ConfigError``, then the kinds of their values against
    ``settings`` (the ``TypedDict`` of its options); the factory raises ``ConfigError`` naming
    a bad value (a database URL it cannot use). The factory must not connect or start
    anything: that happens when a run is started or a worker serves. ``"in-process"`` is
    core's own executor and cannot be registered; an unknown name is an ``UnknownNameError``
    listing the installed ones. Two plugins registering one name is a conflict.
    """


@hookspec
def agentkit_register_prices(register: Register[PriceSource]) -> None:
    """Offer a price table: what a request to a model costs.

    Called once at load. Call ``register(name, source)``: ``source(model)`` takes a model's
    name (``"openai:gpt-4o-mini"``) and returns its price (an ``agentkit_core.plugin.Price``,
    or any object with ``cost(usage) -> float`` in US dollars), or None when it does not know
    the model: never a guess. It is asked once per model and must be fast after its first
    call. Sources are asked in plugin order, after the configuration's ``[prices."NAME"]``
    tables; two plugins registering one name is a conflict.
    """


@hookspec
def agentkit_register_servers(register: Register[ServerFactory]) -> None:
    """Offer servers: the protocols ``agentkit serve --protocol NAME`` serves a kit over.

    Called once at load. Call ``register(name, serve)`` for each protocol: ``await serve(kit,
    host=..., port=..., ready=..., **options)`` serves the opened ``Kit`` (its session store
    holds one session per conversation, ``kit.recorder_for``) until it is cancelled, and calls
    ``ready(url)`` once it listens. ``options`` are what the command line gave: ``token`` (a
    bearer token every request must carry) and ``ui`` (also serve a chat page); a server that
    does not take one raises ``ConfigError`` naming it. Importing the plugin must stay light:
    import the web stack inside ``serve``. Two plugins registering one name is a conflict.
    """


@hookspec
def agentkit_register_commands(cli: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    """Add subcommands to the ``agentkit`` command line.

    Called when the CLI starts, once per plugin, in plugin order, with an argparse subparsers
    object: ``cli.add_parser("mcp", ...)`` then ``set_defaults(func=handler)``, where
    ``handler(args) -> int`` returns the exit code and finds the loaded plugin manager as
    ``args.plugin_manager``. Each plugin adds to a scratch parser first: one whose hook raises,
    or that adds a name already taken (a built-in command or an earlier plugin's), is reported
    as a warning and all its commands are left out.
    """


# --------------------------------------------------------------------------- contested fields


@hookspec
def agentkit_before_model_call(ctx: RunContext, request: ModelRequest) -> HookResult[ModelRequest]:
    """Adjust a request before it goes to the model.

    Called by the loop for every model call, before the invoker's middleware chain. Receives
    the run context and the request as the previous plugin left it. Returns a replacement
    ``ModelRequest``, or None to pass it on unchanged; anything else is a ``HookError``. Fold:
    each in plugin order, each sees what the previous returned.
    """


@hookspec
def agentkit_before_tool_call(ctx: RunContext, call: ToolCall) -> HookResult[ToolVerdict]:
    """Decide whether a tool call may run.

    Called by the loop for each tool call the model asked for, before it runs (and again on
    resume for a pending call nobody settled). Returns a ``ToolDecision`` (``allow``, ``ask``
    or ``deny``, with a reason), one of the strings ``"allow"``, ``"ask"``, ``"deny"``, or None
    for no opinion; anything else (another string, a decision of another kind) is a
    ``HookError``. Fold: every plugin is asked; deny wins over ask, ask over allow; the first
    plugin of the winning kind is named as its source. ``ask`` suspends the run for a person's
    approval; ``deny`` turns the call into a tool error the model sees. Raise
    ``GuardrailViolation`` only to stop the whole run; return ``deny`` to refuse one call.
    """


@hookspec
def agentkit_after_tool_call(
    ctx: RunContext, call: ToolCall, result: ToolResult
) -> HookResult[ToolResult]:
    """Rewrite a tool's result before the model sees it (framing, redaction).

    Called after each tool call (a denied one too), with the call and the result the previous
    plugin left. Returns a replacement ``ToolResult``, or None to keep it; anything else is a
    ``HookError``. Fold: each in plugin order may replace it.
    """


@hookspec
def agentkit_output_guard(ctx: RunContext, message: Message) -> HookResult[Message]:
    """Check or rewrite the final answer before the run returns it.

    Called once per run on the model's final assistant message. Returns a replacement
    ``Message``, or None to pass it on; anything else is a ``HookError``. Raise
    ``GuardrailViolation`` to refuse the answer: it reaches the caller unchanged. Fold: each in
    plugin order sees what the previous left.
    """


@hookspec
def agentkit_should_stop_after_turn(ctx: RunContext, turn: TurnInfo) -> HookResult[str]:
    """Decide whether the run stops after a turn.

    Called after every turn that ran tools (a model call and its tool calls) with a
    ``TurnInfo``. Returns a non-empty reason string to stop, or None to go on; anything else
    (``True``, ``""``, a number) is a ``HookError``. Fold: the first plugin in order that
    returns a reason wins; the rest are not called, and the run's stop reason names the plugin.
    """


@hookspec
def agentkit_before_turn(ctx: RunContext, info: TurnInfo) -> HookResult[Sequence[Message]]:
    """Add messages at the start of a turn (reminders, fresh context).

    Called before each turn's model call with a ``TurnInfo``. Returns a list (or tuple) of
    ``Message`` to append to the transcript, or None; anything else, or a list holding anything
    but messages, is a ``HookError``. Fold: every plugin's messages, concatenated in plugin
    order.
    """


@hookspec
def agentkit_transform(ctx: RunContext, transcript: list[Message]) -> HookResult[Sequence[Message]]:
    """Transform the transcript before a request is built from it.

    Called before each model call with the transcript the previous plugin left: a list of its
    own (the first plugin gets a copy of the run's transcript, each next one a copy of what the
    previous returned), so trimming it in place touches neither the run's saved transcript nor
    another plugin's list. Returns a list (or tuple) of ``Message``, or None to pass on the
    list as it now is; anything else is a ``HookError``. Fold: a pipeline in plugin order; a
    then the agent's fold (``Folding``,
    which may replace older messages of the run's transcript with a summary) and, on each
    request, a configured compactor.
    """
