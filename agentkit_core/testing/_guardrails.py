"""The Guardrail conformance suite: what every guardrail must do, whatever else it does.

Subclass it in a test module with a name starting ``Test`` and give it ``make_guardrail``::

    class TestMyGuardrail(GuardrailConformance):
        def make_guardrail(self) -> Guardrail:
            return MyGuardrail()

Override ``allowed_url`` or ``refused_urls`` when the guardrail's policy differs (an allow list
that excludes example.com, say); the refused defaults are the SSRF targets every guardrail
must refuse.
"""

from __future__ import annotations

from typing import ClassVar

from .._errors import GuardrailViolation
from .._guardrails import Guardrail
from .._guardrails import egress
from .._messages import Message
from ._registrations import check_declared_options


class GuardrailConformance:
    """Contract tests for a ``agentkit_core.plugin.Guardrail``; subclass, define the factory."""

    allowed_url: ClassVar[str] = "https://example.com/docs"
    refused_urls: ClassVar[tuple[str, ...]] = (
        "http://127.0.0.1/",
        "http://169.254.169.254/latest/meta-data/",
        "http://[::1]/",
        "file:///etc/passwd",
    )

    def make_guardrail(self) -> Guardrail:
        raise NotImplementedError("define make_guardrail() in the conformance subclass")

    def test_is_a_guardrail_and_egress_accepts_it(self) -> None:
        guardrail = self.make_guardrail()
        assert isinstance(guardrail, Guardrail)
        egress(guardrail)

    def test_declared_options_are_taken_by_the_factory(self) -> None:
        check_declared_options(self.make_guardrail())

    async def test_allowed_url_passes_both_checks(self) -> None:
        guardrail = self.make_guardrail()
        assert guardrail.check_url(self.allowed_url) is None
        await guardrail.check_arguments({"url": self.allowed_url, "nested": [self.allowed_url]})

    def test_refused_urls_raise_a_violation_naming_the_url(self) -> None:
        guardrail = self.make_guardrail()
        for url in self.refused_urls:
            try:
                guardrail.check_url(url)
            except GuardrailViolation as exc:
                assert exc.value == url, f"GuardrailViolation.value should be {url!r}"
                assert url in str(exc), f"the message should name {url!r}: {exc}"
            else:
                raise AssertionError(f"{guardrail!r} let {url!r} through")

    async def test_refused_url_in_nested_arguments_raises(self) -> None:
        guardrail = self.make_guardrail()
        url = self.refused_urls[0]
        try:
            await guardrail.check_arguments({"jobs": [{"note": f"fetch {url} now"}]})
        except GuardrailViolation:
            return
        raise AssertionError(f"check_arguments missed {url!r} nested in the arguments")

    def test_text_methods_return_text_and_keep_plain_data(self) -> None:
        guardrail = self.make_guardrail()
        plain = "plain data 12345 at 2024-01-15"
        assert guardrail.redact(plain) == plain
        framed = guardrail.wrap_tool_output(plain)
        assert isinstance(framed, str) and plain in framed

    def test_check_output_returns_a_message(self) -> None:
        message = Message.assistant("the answer is 42")
        assert isinstance(self.make_guardrail().check_output(message), Message)
