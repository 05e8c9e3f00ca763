"""Redaction: e-mail addresses and phone numbers go; ids, prices, dates and hashes stay."""

from __future__ import annotations

import pytest
from agentkit_guardrail_web import WebGuardrail

from agentkit_core import ToolResult

SENSITIVE = [
    ("write to jane.doe+tag@example.co.uk today", "write to [redacted email] today"),
    ("ops@sub.example.com", "[redacted email]"),
    ("call +1 (555) 123-4567 now", "call [redacted phone] now"),
    ("+44 20 7946 0958", "[redacted phone]"),
    ("+33612345678", "[redacted phone]"),
    ("(555) 123-4567", "[redacted phone]"),
    ("555-123-4567", "[redacted phone]"),
    ("555.123.4567", "[redacted phone]"),
    ("030 12345678", "[redacted phone]"),
    ("06 12 34 56 78", "[redacted phone]"),
    ("020 7946 0958", "[redacted phone]"),
    ("Phone: +49 30 901820.", "Phone: [redacted phone]."),
]

KEPT = [
    "order 123456789012345",
    "customer id 9876543210",
    "total $1,299.99",
    "€ 1 234 567",
    "1 234 567 890 units",
    "2024-01-15",
    "15.01.2024",
    "01/15/2024",
    "2024-01-15T10:30:00Z",
    "sha256 9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08",
    "commit 3f2a9b1c",
    "uuid 123e4567-e89b-12d3-a456-426614174000",
    "unix time 1700000000",
    "card 4111 1111 1111 1111",
    "isbn 978-3-16-148410-0",
    "host 10.0.0.1:8080",
    "pi 3.14159265358",
    "score +5",
    "not an address: user@localhost",
]


@pytest.mark.parametrize(("text", "expected"), SENSITIVE)
def test_redacts_emails_and_phones(text: str, expected: str) -> None:
    assert WebGuardrail().redact(text) == expected


@pytest.mark.parametrize("text", KEPT)
def test_keeps_ids_prices_dates_and_hashes(text: str) -> None:
    assert WebGuardrail().redact(text) == text


def test_mixed_text_keeps_the_numbers_around_the_contact() -> None:
    text = (
        "Invoice 20240115-0042 for $1,299.99 (ref 9f86d081) - contact bob@example.org or "
        "555-123-4567."
    )
    assert WebGuardrail().redact(text) == (
        "Invoice 20240115-0042 for $1,299.99 (ref 9f86d081) - contact [redacted email] or "
        "[redacted phone]."
    )


def test_tool_output_is_not_redacted_by_default() -> None:
    result = WebGuardrail().process_tool_result(ToolResult("mail bob@example.org"))
    assert "bob@example.org" in result.content


def test_tool_output_is_redacted_when_enabled_then_framed() -> None:
    guard = WebGuardrail(redact_tool_output=True)
    result = guard.process_tool_result(
        ToolResult(({"type": "text", "text": "mail bob@example.org"}, {"type": "image_url"}))
    )
    assert isinstance(result.content, tuple)
    text_part, image_part = result.content
    assert "[redacted email]" in text_part["text"] and "bob@" not in text_part["text"]
    assert text_part["text"].startswith("<<UNTRUSTED id=")
    assert image_part == {"type": "image_url"}
