"""The contested hook fields, their arguments and the calling convention, without the folding.

What loading plugins needs of :mod:`._hooks` (checking an implementation's parameters, the
configuration's field names), kept apart so that listing plugins imports neither asyncio nor
the message, model, tool and tracing types :mod:`._hooks` folds with. ``_hooks`` re-exports
every name here.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable

from ._once import per_arguments

FIELDS: tuple[str, ...] = (
    "before_model_call",
    "before_tool_call",
    "after_tool_call",
    "output_guard",
    "should_stop_after_turn",
    "before_turn",
    "transform",
)

#: The arguments each field's hook is called with, in its hookspec's order.
ARGUMENTS: dict[str, tuple[str, ...]] = {
    "before_model_call": ("ctx", "request"),
    "before_tool_call": ("ctx", "call"),
    "after_tool_call": ("ctx", "call", "result"),
    "output_guard": ("ctx", "message"),
    "should_stop_after_turn": ("ctx", "turn"),
    "before_turn": ("ctx", "info"),
    "transform": ("ctx", "transcript"),
}

#: Contested hook name -> its field.
FIELD_OF_HOOK: dict[str, str] = {f"agentkit_{name}": name for name in FIELDS}


# ---------------------------------------------------------------------- calling convention

_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)


@per_arguments
def declared_arguments(field_name: str, fn: Callable[..., object]) -> tuple[str, ...]:
    """The arguments ``fn`` is called with as a ``field_name`` hook: the names it declares.

    pluggy's rule (``HookImpl.argnames``): the positional parameters without a default, each of
    which must be one of the hook's arguments. Read with :func:`inspect.signature`, so a bound
    method, a ``functools.partial`` or a callable object works as well as a function. A
    problem raises ``TypeError`` saying what to change.

    Read once per hashable ``fn``: every Kit and Agent builds its Hooks from the same plugin
    functions, and reading a signature is most of that.
    """
    spec = ARGUMENTS[field_name]
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        raise TypeError(f"{fn!r} is not a function whose parameters can be read ({exc})") from None
    names: list[str] = []
    for param in signature.parameters.values():
        if param.default is not param.empty:
            continue
        if param.kind in _POSITIONAL:
            names.append(param.name)
        elif param.kind is param.KEYWORD_ONLY:
            raise TypeError(
                f"keyword-only parameter {param.name!r} has no default, and the hook passes "
                "arguments by position; make it a plain parameter or give it a default"
            )
    unknown = [n for n in names if n not in spec]
    if unknown:
        raise TypeError(
            f"takes {', '.join(map(repr, unknown))}, which agentkit_{field_name} does not "
            f"pass; name the parameters after its arguments ({', '.join(spec)}: any of them, "
            "in any order)"
        )
    return tuple(names)
