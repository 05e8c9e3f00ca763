"""The Guard conformance suite: what every guard must do, whatever it checks.

Subclass it in a test module whose name starts with ``Test``, give it ``make_guard`` and two
lists of texts: ``benign``, texts the guard lets through on input and output, and
``triggers``, texts it rewrites or blocks on input, each with the values (``hidden``) a reason
must never repeat::

    class TestMyGuard(GuardConformance):
        benign = ["hello", "the meeting is at 10:30"]
        triggers = [("mail jane@example.org", ["jane@example.org"])]

        def make_guard(self) -> Guard:
            return MyGuard()
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence

from .._agent import Agent
from .._errors import GuardBlocked
from .._guard import Guard
from .._guard import GuardDecision
from .._guard import GuardInput
from .._guard_chain import GuardChain
from .._hooks import TurnInfo
from .._messages import Message
from .._models import ModelRequest
from .._verdicts import Verdict
from ._models import ScriptedModel
from ._registrations import check_declared_options


class GuardConformance:
    """Contract tests for a :class:`~agentkit_core.plugin.Guard`; subclass, define the factory."""

    #: Texts the guard allows on input (a part, a request's message) and on output.
    benign: Sequence[str] = ("hello", "The build passed; 3 tests were skipped.")
    #: Texts the guard rewrites or blocks on input, each with what no reason may repeat: in a
    #: request always, as an instruction part alone when it acts on parts.
    triggers: Sequence[tuple[str, Sequence[str]]] = ()

    def make_guard(self) -> Guard:
        raise NotImplementedError("define make_guard() in the conformance subclass")

    def _inputs(self, text: str) -> list[GuardInput]:
        messages = (Message.system("You help."), Message.user(text))
        return [GuardInput(text, "product"), GuardInput(text, "", messages, 1)]

    def test_is_a_guard(self) -> None:
        assert isinstance(self.make_guard(), Guard)

    def test_declared_options_are_taken_by_the_factory(self) -> None:
        check_declared_options(self.make_guard())

    def test_benign_text_is_allowed_by_every_check(self) -> None:
        guard = self.make_guard()
        for text in self.benign:
            for inp in self._inputs(text):
                assert guard.check_input(inp).action == "allow", f"input {text!r}"
            assert guard.check_output(Message.assistant(text)).action == "allow", text
        decision = guard.check_turn(TurnInfo(1))
        assert isinstance(decision, GuardDecision) and decision.action in ("allow", "block")

    def test_triggers_are_acted_on_with_a_reason_that_hides_the_value(self) -> None:
        guard = self.make_guard()
        for text, hidden in self.triggers:
            part = guard.check_input(GuardInput(text, "product"))
            if part.action != "allow":  # a guard that measures whole requests lets parts pass
                assert part.reason, f"{text!r}: a {part.action} says why"
                assert all(value not in part.reason for value in hidden), part.reason
                if part.action == "rewrite":
                    assert all(value not in part.text for value in hidden), part.text
            request = ModelRequest((Message.system("You help."), Message.user(text)))
            try:
                sent = GuardChain([guard]).check_request(None, request)
            except GuardBlocked as exc:
                assert exc.reason, f"{text!r}: a block says why"
                assert all(value not in str(exc) for value in hidden), str(exc)
            else:
                assert sent.messages[-1].text != text, f"{text!r} was sent as it was"
                assert all(value not in sent.messages[-1].text for value in hidden)

    def test_a_guard_that_only_measures_allows_every_other_input(self) -> None:
        """``measures_only`` tells the chain to skip every input but a request's first message."""
        guard = self.make_guard()
        if not (guard.measures_request and guard.measures_only):
            return
        for text in [*self.benign, *(t for t, _ in self.triggers)]:
            messages = (Message.system("You help."), Message.user("hi"), Message.user(text))
            for inp in (GuardInput(text, "product"), GuardInput(text, "", messages, 2)):
                decision = guard.check_input(inp)
                assert decision.action == "allow", f"{text!r}: declared measures_only, answered"

    def test_checks_are_pure(self) -> None:
        guard = self.make_guard()
        for text in [*self.benign, *(t for t, _ in self.triggers)]:
            for inp in self._inputs(text):
                assert guard.check_input(inp) == guard.check_input(inp), text
            message = Message.assistant(text)
            assert guard.check_output(message) == guard.check_output(message), text

    def test_a_rewrite_is_settled_by_a_second_pass(self) -> None:
        guard = self.make_guard()
        for text, _ in self.triggers:
            for inp in self._inputs(text):
                first = guard.check_input(inp)
                if first.action != "rewrite":
                    continue
                again = guard.check_input(GuardInput(first.text, inp.part, inp.messages, inp.index))
                assert again.action == "allow" or again.text == first.text, (
                    f"{text!r}: rewriting the rewrite changed it again ({again})"
                )

    def test_runs_in_an_agent_and_reports_what_it_did(self) -> None:
        guard = self.make_guard()
        seen: list[Verdict] = []
        for text in self.benign:
            model = ScriptedModel([text])
            agent = Agent(
                "conformance", model, guards=GuardChain([guard]), verdict_observer=seen.append
            )
            result = asyncio.run(agent.run(text))
            assert result.output == text
        assert seen == [], "a bare allow is not reported"
        for text, hidden in self.triggers:
            model = ScriptedModel(["done"])
            agent = Agent(
                "conformance", model, guards=GuardChain([guard]), verdict_observer=seen.append
            )
            try:
                asyncio.run(agent.run(text))
            except GuardBlocked as exc:
                assert all(value not in str(exc) for value in hidden), str(exc)
            else:
                sent = model.requests[0].messages[-1].text
                assert all(value not in sent for value in hidden), sent
            assert seen and seen[-1].namespace == "guard"
            assert all(value not in seen[-1].reason for value in hidden)
