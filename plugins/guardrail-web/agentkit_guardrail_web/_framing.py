"""Framing tool output as untrusted data, and spotting prompt-injection markers in it.

The frame is core's (``agentkit_core.plugin.frame_untrusted``, which memory entries get too): a
delimiter line before and after the payload, each carrying a fresh random nonce, and the
payload escaped wherever it could read as a delimiter. This module adds the warning line that
names the prompt-injection markers seen in the payload (:func:`scan_injection`).
"""

from __future__ import annotations

import re
from functools import lru_cache

from agentkit_core.plugin import escape_untrusted
from agentkit_core.plugin import fold_lookalikes
from agentkit_core.plugin import frame_untrusted

# ---------------------------------------------------------------------- injection markers

_LEET = str.maketrans({"0": "o", "1": "i", "3": "e", "4": "a", "5": "s", "7": "t", "@": "a",
                       "$": "s", "!": "i", "|": "i"})  # fmt: skip
# Everything but letters, digits and the leetspeak symbols separates words.
_SPACES = str.maketrans({c: " " for c in map(chr, range(128)) if not (c.isalnum() or c in "@$!|")})

_VERBS = frozenset({"ignore", "disregard", "forget", "override", "bypass", "overlook"})
_QUALIFIERS = frozenset(
    {"previous", "prior", "above", "earlier", "all", "any", "your", "system", "the", "these",
     "those", "preceding", "initial", "original", "every", "existing"}
)  # fmt: skip
_TARGETS = frozenset(
    {"instruction", "instructions", "prompt", "prompts", "rules", "directions", "guidelines",
     "directives", "guardrails"}
)  # fmt: skip
_PHRASES = (("you", "are", "now"), ("new", "instructions"), ("from", "now", "on"),
            ("act", "as", "if", "you"))  # fmt: skip
#: Distinctive words whose one-edit misspellings are read as the word ("ignroe", "instrucitons").
_FUZZY = ("ignore", "disregard", "forget", "override", "bypass", "previous", "instructions",
          "instruction", "prompts", "guidelines", "directions", "directives")  # fmt: skip


def _deletions(word: str) -> set[str]:
    return {word[:i] + word[i + 1 :] for i in range(len(word))}


_NEAR: dict[str, str] = {}
for _keyword in _FUZZY:
    for _variant in (_keyword, *_deletions(_keyword)):
        _NEAR.setdefault(_variant, _keyword)
_CANON: dict[str, str] = {}


def _canonical(token: str) -> str:
    """The keyword ``token`` is one edit (or a swap of two letters) away from, or itself.

    Only words of six letters or more are read loosely: shorter ones are real words too often
    ("forge" is not "forget").
    """
    known = _CANON.get(token)
    if known is not None:
        return known
    word = token if token.isalpha() else token.translate(_LEET)
    canon = word
    if len(word) >= 6:
        near = _NEAR.get(word)
        if near is None:
            near = next((_NEAR[v] for v in _deletions(word) if v in _NEAR), None)
        canon = near or word
    if len(_CANON) > 50_000:
        _CANON.clear()
    _CANON[token] = canon
    return canon


def _overrides(words: list[str]) -> bool:
    """A verb, then within six words a target, with a qualifier between them."""
    for i, word in enumerate(words):
        if word in _VERBS:
            between = False
            for later in words[i + 1 : i + 8]:
                if later in _TARGETS and between:
                    return True
                between = between or later in _QUALIFIERS
    return False


_PHRASE_SETS = tuple(frozenset(phrase) for phrase in _PHRASES)


def _has_phrase(words: list[str]) -> bool:
    joined = f" {' '.join(words)} "
    return any(f" {' '.join(phrase)} " in joined for phrase in _PHRASES)


def _spelled_out(tokens: list[str]) -> list[str]:
    """Runs of four or more one-letter tokens joined: "i g n o r e" is "ignore"."""
    out: list[str] = []
    run: list[str] = []
    for token in (*tokens, ""):
        if len(token) == 1:
            run.append(token)
            continue
        if len(run) >= 4:
            out.append("".join(run))
        else:
            out.extend(run)
        run = []
        if token:
            out.append(token)
    return out


def _words(folded: str) -> list[str] | None:
    """The words of ``folded`` read loosely, or None when they hold no override or persona switch.

    None is the common case, decided on the set of distinct words without walking them.
    """
    tokens = folded.translate(_SPACES).split()
    if len(tokens) < 2:
        return None  # an override or a persona switch takes two words at least
    distinct = set(tokens)
    singles = {t for t in distinct if len(t) == 1}
    if len(singles) >= 4:
        tokens = _spelled_out(tokens)
        distinct = set(tokens)
    canon = {t: _CANON.get(t) or _canonical(t) for t in distinct}
    present = set(canon.values())
    verbs = not present.isdisjoint(_VERBS) and not present.isdisjoint(_TARGETS)
    if not verbs and not any(phrase <= present for phrase in _PHRASE_SETS):
        return None
    return [canon[t] for t in tokens]


_ROLE_PREFIX = re.compile(r"(?m)^[ \t]*(?:system|assistant|developer)[ \t]*:")
# Fake role markers written as markdown, matched on folded text at a line start (after blanks
# and quote marks). A role that is never a plain heading word ("system", "developer",
# "assistant") counts alone or before a colon; "user" and "human" only before a colon, since
# "## User" heads ordinary documentation. "## System requirements" is not a role marker.
_STRONG = r"(?:system|developer|assistant)"
_ANY_ROLE = r"(?:system|developer|assistant|user|human)"
_QUALIFIED = r"(?:[ \t]+(?:message|prompt|instructions?|note|override|update))?[ \t]*"
_EMPHASIS = r"[*_]{1,3}[ \t]*"
_MARKDOWN_ROLE = re.compile(
    r"(?m)^[ \t>]*(?:"
    rf"#{{1,6}}[ \t]*(?:{_STRONG}{_QUALIFIED}(?::|$)|{_ANY_ROLE}{_QUALIFIED}:)"  # ## System:
    rf"|{_EMPHASIS}{_ANY_ROLE}{_QUALIFIED}:[ \t]*[*_]{{1,3}}"  # **SYSTEM:**
    rf"|{_EMPHASIS}{_ANY_ROLE}{_QUALIFIED}[*_]{{1,3}}[ \t]*:"  # **User**:
    rf"|{_EMPHASIS}{_STRONG}{_QUALIFIED}[*_]{{0,3}}[ \t]*$"  # > **SYSTEM PROMPT**
    rf"|\[{_STRONG}{_QUALIFIED}\][ \t]*:?[ \t]*$"  # [system]
    r")"
)
# A link whose text is a role and whose target is a fragment: "[system](#error_state)", the
# form of the published Bing Chat injections. A table of contents links a heading to its own
# anchor ("[System](#system)"); that is left alone.
_ROLE_LINK = re.compile(rf"\[[ \t]*({_ANY_ROLE})[ \t]*\]\([ \t]*#([^)\s]*)[ \t]*\)")
_ROLE_JSON = re.compile(r"""["']role["'][ \t]*:[ \t]*["'](?:system|developer)["']""")
# The control tokens of chat templates, matched on folded text (NFKC turns DeepSeek's
# fullwidth bars into "|"): ChatML and Phi (<|im_start|>, <|user|>, <|end|>), Llama 3
# (<|start_header_id|>, <|eot_id|>, <|begin_of_text|>), DeepSeek (<｜User｜>,
# <｜begin▁of▁sentence｜>), Command R and gpt-oss (<|START_OF_TURN_TOKEN|>, <|channel|>): any
# <|name|>; role tags (<system>, </user>); Gemma's <start_of_turn>/<end_of_turn>; Llama 2's
# and Mistral's [INST], [/INST], <<SYS>>, [SYSTEM_PROMPT], [TOOL_CALLS], [TOOL_RESULTS]...
# An opening role tag without a bar, or a bracketed word, right after a name is code: a
# generic (List<User>) or an index (items[inst]); a closing one (text</system>) is not.
_TAG_NAMES = r"(?:system|assistant|user|developer|im_start|im_end|endoftext)"
_BRACKET_NAMES = r"(?:inst|system_prompt|available_tools|tool_calls|tool_results)"
_ROLE_TAG = re.compile(
    r"<\|[a-z][a-z0-9_.\u2581-]{0,47}\|>"
    rf"|<\|\s*/?\s*{_TAG_NAMES}\s*\|?>"
    rf"|<\s*/\s*{_TAG_NAMES}\s*\|?>|(?<!\w)<\s*{_TAG_NAMES}\s*\|?>"
    r"|<(?:start|end)_of_turn>"
    rf"|\[/{_BRACKET_NAMES}\]|(?<!\w)\[{_BRACKET_NAMES}\]"
    r"|<<\s*/?sys\s*>>"
)
_LINK = re.compile(r"!?\[([^\]\n]{1,120})\]\(\s*[^)\s]{1,500}[^)\n]*\)")
# A link that alarms: a failure state and a call to act on it, or "click here".
_STATE = re.compile(
    r"\b(?:error|failed|failure|expired?|denied|unauthori[sz]ed|suspended|locked|blocked|"
    r"alert|warning|invalid|required)\b"
)
_ACT = re.compile(
    r"\b(?:verify|re-?authenticat\w*|authenticat\w*|log[ -]?in|sign[ -]?in|reconnect|renew|"
    r"confirm|update|unlock|restore|continue|retry)\b|click here"
)


def _may_hold_tag(folded: str, people: bool) -> bool:
    """Whether ``folded`` holds a piece of some chat-template token; most text holds none."""
    if "<" not in folded and "[" not in folded:
        return False
    return (
        people
        or "<|" in folded
        or "sys" in folded
        or "inst]" in folded
        or "_of_turn>" in folded
        or "tool" in folded
        or "im_" in folded
        or "endoftext" in folded
    )


def _role_link(folded: str) -> bool:
    """A link from a role name to a fragment that is not the role's own heading anchor."""
    if "](" not in folded:
        return False
    for match in _ROLE_LINK.finditer(folded):
        role, anchor = match.groups()
        if anchor.rstrip("-0123456789") != role:  # "#system", "#system-1": a contents entry
            return True
    return False


def _alarming(label: str) -> bool:
    return "click here" in label or bool(_STATE.search(label) and _ACT.search(label))


_REACT = re.compile(r"(?m)^[ \t]*(thought|action input|action|observation|final answer)[ \t]*:")


def scan_injection(text: str) -> tuple[str, ...]:
    """Names of the prompt-injection markers seen in ``text``; advisory, for the warning line.

    ``instruction-override`` ("ignore all previous instructions", also misspelled, spaced out
    or in leetspeak), ``role-prefix`` (``system:`` at a line start), ``markdown-role`` (a role
    claimed in markdown: ``## System:``, ``### assistant``, ``**SYSTEM:**``,
    ``[system](#error_state)``), ``role-json`` (``{"role": "system"...}``), ``role-tag`` (a
    chat template's control token: ``<|im_start|>``, ``<|eot_id|>``, ``<start_of_turn>``,
    ``[INST]``, ``<<SYS>>``, ``<｜User｜>``...), ``persona-switch`` ("you are now", "from now
    on"), ``fake-error-link`` (a markdown link whose text alarms: "Session expired, sign in"),
    ``react-trace`` (two or more of ``Thought:``/``Action:``/``Observation:`` lines), and
    ``delimiter-lookalike`` (something that reads as the frame's delimiter).
    """
    return _markers(text, escape_untrusted(text) is not text)


def _markers(text: str, lookalike: bool) -> tuple[str, ...]:
    """:func:`scan_injection`, told whether ``text`` holds a delimiter look-alike."""
    folded = fold_lookalikes(text)
    found: list[str] = []
    words = _words(folded)
    if words is not None and _overrides(words):
        found.append("instruction-override")
    roles = "system" in folded or "assistant" in folded or "developer" in folded
    if roles and _ROLE_PREFIX.search(folded):
        found.append("role-prefix")
    people = roles or "user" in folded or "human" in folded
    if people and (_MARKDOWN_ROLE.search(folded) or _role_link(folded)):
        found.append("markdown-role")
    if "role" in folded and _ROLE_JSON.search(folded):
        found.append("role-json")
    if _may_hold_tag(folded, people) and _ROLE_TAG.search(folded):
        found.append("role-tag")
    if words is not None and _has_phrase(words):
        found.append("persona-switch")
    if "](" in folded and any(_alarming(m.group(1)) for m in _LINK.finditer(folded)):
        found.append("fake-error-link")
    react = "thought" in folded or "action" in folded or "observation" in folded
    if react and len(set(_REACT.findall(folded))) >= 2:
        found.append("react-trace")
    if lookalike:
        found.append("delimiter-lookalike")
    return tuple(found)


#: Payloads up to this many characters have their markers remembered: tool output a run
#: repeats ("ok", a status line) is scanned once.
CACHED_CHARS = 2048


@lru_cache(maxsize=1024)
def _scanned(text: str) -> tuple[str, ...]:
    """:func:`scan_injection` of a short ``text``, remembered."""
    return scan_injection(text)


def frame(text: str, *, source: str = "tool", nonce: str | None = None, flag: bool = True) -> str:
    """``text`` framed as data by ``frame_untrusted``, with a line naming its injection markers.

    The warning line is left out when none are seen or ``flag`` is off; ``nonce`` defaults to
    a fresh one.
    """
    flags = (
        () if not flag else _scanned(text) if len(text) <= CACHED_CHARS else scan_injection(text)
    )
    warning = f"[warning: possible prompt injection in this data: {', '.join(flags)}]"
    return frame_untrusted(text, source=source, notes=(warning,) if flags else (), nonce=nonce)
