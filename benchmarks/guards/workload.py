"""The request both sides redact: about 100 KB of prose with e-mails and card numbers in it.

Deterministic (a seeded generator), so each side and each run redacts the same text. One in
about forty sentences carries an e-mail address, one in about sixty a card number that passes
the Luhn check (in groups of four, as people type them), so the detectors find ~100 of each.
"""

from __future__ import annotations

import random

SIZE = 100_000
WORDS = (
    "the order shipped on time and the customer asked about the invoice for last month while "
    "support checked the account history and replied with the tracking details as requested"
).split()


def _card(rng: random.Random) -> str:
    digits = [4] + [rng.randrange(10) for _ in range(14)]
    for check in range(10):
        candidate = [*digits, check]
        total = 0
        for i, d in enumerate(reversed(candidate)):
            total += (d * 2 - 9 if d > 4 else d * 2) if i % 2 else d
        if total % 10 == 0:
            text = "".join(map(str, candidate))
            return " ".join(text[i : i + 4] for i in range(0, 16, 4))
    raise AssertionError("no Luhn digit")


def request_text(size: int = SIZE, seed: int = 23) -> str:
    """About ``size`` characters of sentences, some with an e-mail or a card number."""
    rng = random.Random(seed)
    sentences: list[str] = []
    length = 0
    while length < size:
        words = [rng.choice(WORDS) for _ in range(rng.randrange(8, 20))]
        roll = rng.randrange(240)
        if roll < 6:
            words.insert(rng.randrange(len(words)), f"user{rng.randrange(10_000)}@example.com")
        elif roll < 10:
            words.insert(rng.randrange(len(words)), _card(rng))
        sentence = " ".join(words).capitalize() + "."
        sentences.append(sentence)
        length += len(sentence) + 1
    return " ".join(sentences)
