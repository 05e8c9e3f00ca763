"""The RequestBuilder: prompt, grounding, output schema and transcript assembled in one place.

A :class:`WorkingContext` has two halves. The *prefix* (system prompt, grounding block,
output-schema block) is written on the first build and never rewritten, so a provider's
prompt cache stays valid; the *tail* (``wc.messages``) is the task and everything after it.
A compactor configured here sees only the tail: the prefix is not its business.
"""

from __future__ import annotations

import json
from collections.abc import Awaitable
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import asdict
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any

from ._content import Task
from ._content import task_content
from ._content import task_text
from ._errors import ConfigError
from ._messages import JSONObject
from ._messages import Message
from ._records import record
from ._tokens import estimate_tokens

if TYPE_CHECKING:
    from ._compaction import Compactor
    from ._context import RunContext


@record(frozen=True, slots=True)
class Prompt:
    """A versioned system prompt; ``version`` is stamped on every request built from it."""

    id: str
    version: str
    template: str

    def render(self, **values: object) -> str:
        """The template with ``{name}`` fields filled; no values leaves it as written."""
        return self.template.format(**values) if values else self.template


@record(frozen=True, slots=True)
class MemoryItem:
    """One retrieved piece of evidence, with where it came from."""

    content: str
    source: str
    score: float | None = None
    metadata: dict[str, Any] = field(default_factory=dict)


#: ``async (ctx, task) -> str``: retrieved text; an empty string means no grounding message.
Grounder = Callable[["RunContext", str], Awaitable[str]]
#: ``async (ctx, task) -> items``: retrieval that keeps provenance.
GroundingSource = Callable[["RunContext", str], Awaitable[Sequence[MemoryItem]]]
#: ``(item) -> bool``: a veto run before rendering; a rejected item never reaches the prompt.
GroundingAdmit = Callable[[MemoryItem], bool]
#: ``(items) -> str``: how admitted items become the grounding block.
GroundingRender = Callable[[Sequence[MemoryItem]], str]


def render_grounding(items: Sequence[MemoryItem]) -> str:
    """One ``[source] content`` line per item, so provenance reaches the model."""
    return "\n".join(f"[{item.source}] {item.content}" for item in items)


@record(slots=True)
class WorkingContext:
    """The prefix (written once) and the tail (``messages``) of one conversation.

    ``secret_tainted`` turns true once a run of the conversation was tainted by a secret
    answer: the tail holds the secret, so every later run on it starts tainted.
    """

    prefix: tuple[Message, ...] | None = None
    messages: list[Message] = field(default_factory=list)
    secret_tainted: bool = False


@record(frozen=True, slots=True)
class BuiltRequest:
    """What :meth:`RequestBuilder.build` returns: the messages, the prompt version, an estimate."""

    messages: tuple[Message, ...]
    prompt_version: str
    approx_tokens: int


class RequestBuilder:
    """Assembles the messages of a request: prompt, grounding, schema block, task, compaction.

    ``grounder=`` (text) and ``grounding=`` (items with provenance) are two ways to fill one
    slot; passing both is refused. ``budget_check(approx_tokens)`` may raise to abort a build.
    ``record_grounding=True`` appends the admitted items, encoded as JSON-ready dicts, to
    ``ctx.scratchpad["grounding"]``, so they survive a checkpoint.
    """

    def __init__(
        self,
        prompt: Prompt,
        *,
        grounder: Grounder | None = None,
        grounding: GroundingSource | None = None,
        admit: GroundingAdmit | None = None,
        render: GroundingRender = render_grounding,
        compactor: Compactor | None = None,
        reground_every_turn: bool = False,
        record_grounding: bool = False,
        budget_check: Callable[[int], None] | None = None,
        output_schema: JSONObject | None = None,
    ) -> None:
        if grounder is not None and grounding is not None:
            raise ConfigError(
                "RequestBuilder got both grounder= and grounding=; they fill one slot, so pass "
                "one (grounding= keeps provenance)",
                source="RequestBuilder",
            )
        if admit is not None and grounding is None:
            raise ConfigError("admit= vetoes grounding= items; pass grounding= as well")
        self.prompt = prompt
        self.grounder = grounder
        self.grounding = grounding
        self.admit = admit
        self.render = render
        self.compactor = compactor
        self.reground_every_turn = reground_every_turn
        self.record_grounding = record_grounding
        self.budget_check = budget_check
        self.output_schema = output_schema

    async def build(self, task: Task, wc: WorkingContext, ctx: RunContext) -> BuiltRequest:
        """Append ``task`` (text, or text and parts) to the tail; return the request's messages.

        The prefix is written on the first build (or every build with
        ``reground_every_turn``) and reused verbatim otherwise.
        """
        if wc.prefix is None or self.reground_every_turn:
            wc.prefix = await self._prefix(task_text(task), ctx)
        wc.messages.append(Message.user(task_content(task)))
        tail: Sequence[Message] = wc.messages
        if self.compactor is not None:
            from ._compaction import run_compactor  # loaded with the compactor

            tail = await run_compactor(self.compactor, tail, ctx)
        messages = (*wc.prefix, *tail)
        approx = estimate_tokens(messages)
        if self.budget_check is not None:
            self.budget_check(approx)
        return BuiltRequest(messages, self.prompt.version, approx)

    async def _prefix(self, task: str, ctx: RunContext) -> tuple[Message, ...]:
        system = self.prompt.render()
        prefix = [Message.system(system)] if system else []
        text = await self._ground(task, ctx)
        if text:
            prefix.append(Message.system(f"Relevant context:\n{text}"))
        if self.output_schema is not None:
            prefix.append(Message.system(schema_block(self.output_schema)))
        return tuple(prefix)

    async def _ground(self, task: str, ctx: RunContext) -> str:
        if self.grounder is not None:
            return await self.grounder(ctx, task)
        if self.grounding is None:
            return ""
        items = [i for i in await self.grounding(ctx, task) if self.admit is None or self.admit(i)]
        if self.record_grounding:
            record = list(ctx.scratchpad.get("grounding", []))
            record.append({"task": task, "items": [asdict(i) for i in items]})
            ctx.scratchpad["grounding"] = record
        return self.render(items) if items else ""


def schema_block(schema: JSONObject) -> str:
    """The prefix message that asks for output matching ``schema``."""
    return (
        "Answer with a single JSON value that matches this JSON Schema, and nothing else:\n"
        + json.dumps(schema, sort_keys=True)
    )
