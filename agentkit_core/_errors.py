"""The one exception hierarchy of agentkit.

Every error agentkit raises derives from :class:`AgentkitError`, split by whose fault it is.
Leaves also derive from the nearest builtin, so ``except ValueError`` keeps working::

    AgentkitError
    ├── UsageError                  the caller configured or called something wrongly
    │   ├── ConfigError             (ValueError) a bad option, file or environment value
    │   │   └── ApprovalRefused     an answer for a call that is not waiting on an ask
    │   ├── ToolDefinitionError     (TypeError) a tool that cannot be built, or a duplicate name
    │   ├── UnknownNameError        (LookupError) a name no installed plugin registered
    │   └── UnsupportedTypeError    (TypeError) a type no schema flavour accepts
    ├── PluginError                 an installed plugin is broken or conflicts with another
    │   ├── PluginLoadError         import, registration or core-range failure
    │   ├── PluginConflictError     two plugins claim one name on one seam
    │   ├── PluginOrderError        before=/after= constraints form a cycle
    │   └── HookError               a plugin's hook raised or returned what its field forbids
    │       └── HookTimeoutError    (TimeoutError) an async hook overran its deadline
    ├── RunError                    (RuntimeError) a run could not go on
    │   ├── MaxTurnsExceeded
    │   ├── BudgetExceeded
    │   ├── OutputValidationError   typed output still invalid after the repair retries
    │   ├── ToolTimeoutError        (TimeoutError)
    │   ├── StepTimeoutError        (TimeoutError) an executor's step overran its timeout
    │   ├── PendingToolCallError    a request would end on tool calls still waiting for results
    │   ├── FoldError               a summary the fold cannot use (caught and recorded by it)
    │   └── ElicitationError        no elicitor configured, or the person declined
    ├── StorageError                a checkpoint or session store refused or failed
    │   ├── VersionConflict         the compare-and-set lost: that version is taken
    │   ├── EncodingError           (TypeError) state that cannot be encoded, with its path
    │   ├── SessionConflict         a session moved on under an append, or its id is taken
    │   ├── SessionNotFound         (LookupError) no such session, or no such item in it
    │   ├── CorruptSessionItem      (ValueError) a stored item that does not decode
    │   ├── SecretTaintError        (ValueError) a secret-tainted item refused before writing
    │   ├── MemoryConflict          a memory write based on a version that is no longer current
    │   ├── CorruptMemoryEntry      (ValueError) a stored memory entry that does not read
    │   └── DecodingError           (ValueError) a stored record that does not decode, with
    │                               its store, run, version and path
    ├── ParseError                  (ValueError) text that does not parse into the declared type
    ├── GuardrailViolation          (ValueError) a URL or output a guardrail refused
    │   └── GuardBlocked            a guard blocked a request, a part or an answer
    ├── ToolSourceError             an external tool source (an MCP server) failed
    └── ProviderError               the model provider failed
        ├── ProviderHTTPError       a 4xx/5xx answer, with the provider's message
        ├── ProviderResponseError   an answer that is not what the wire format promises
        └── ModelDeadlineExceeded   (TimeoutError) no answer within the model call's deadline

This module imports nothing of agentkit's, so the message and memory models can raise its
errors. The errors that carry those models are defined above them: :class:`RunError` and its
leaves in ``_run_errors`` (``.transcript`` holds messages), :class:`MemoryConflict` in
``_memory`` (``.current`` is an entry). The doors export them all alike.

Errors carry what they are about as attributes (``.plugin``, ``.value``, ``.path``...), and their
message says what was wrong and what to do about it.

One warning: :class:`SlowHookWarning` (a ``RuntimeWarning``), for a synchronous hook that held
the event loop longer than its limit.
"""

from __future__ import annotations

from collections.abc import Mapping


class AgentkitError(Exception):
    """Base class of every error agentkit raises."""

    def __reduce__(self) -> tuple[object, ...]:
        # pickled by a durable executor that records a step's or a run's error: the keyword
        # fields are attributes, not args, so the default (cls(*args)) would not rebuild it
        return (_rebuild, (type(self), self.args, self.__dict__))


def _rebuild(
    cls: type[AgentkitError], args: tuple[object, ...], fields: dict[str, object]
) -> AgentkitError:
    import inspect

    takes = inspect.signature(cls.__init__).parameters
    error = cls(*args, **{name: value for name, value in fields.items() if name in takes})
    error.__dict__.update(fields)
    return error


class UsageError(AgentkitError):
    """The caller configured or called something wrongly."""


class ConfigError(UsageError, ValueError):
    """A bad option, configuration file or environment value."""

    def __init__(self, message: str, *, value: object = None, source: str | None = None) -> None:
        super().__init__(message)
        self.value = value
        self.source = source


class ApprovalRefused(ConfigError):
    """Answers given for calls that are not waiting on an *ask* in the run being resumed.

    Only a call the policy and hooks asked a person about can be approved or refused; a call
    they denied stays denied, one they allowed needs no answer, and an id the run never held
    names nothing. ``.refused`` maps each refused call id to its verdict in the run
    (``"deny"``, ``"allow"``, or ``"unknown"`` for an id the run does not hold). Nothing of the
    run changed: resume it again with answers for the calls it holds.
    """

    def __init__(self, message: str, *, refused: dict[str, str], source: str) -> None:
        super().__init__(message, value=sorted(refused), source=source)
        self.refused = refused


class ToolDefinitionError(UsageError, TypeError):
    """A tool that cannot be built from what was given, or a duplicate tool name."""


class UnknownNameError(UsageError, LookupError):
    """A name (compactor, store scheme, model prefix...) that no installed plugin registered."""

    def __init__(self, message: str, *, name: str = "", available: tuple[str, ...] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.available = available

    def __str__(self) -> str:  # LookupError would repr() the message otherwise
        return str(self.args[0]) if self.args else ""


class UnsupportedTypeError(UsageError, TypeError):
    """A type that no installed schema flavour accepts."""


class PluginError(AgentkitError):
    """An installed plugin is broken, or conflicts with another."""

    def __init__(self, message: str, *, plugin: str | None = None) -> None:
        super().__init__(message)
        self.plugin = plugin


class PluginLoadError(PluginError):
    """A plugin failed to import or register, or does not admit the installed core."""


class PluginConflictError(PluginError):
    """Two plugins register one name on one seam."""


class PluginOrderError(PluginError):
    """The plugins' before=/after= constraints form a cycle."""


class HookError(PluginError):
    """A plugin's hook failed during a run: it raised, or returned a value its field forbids.

    ``.plugin`` and ``.hook`` say whose hook; for a wrong return value ``.value`` is what it
    returned and ``.allowed`` describes what the field accepts. A raise is chained
    (``__cause__``).
    """

    def __init__(
        self,
        message: str,
        *,
        plugin: str | None = None,
        hook: str = "",
        value: object = None,
        allowed: str = "",
    ) -> None:
        super().__init__(message, plugin=plugin)
        self.hook = hook
        self.value = value
        self.allowed = allowed


class HookTimeoutError(HookError, TimeoutError):
    """An async hook did not return within the hooks' deadline, and was cancelled."""


class SlowHookWarning(RuntimeWarning):
    """A synchronous hook held the event loop longer than the hooks' limit (``Hooks.slow``)."""


class StorageError(AgentkitError):
    """A checkpoint or session store refused or failed an operation."""


class VersionConflict(StorageError):
    """The compare-and-set lost: the version is already taken for that run and namespace."""

    def __init__(self, message: str, *, run_id: str = "", version: int = 0) -> None:
        super().__init__(message)
        self.run_id = run_id
        self.version = version


class EncodingError(StorageError, TypeError):
    """A value that the state encoder cannot encode; ``.path`` names where it sits."""

    def __init__(self, message: str, *, path: str = "", value: object = None) -> None:
        super().__init__(message)
        self.path = path
        self.value = value


class SessionConflict(StorageError):
    """An append lost the compare-and-set on the leaf, or a new session's id is taken.

    ``.after`` is the item the append named, ``.leaf`` the session's leaf it found instead
    (both empty for a taken id).
    """

    def __init__(self, message: str, *, session_id: str, after: str = "", leaf: str = "") -> None:
        super().__init__(message)
        self.session_id = session_id
        self.after = after
        self.leaf = leaf


class SessionNotFound(StorageError, LookupError):
    """No session ``.session_id`` in the store ``.store``, or no item ``.item_id`` in it."""

    def __init__(
        self, message: str, *, session_id: str, item_id: str = "", store: str = ""
    ) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.item_id = item_id
        self.store = store


class CorruptSessionItem(StorageError, ValueError):
    """A stored session item that does not decode; the other items stay readable."""

    def __init__(self, message: str, *, session_id: str, item_id: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.item_id = item_id


class SecretTaintError(StorageError, ValueError):
    """An item marked secret-tainted was given to a session store, which never writes one."""

    def __init__(self, message: str, *, session_id: str, kind: str) -> None:
        super().__init__(message)
        self.session_id = session_id
        self.kind = kind


class CorruptMemoryEntry(StorageError, ValueError):
    """A stored memory entry that cannot be read; ``.name`` is the store's key for it.

    A file's path for the files store, the title for a database row. The other entries of the
    scope stay readable.
    """

    def __init__(self, message: str, *, scope: str, name: str) -> None:
        super().__init__(message)
        self.scope = scope
        self.name = name


class DecodingError(StorageError, ValueError):
    """Stored text that does not decode back into state: a corrupt or foreign record.

    ``.path`` names where in the decoded value (``state["transcript"][3]``); a record read
    through a :class:`~agentkit_core.Checkpointer` also names its ``.store``, ``.run_id`` and
    ``.version``.
    """

    def __init__(
        self,
        message: str,
        *,
        path: str = "",
        store: str = "",
        run_id: str = "",
        version: int = 0,
    ) -> None:
        super().__init__(message)
        self.path = path
        self.store = store
        self.run_id = run_id
        self.version = version


class ParseError(AgentkitError, ValueError):
    """Text that does not parse into the declared type; carries the details and the raw text."""

    def __init__(self, message: str, *, raw: str = "", errors: list[str] | None = None) -> None:
        super().__init__(message)
        self.raw = raw
        self.errors = errors or []


class GuardrailViolation(AgentkitError, ValueError):
    """A guardrail refused a URL or an output; ``.value`` is what was refused."""

    def __init__(self, message: str, *, value: object = None, reason: str = "") -> None:
        super().__init__(message)
        self.value = value
        self.reason = reason


class GuardBlocked(GuardrailViolation):
    """A guard blocked what was checked: an instruction part, a request or an answer.

    ``.guard`` names the guard, ``.check`` the check (``"input"``, ``"output"``), ``.subject``
    what it was about (``"instructions/product"``, ``"message/3"``, ``"turn/2"``) and
    ``.reason`` the guard's reason; the blocked text itself is never carried.
    """

    def __init__(self, message: str, *, guard: str, check: str, subject: str, reason: str) -> None:
        super().__init__(message, reason=reason)
        self.guard = guard
        self.check = check
        self.subject = subject


class ToolSourceError(AgentkitError):
    """An external source of tools (an MCP server, say) failed to start, answer or call."""


class ProviderError(AgentkitError):
    """The model provider failed. ``retryable`` tells the retry middleware what to do."""

    retryable: bool = False

    def __init__(
        self, message: str, *, retryable: bool = False, retry_after: float | None = None
    ) -> None:
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after


class ProviderHTTPError(ProviderError):
    """The provider answered with an HTTP error; ``.status`` and the provider's ``.message``."""

    def __init__(
        self,
        message: str,
        *,
        status: int,
        provider_message: str = "",
        retryable: bool = False,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(message, retryable=retryable, retry_after=retry_after)
        self.status = status
        self.provider_message = provider_message

    @staticmethod
    def retry_after_of(headers: Mapping[str, str]) -> float | None:
        """Seconds an answer's headers ask to wait before another attempt, or None.

        ``retry-after-ms``, else ``Retry-After`` (seconds or an HTTP date); None when they say
        nothing readable. ``headers`` is any mapping with ``.get`` (httpx's, an SDK's
        response headers).
        """
        millis = headers.get("retry-after-ms")
        if millis is not None and (seconds := _seconds(millis, 1000)) is not None:
            return seconds
        value = headers.get("retry-after")
        if value is None:
            return None
        if (seconds := _seconds(value, 1)) is not None:
            return seconds
        from email.utils import parsedate_to_datetime
        from time import time

        try:
            when = parsedate_to_datetime(value)
        except (TypeError, ValueError):
            return None
        return max(0.0, when.timestamp() - time())


def _seconds(text: str, per_second: float) -> float | None:
    """``text`` as a number of seconds (at least 0), or None when it says none.

    "nan" says none: it read as 0, a retry at once, where None leaves the retry its backoff.
    """
    try:
        seconds = float(text) / per_second
    except ValueError:
        return None
    return None if seconds != seconds else max(0.0, seconds)


class ProviderResponseError(ProviderError):
    """The provider's answer is not what its wire format promises (bad JSON, a cut stream)."""


class ModelDeadlineExceeded(ProviderError, TimeoutError):
    """A model call (its retries included) gave no answer within its total deadline."""

    def __init__(self, message: str, *, deadline: float) -> None:
        super().__init__(message)
        self.deadline = deadline
