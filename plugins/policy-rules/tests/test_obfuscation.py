"""Prefix rules against words written so the shell turns them into the words a rule names:
globs, braces, quotes, escapes, expansions, wrappers. A deny or ask rule applies to every word
such a spelling may become; an allow rule only to words written as one literal."""

from __future__ import annotations

import json

import pytest
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Rule
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ToolCall

DENIED = ["git push", "rm -rf", "curl", "docker run", "kubectl delete"]


def guarded(default: str = "allow") -> Policy:
    """Deny rules over ``DENIED``, allow rules that would take the same commands otherwise."""
    return Policy(
        [
            Rule("allow", "bash", id="tools", match={"command": {"prefix": ["git", "rm", "ls"]}}),
            Rule("allow", "bash", id="read-only-git", match={"command": {"prefix": "git status"}}),
            Rule("deny", "bash", id="dangerous", match={"command": {"prefix": DENIED}}),
        ],
        default=default,
    )


def bash(policy: Policy, command: str) -> str:
    call = ToolCall("c", "bash", json.dumps({"command": command}))
    return policy.would(call, source="tools").kind


@pytest.mark.parametrize(
    "command",
    [
        "git pus[h]",
        "git pu?h",
        "git p*",
        "g*t push",
        "gi[!x] push",
        "git pu{s,}h",
        "git {push,pull}",
        "gi{t,} push",
        '"$GIT" push',
        "$GIT push",
        "${GIT} push",
        "git $CMD",
        "$(echo git) push",
        "`echo git` push",
        "git $'push'",
        "git $'\\x70ush'",
        'git $"push"',
        "git @(push)",  # bash's extglob
        "git pus(h)",  # zsh's groups
        "/usr/bin/g?t push",
        "/u*/bin/git push",
        "=git push",  # zsh: git's path
        "*.none git push",  # nullglob: the first word vanishes
        "git *.none push",
        "su?o git push",  # may be sudo
        "sudo -u bob /usr/bin/git push",  # a path after a wrapper's options
        "coproc git push",
        "coproc pusher { git push; }",
        "chrt 5 git push",
        "taskset -c 0 git push",
        "chroot / git push",
        "unshare -n git push",
        "runuser -u bob -- git push",
        "watch -n 5 git push",
        "find . -exec rm -rf {} +",
        "time -p command git push",
    ],
)
def test_a_word_that_may_become_a_denied_command_is_denied(command: str) -> None:
    assert bash(guarded(), command) == "deny"


@pytest.mark.parametrize(
    "command",
    [
        "env -S 'git push'",  # the string is split into words
        "echo 'git push' | sh",  # a shell reading its input
        "bash -s < script",
        "watch 'git push'",  # joined, through sh -c
        "sudo sh -c 'git push'",
        "command eval 'git push'",
        "./*.sh",  # a glob as the command: which one runs cannot be read
        "G?T PUSH",  # may be git (nocaseglob), but not with PUSH
        "x=(1 2)",
    ],
)
def test_code_the_words_do_not_show_is_asked_about(command: str) -> None:
    assert bash(guarded(), command) == "ask"


@pytest.mark.parametrize(
    ("rule", "command"),
    [
        ("env", "env"),  # a wrapper is itself a command a rule may name
        ("env", "sudo env"),
        ("sudo", "sudo -u bob ls"),
        ("xargs", "ls | xargs rm"),
        ("./deploy.sh", "/srv/app/deploy.sh --now"),  # compared by the command's name
    ],
)
def test_a_deny_rule_may_name_a_wrapper_or_a_path(rule: str, command: str) -> None:
    policy = Policy(
        [Rule("deny", "bash", id="r", match={"command": {"prefix": rule}})], default="allow"
    )
    assert bash(policy, command) == "deny"


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status *.py", "allow"),  # a glob after the prefix is an argument
        ("git add *.py", "allow"),
        ("git log HEAD~1 --format={x}", "allow"),  # no comma: no brace expansion
        ("git commit -m 'push it'", "allow"),
        ("timeout 60 pytest tests/test_*.py", "allow"),  # no name of DENIED can match
        ("ls *.txt", "allow"),
        ("[ -f x ] && git status", "allow"),  # the test command, no bracket expression
        ("find . -name '*.py'", "allow"),
        ("git stat?s", "allow"),  # by the rule "tools": git, whatever follows
    ],
)
def test_an_unresolved_word_that_cannot_become_a_denied_one_is_not_denied(
    command: str, expected: str
) -> None:
    assert bash(guarded(), command) == expected


@pytest.mark.parametrize(
    "command",
    ["git stat?s", "git st*", "git {status,push}", "git $'status'", "gi? status", "git $X"],
)
def test_an_allow_rule_never_matches_an_unresolved_word(command: str) -> None:
    only = Policy(
        [Rule("allow", "bash", id="ro", match={"command": {"prefix": "git status"}})],
        default="ask",
    )
    assert bash(only, command) == "ask"
    assert bash(only, "git 'status' *") == "allow"  # quotes and a later glob: still plain


# ----------------------------------------------------------------- properties

LEADS = [
    "",
    "sudo ",
    "sudo -u bob ",
    "env A=1 ",
    "FOO=bar ",
    "nohup ",
    "time ",
    "coproc ",
    "timeout 5 ",
    "nice -n 5 ",
    "ls | xargs ",
    "chrt 5 ",
    "taskset 1 ",
    "command ",
    "exec ",
    "setsid ",
    "stdbuf -oL ",
    "doas ",
    "ionice -c3 ",
    "chroot / ",
    "true && ",
    "echo x; ",
    "! ",
]


@st.composite
def spelt(draw: st.DrawFn, word: str, first: bool) -> str:
    """``word`` written so that the shell may read it back as ``word``."""
    n = len(word)
    at = draw(st.integers(0, n - 1))
    head, c, tail = word[:at], word[at], word[at + 1 :]
    forms = [
        word,
        f"{head}?{tail}",
        f"{head}[{c}]{tail}",
        f"{head}[{c}x-z]{tail}",
        f"{head}*{tail}",
        f"{head}*",
        f"*{tail}",
        f"'{head}'{c}{tail}" if head else f"'{c}'{tail}",
        f'{head}"{c}"{tail}',
        f'{head}""{c}{tail}',
        f"{head}\\{c}{tail}",
        f"{{{word},x}}",
        f"{head}{{{c},}}{tail}",
        f"{head}{{{c}..{c}}}{tail}",
        f"$'{word}'",
        f"$'{head}\\x{ord(c):02x}{tail}'",
        f'$"{word}"',
        "$X",
        '"$X"',
        "${X:-x}",
        f"$(echo {word})",
        f"`echo {word}`",
        f"@({word})",
    ]
    if first:
        forms += [f"/usr/bin/{word}", f"/u*/bin/{word}", f"={word}", f"./{head}?{tail}"]
    return draw(st.sampled_from(forms))


@st.composite
def denied_commands(draw: st.DrawFn) -> tuple[str, str]:
    prefix = draw(st.sampled_from(DENIED)).split()
    words = [draw(spelt(w, first=i == 0)) for i, w in enumerate(prefix)]
    args = draw(st.lists(st.sampled_from(["origin", "-f", "/tmp/x", "*.py", "'a b'"]), max_size=2))
    lead = draw(st.sampled_from(LEADS))
    return " ".join(prefix), lead + " ".join(words + args)


@settings(max_examples=400)
@given(denied_commands())
def test_no_spelling_of_a_denied_command_escapes_its_rule(case: tuple[str, str]) -> None:
    plain, command = case
    assert bash(guarded(), plain) == "deny"
    assert bash(guarded(), command) == "deny", command


UNRESOLVED = st.sampled_from(["?", "*", "[x]", "{a,b}", "$X", "$(x)", "$'x'"])


@settings(max_examples=300)
@given(st.integers(0, 1), st.integers(0, 5), UNRESOLVED, st.sampled_from(["", " -s", " *"]))
def test_an_allow_rule_never_reads_an_unresolved_word_as_its_own(
    which: int, at: int, glob: str, tail: str
) -> None:
    words = ["git", "status"]
    word = words[which]
    cut = min(at, len(word))
    words[which] = word[:cut] + glob + word[cut:]
    only = Policy(
        [Rule("allow", "bash", id="ro", match={"command": {"prefix": "git status"}})],
        default="ask",
    )
    assert bash(only, " ".join(words) + tail) != "allow"
