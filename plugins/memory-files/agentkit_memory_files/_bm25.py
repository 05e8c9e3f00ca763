"""BM25 ranking for the files store: a scope's index, built from its entries, pure Python.

A scope's index is built the first time a query reads it and kept while its entries are the
very ones it was built from (the store hands back the same entry for an unchanged file): a
write through this store drops it, a file another process changed rebuilds it.
"""

from __future__ import annotations

import math
import re
import unicodedata
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass

from agentkit_core import MemoryEntry

#: BM25's term-frequency saturation and length normalisation (the usual values).
K1 = 1.2
B = 0.75
#: A title word counts as this many body words: the title says what the entry is about.
TITLE_WEIGHT = 2
# The words query_terms keeps (letters and digits), so an entry's words and a query's agree.
_WORD = re.compile(r"[^\W_]+")
_SUFFIXES = (("ies", "y"), ("ing", ""), ("ed", ""), ("es", ""), ("s", ""))


def stem(word: str) -> str:
    """``word`` without a common English ending ("deploys", "deployed" -> "deploy")."""
    for suffix, repl in _SUFFIXES:
        if word.endswith(suffix) and len(word) - len(suffix) >= 3:
            return word[: -len(suffix)] + repl
    return word


def words(text: str) -> list[str]:
    """The stemmed words of ``text``, NFKC and casefolded, in order."""
    return [stem(w) for w in _WORD.findall(unicodedata.normalize("NFKC", text).casefold())]


@dataclass(frozen=True, slots=True)
class ScopeIndex:
    """One scope's entries with each one's word counts and length."""

    entries: tuple[MemoryEntry, ...]
    counts: tuple[Counter[str], ...]
    lengths: tuple[int, ...]
    df: Counter[str]

    @classmethod
    def build(cls, entries: Sequence[MemoryEntry]) -> ScopeIndex:
        counts = []
        for e in entries:
            count = Counter(words(e.body))
            for w in words(e.title):
                count[w] += TITLE_WEIGHT
            counts.append(count)
        df: Counter[str] = Counter()
        for count in counts:
            df.update(count.keys())
        lengths = tuple(sum(c.values()) for c in counts)
        return cls(tuple(entries), tuple(counts), lengths, df)

    def fresh(self, entries: Sequence[MemoryEntry]) -> bool:
        """Whether ``entries`` are the very entries this index was built from."""
        return len(entries) == len(self.entries) and all(
            a is b for a, b in zip(entries, self.entries, strict=True)
        )


def rank(
    indexes: Sequence[ScopeIndex], terms: Sequence[str], k: int
) -> list[tuple[float, MemoryEntry]]:
    """The ``k`` best entries of ``indexes`` for ``terms`` by BM25, over all of them at once."""
    stems = list(dict.fromkeys(stem(t) for t in terms))
    n = sum(len(ix.entries) for ix in indexes)
    if not n or not stems:
        return []
    avg = sum(sum(ix.lengths) for ix in indexes) / n or 1.0
    df = {t: sum(ix.df[t] for ix in indexes) for t in stems}
    idf = {t: math.log(1 + (n - d + 0.5) / (d + 0.5)) for t, d in df.items() if d}
    found: list[tuple[float, MemoryEntry]] = []
    for ix in indexes:
        for entry, count, length in zip(ix.entries, ix.counts, ix.lengths, strict=True):
            score = 0.0
            for t, weight in idf.items():
                tf = count.get(t, 0)
                if tf:
                    score += weight * tf * (K1 + 1) / (tf + K1 * (1 - B + B * length / avg))
            if score > 0:
                found.append((score, entry))
    found.sort(key=lambda f: (-f[0], f[1].scope, f[1].title))
    return found[:k]
