"""The PolicyEngine conformance suite: what every policy engine must do, whatever its rules.

Subclass it in a test module whose name starts with ``Test`` and give it ``make_engine``,
which returns an engine whose policy says: tool ``read`` is allowed, ``write`` is asked about,
``wipe`` is denied whatever its arguments (so it is never offered), and any other tool is asked
about by default; and which takes a grant entry naming a tool (``"edit"``) as an allow rule for
it. A grant's allow beats the default, never a rule that asks or denies::

    class TestMyEngine(PolicyEngineConformance):
        def make_engine(self) -> PolicyEngine:
            return MyEngine.from_text("read: allow; write: ask; wipe: deny")
"""

from __future__ import annotations

import pytest

from .._agent import Agent
from .._context import RunContext
from .._errors import ConfigError
from .._messages import ToolCall
from .._policy import Approval
from .._policy import Grant
from .._policy import GrantReport
from .._policy import PolicyEngine
from .._verdicts import Verdict
from ._registrations import check_declared_options


def call(tool: str, call_id: str = "c1", arguments: str = "{}") -> ToolCall:
    return ToolCall(call_id, tool, arguments)


class PolicyEngineConformance:
    """Contract tests for a ``agentkit_core.plugin.PolicyEngine``; subclass, define the factory."""

    def make_engine(self) -> PolicyEngine:
        raise NotImplementedError("define make_engine() in the conformance subclass")

    def context(
        self, engine: PolicyEngine, seen: list[Verdict], run_id: str = "run-1"
    ) -> RunContext:
        return Agent(
            "conformance", "test", policy=engine, verdict_observer=seen.append
        ).new_context(run_id)

    # ------------------------------------------------------------------ deciding

    def test_is_an_engine_with_a_name(self) -> None:
        engine = self.make_engine()
        assert isinstance(engine, PolicyEngine)
        assert isinstance(engine.name, str) and engine.name

    def test_declared_options_are_taken_by_the_factory(self) -> None:
        check_declared_options(self.make_engine())

    def test_would_decides_each_verdict_and_names_a_rule(self) -> None:
        engine = self.make_engine()
        for tool, kind in (("read", "allow"), ("write", "ask"), ("wipe", "deny"), ("other", "ask")):
            decision = engine.would(call(tool), source="tools")
            assert decision.kind == kind, f"{tool}: {decision}"
            assert decision.rule, f"{tool}: a decision names the rule that decided it"
            assert decision.reason, f"{tool}: a decision says why"
            assert decision.source == engine.name

    def test_a_bare_deny_is_never_offered(self) -> None:
        engine = self.make_engine()
        assert not engine.offers("wipe", "tools")
        assert engine.offers("read", "tools") and engine.offers("write", "tools")

    def test_would_has_no_side_effect(self) -> None:
        engine = self.make_engine()
        engine.would(call("write"), scope="s")
        assert engine.deferred("run-1") == []
        assert engine.grants("s") == []

    def test_check_reports_a_policy_verdict_and_holds_an_ask(self) -> None:
        engine = self.make_engine()
        seen: list[Verdict] = []
        ctx = self.context(engine, seen)
        assert engine.check(ctx, call("write", "c1")).kind == "ask"
        assert engine.check(ctx, call("read", "c2")).kind == "allow"
        assert [(v.namespace, v.hook, v.verdict, v.subject_id) for v in seen] == [
            ("policy", "before_tool_call", "ask", "c1"),
            ("policy", "before_tool_call", "allow", "c2"),
        ]
        assert all(v.rule and v.plugin == engine.name and v.run == "run-1" for v in seen)
        assert [d.call.id for d in engine.deferred("run-1")] == ["c1"]

    # ------------------------------------------------------------------ deferred approvals

    def test_release_returns_attributed_approvals_and_forgets(self) -> None:
        engine = self.make_engine()
        ctx = self.context(engine, [])
        engine.check(ctx, call("write", "c1"))
        engine.check(ctx, call("write", "c2"))
        answers = engine.release("run-1", [Approval("c1", by="human:alice")])
        assert answers == [Approval("c1", True, "human:alice")]  # c2 still asks: left out
        assert engine.deferred("run-1") == []

    def test_release_refuses_an_unattributed_or_unknown_approval(self) -> None:
        engine = self.make_engine()
        engine.check(self.context(engine, []), call("write", "c1"))
        with pytest.raises(ConfigError, match="does not say who"):
            engine.release("run-1", [Approval("c1")])
        with pytest.raises(ConfigError, match="held: c1"):
            engine.release("run-1", [Approval("c9", by="human:alice")])

    def test_another_process_rebuilds_the_held_calls_from_the_pending_ones(self) -> None:
        engine = self.make_engine()  # a fresh engine: nothing held in this "process"
        pending = [call("write", "c1"), call("read", "c2"), call("wipe", "c3")]
        assert [d.call.id for d in engine.deferred("run-1", pending)] == ["c1"]
        answers = engine.release("run-1", [Approval("c1", False, "human:bob", "not now")])
        assert answers == [Approval("c1", False, "human:bob", "not now")]

    # ------------------------------------------------------------------ grants

    def grant(self, engine: PolicyEngine, *, trusted: bool = True, run: str = "r1") -> GrantReport:
        return engine.grant(Grant("skill:x", ("edit",), trusted, "d1", "read x again", "s", run))

    def test_a_trusted_grant_allows_in_its_scope_only(self) -> None:
        engine = self.make_engine()
        report = self.grant(engine)
        assert report.granted == ("edit",) and report.refused == ()
        assert report.verdict is not None
        assert (report.verdict.hook, report.verdict.verdict) == ("grant", "allow")
        assert engine.would(call("edit"), scope="s").kind == "allow"
        assert engine.would(call("edit"), scope="elsewhere").kind == "ask"

    def test_an_untrusted_grant_grants_nothing(self) -> None:
        engine = self.make_engine()
        report = self.grant(engine, trusted=False)
        assert report.granted == () and [e for e, _ in report.refused] == ["edit"]
        assert report.verdict is not None and report.verdict.verdict == "deny"
        assert engine.would(call("edit"), scope="s").kind == "ask"

    def test_a_grant_never_beats_a_rule_that_asks_or_denies(self) -> None:
        engine = self.make_engine()
        engine.grant(Grant("skill:x", ("wipe", "write"), True, scope="s", run="r1"))
        assert engine.would(call("wipe"), scope="s").kind == "deny"
        assert engine.would(call("write"), scope="s").kind == "ask"

    def test_an_ended_grant_refuses_naming_how_to_get_it_back(self) -> None:
        engine = self.make_engine()
        self.grant(engine)
        assert engine.end_grants("s", "r1") == []  # the grant's own run goes on
        (ended,) = engine.end_grants("s", "r2")
        assert (ended.hook, ended.subject) == ("revoke", "skill:x")
        refused = engine.would(call("edit"), scope="s")
        assert refused.kind == "deny" and "read x again" in refused.reason
        assert engine.would(call("other"), scope="s").kind == "ask"  # not the grant's
        self.grant(engine, run="r2")  # read again
        assert engine.would(call("edit"), scope="s").kind == "allow"

    def test_revoke_forgets(self) -> None:
        engine = self.make_engine()
        self.grant(engine)
        assert len(engine.revoke("s")) == 1
        assert engine.would(call("edit"), scope="s").kind == "ask"
        assert engine.revoke("s") == []

    def test_regrant_only_what_is_unchanged(self) -> None:
        engine = self.make_engine()
        record = Verdict(
            "policy",
            "grant",
            "allow",
            "skill:x",
            "d1",
            run="r1",
            details={"tools": ["edit", "read"]},
        )
        same = Grant("skill:x", ("edit",), True, "d1", "read x again")
        (report,) = engine.regrant([record], lambda s: same, scope="s")
        assert report.replayed and report.granted == ("edit",)  # never wider than now
        assert report.verdict is None and not report.error
        assert engine.would(call("edit"), scope="s").kind == "allow"
        other = self.make_engine()
        changed = Grant("skill:x", ("edit",), True, "d2")
        (report,) = other.regrant([record], lambda s: changed, scope="s")
        assert "changed" in report.error
        assert report.verdict is not None and report.verdict.verdict == "deny"
        assert other.would(call("edit"), scope="s").kind == "ask"
        (report,) = other.regrant([record], lambda s: None, scope="s")
        assert "gone" in report.error
