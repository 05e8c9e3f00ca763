"""The ``importance`` compactor: ask a model which turns must survive, drop the rest."""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import BudgetExceeded
from agentkit_core import ConfigError
from agentkit_core import Message
from agentkit_core import hookimpl
from agentkit_core.plugin import ModelRequest
from agentkit_core.plugin import current_span
from agentkit_core.plugin import lazy_attributes
from agentkit_core.plugin import resolve_model_option

if TYPE_CHECKING:
    from agentkit_core.plugin import CompactorFactory
    from agentkit_core.plugin import Register

    from ._options import Filterer as Filterer
    from ._options import ImportanceOptions as ImportanceOptions

if TYPE_CHECKING:  # the run machinery (asyncio) loads when a run uses the compactor, not here
    from agentkit_core import PluginManager
    from agentkit_core import RunContext
    from agentkit_core.plugin import Estimator
    from agentkit_core.plugin import Model

__all__ = [
    "INSTRUCTIONS",
    "Filterer",
    "ImportanceFilteringCompactor",
    "ImportanceOptions",
]

#: The system message of the filtering request when a model chooses.
INSTRUCTIONS = (
    "You decide which turns of a conversation an assistant still needs. Keep the turns "
    "that hold facts, decisions, constraints or results the conversation depends on; drop "
    "chit-chat and superseded attempts. Answer with only a JSON list of the numbers of the "
    "turns to keep, for example [1, 4]."
)


class _Unusable(Exception):
    """The filterer's answer cannot be used; the message is the span's reason."""


class ImportanceFilteringCompactor:
    """Over ``max_tokens``, keep the system message, the newest turn and the turns chosen.

    The choice comes from ``filterer=`` or, failing that, from a model: ``model=`` (a Model
    or model string) or else the run's own model, called through the run's middleware chain
    (tracing, retry, metering: its cost lands on the run). The model sees the other turns
    numbered from 1 and answers with a JSON list of numbers. When the answer cannot be used
    (the call raises, it does not parse, it names turns that do not exist) the transcript
    comes back whole and the ``compaction`` span says why. A model string is resolved on
    ``manager``, which it then requires (the lookup passes the one it ran on); a Model needs
    none.
    """

    def __init__(
        self,
        filterer: Filterer | None = None,
        *,
        model: Model | str | None = None,
        max_tokens: int = 12_000,
        instructions: str = INSTRUCTIONS,
        estimate: Estimator | None = None,
        manager: PluginManager | None = None,
    ) -> None:
        if filterer is not None and model is not None:
            raise ConfigError(
                "ImportanceFilteringCompactor got both filterer= and model=; pass one (model= "
                "is the model that chooses, filterer= chooses yourself)",
                source="ImportanceFilteringCompactor",
            )
        if max_tokens < 1:
            raise ConfigError(f"max_tokens must be at least 1, got {max_tokens}", value=max_tokens)
        self.filterer = filterer
        if model is not None:
            model = resolve_model_option(
                model, manager=manager, owner="ImportanceFilteringCompactor"
            )
        self.model = model
        self.max_tokens = max_tokens
        self.instructions = instructions
        self.estimate = estimate

    async def compact(self, messages: Sequence[Message], ctx: RunContext) -> Sequence[Message]:
        """The system message, the turns the filterer keeps, the newest turn."""
        from agentkit_core.plugin import compaction_units  # loaded by the first compaction
        from agentkit_core.plugin import keep_units
        from agentkit_core.plugin import newest_user

        units = compaction_units(messages, self.estimate)
        if sum(u.tokens for u in units) <= self.max_tokens:
            return messages
        head = units[:1] if units and units[0].kind == "system" else []
        turns = [u for u in units if u.kind in ("message", "tool_turn")]
        newest, candidates = turns[-1:], turns[:-1]
        question = newest_user(messages)  # kept whatever the filterer says: the run answers it
        asked = {i for i, u in enumerate(candidates) if u.start <= (question or -1) < u.end}
        outer = current_span()
        with ctx.trace.span("compaction", compactor="importance") as span:

            def skip(reason: str) -> Sequence[Message]:
                for s in (outer, span):
                    s.set("compaction_skipped", reason)
                return messages

            if not candidates:
                return skip("no turn but the newest to choose from")
            choose = self.filterer or self._model_filterer(ctx)
            try:
                answer = await choose([keep_units(messages, [u]) for u in candidates], ctx)
                keep = _indices(answer, len(candidates))
            except BudgetExceeded:
                raise
            except _Unusable as exc:
                return skip(str(exc))
            except Exception as exc:
                return skip(f"the filterer failed: {type(exc).__name__}: {exc}")
            kept = [candidates[i] for i in sorted({*keep, *asked})]
            span.set("compaction_kept_turns", len(kept))
            span.set("compaction_dropped_turns", len(candidates) - len(kept))
            return keep_units(messages, head + kept + newest)

    def _model_filterer(self, ctx: RunContext) -> Filterer:
        from agentkit_core.plugin import render_transcript

        invoker = ctx.invoker_for(
            self.model, source="the importance compactor", hint="pass model= or filterer="
        )

        async def choose(turns: list[list[Message]], ctx: RunContext) -> list[int]:
            rendered = [render_transcript(t, sep="\n") for t in turns]
            numbered = "\n\n".join(f"Turn {n}:\n{t}" for n, t in enumerate(rendered, 1))
            request = ModelRequest(
                (Message.system(self.instructions), Message.user(numbered)),
                ctx=ctx,
                metadata={"compaction": "importance"},
            )
            text = (await invoker.chat(request)).message.text
            return [n - 1 for n in _numbers(text, len(turns))]

        return choose


def _numbers(text: str, count: int) -> list[int]:
    """The turn numbers (1-based) in a model's answer: a JSON list, maybe in a fence or prose."""
    # imported here: it lives with the core's typed output, which a plain run does not load
    from agentkit_core.plugin import strip_code_fence

    body = strip_code_fence(text)
    try:
        data = json.loads(body)
    except json.JSONDecodeError:
        found = re.search(r"\[[^\[\]]*\]", body)
        try:
            data = json.loads(found.group(0)) if found else None
        except json.JSONDecodeError:
            data = None
    if not isinstance(data, list) or not all(_is_int(n) for n in data):
        raise _Unusable(f"the answer is not a JSON list of turn numbers: {text[:200]!r}")
    bad = [n for n in data if not 1 <= n <= count]
    if bad:
        raise _Unusable(f"the answer names turns that do not exist: {bad} (turns are 1-{count})")
    return list(data)


def _indices(answer: Any, count: int) -> set[int]:
    """The filterer's answer as a set of valid 0-based indices, or :class:`_Unusable`."""
    if isinstance(answer, str | bytes) or not isinstance(answer, Sequence):
        raise _Unusable(f"the filterer returned {answer!r:.200}, not a list of turn indices")
    bad = [i for i in answer if not _is_int(i) or not 0 <= i < count]
    if bad:
        raise _Unusable(
            f"the filterer named turns that do not exist: {bad!r:.200} (indices are 0-{count - 1})"
        )
    return set(answer)


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@hookimpl
def agentkit_register_compactors(register: Register[CompactorFactory]) -> None:
    """Offer ``importance``."""
    register(
        "importance",
        ImportanceFilteringCompactor,
        settings=partial(__getattr__, "ImportanceOptions"),
    )


__getattr__ = lazy_attributes(__name__, {"Filterer": "._options", "ImportanceOptions": "._options"})
