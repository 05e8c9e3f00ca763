"""Matchers under attack: shell command lines for prefix rules, paths for within rules, and
exact and regex values. An allow rule matches only what it can read plainly; a deny or ask rule
that cannot tell asks a person."""

from __future__ import annotations

import json
import os
import shlex
import unicodedata
from pathlib import Path

import pytest
from agentkit_policy_rules import Equals
from agentkit_policy_rules import Policy
from agentkit_policy_rules import Regex
from agentkit_policy_rules import Rule
from agentkit_policy_rules import Within
from agentkit_policy_rules._shell import _Reader
from agentkit_policy_rules._shell import split_command
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ToolCall


def git_policy(default: str = "ask") -> Policy:
    return Policy(
        [
            Rule(
                "allow",
                "bash",
                id="read-only-git",
                match={"command": {"prefix": ["git status", "git diff"]}},
            ),
            Rule("deny", "bash", id="no-push", match={"command": {"prefix": ["git push"]}}),
        ],
        default=default,
    )


def verdict(policy: Policy, tool: str, arguments: object) -> str:
    text = arguments if isinstance(arguments, str) else json.dumps(arguments)
    return policy.would(ToolCall("c", tool, text), source="tools").kind


def bash(policy: Policy, command: object) -> str:
    return verdict(policy, "bash", {"command": command})


# ----------------------------------------------------------------- prefix


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git status", "allow"),
        ("git status -s", "allow"),
        ("  git   status  ", "allow"),
        ('git "status"', "allow"),  # the shell reads the same words
        ("git diff --stat; git status", "allow"),  # every command allowed
        ("git statusx", "ask"),  # a word boundary
        ("git stat", "ask"),
        ("git", "ask"),
        ("xgit status", "ask"),
        ("git status && rm -rf /", "ask"),
        ("git status; rm -rf /", "ask"),
        ("git status | sh", "ask"),
        ("git status\nrm -rf /", "ask"),
        ("git status & rm -rf /", "ask"),
        ("git status > /etc/passwd", "ask"),  # a redirection writes: not plainly read
        ("git diff --output=x 2>&1", "ask"),
        ("git status $(rm -rf /)", "ask"),
        ("git status `rm -rf /`", "ask"),
        ("git status $HOME", "ask"),
        ("git status 'unclosed", "ask"),
        ("GIT_DIR=/x git status", "ask"),
        ("/usr/bin/git status", "ask"),
        ("git 'status;rm'", "ask"),  # one word, not the prefix
        ("git status '$(not run)'", "allow"),  # single quotes: literal
        ("git status # ; rm -rf /", "allow"),  # a comment
    ],
)
def test_an_allow_prefix_reads_each_command_strictly(command: str, expected: str) -> None:
    assert bash(git_policy(), command) == expected


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("git push", "deny"),
        ("git push origin main", "deny"),
        ("git status && git push", "deny"),
        ("git status; git push --force", "deny"),
        ("sudo git push", "deny"),
        ("sudo -u bob git push", "deny"),
        ("env GIT_TRACE=1 git push", "deny"),
        ("FOO=bar git push", "deny"),
        ("nohup git push &", "deny"),
        ("/usr/bin/git push", "deny"),
        ("(git push)", "deny"),
        ("{ git push; }", "deny"),
        ("if true; then git push; fi", "deny"),
        ("ls | xargs git push", "deny"),
        ("git push > log 2>&1", "deny"),
        ("echo $(git push)", "ask"),  # a substitution: cannot tell
        ("echo `git push`", "ask"),
        ('sh -c "git push"', "ask"),
        ("bash -lc 'git push'", "ask"),
        ("eval git push", "ask"),
        ("$GIT push", "deny"),  # may become any words: git push among them
        ("git push 'unclosed", "ask"),
        ("echo git push", "ask"),  # the default: echo is not git
        ('echo "git push"', "ask"),
        ("git pushx", "ask"),
    ],
)
def test_a_deny_prefix_reads_leniently_and_asks_when_it_cannot_tell(
    command: str, expected: str
) -> None:
    assert bash(git_policy(), command) == expected


def test_an_argument_that_is_no_command_is_never_allowed_by_a_prefix() -> None:
    policy = git_policy(default="allow")
    for value in (3, None, ["git", "status"], {"c": 1}):
        assert bash(policy, value) == "ask"  # the deny rule cannot tell
    assert verdict(policy, "bash", {}) == "ask"  # missing
    assert verdict(policy, "bash", "not json") == "deny"  # unreadable: see test_engine.py
    assert verdict(policy, "bash", "[1, 2]") == "deny"
    strict = Policy([Rule("allow", "bash", match={"command": {"prefix": "ls"}})])
    for value in (3, None, ["ls"]):
        assert bash(strict, value) == "ask"


WORDS = ["git", "status", "diff", "push", "rm", "-rf", "/", "ls", "x"]
OPERATORS = [";", "&&", "||", "|", "&", "\n"]


@st.composite
def command_lines(draw: st.DrawFn) -> tuple[str, list[list[str]]]:
    segments = draw(
        st.lists(st.lists(st.sampled_from(WORDS), min_size=1, max_size=4), min_size=1, max_size=4)
    )
    ops = draw(
        st.lists(st.sampled_from(OPERATORS), min_size=len(segments) - 1, max_size=len(segments) - 1)
    )
    text = " ".join(segments[0])
    for op, seg in zip(ops, segments[1:], strict=True):
        text += f" {op} " + " ".join(seg)
    return text, segments


@settings(max_examples=300)
@given(command_lines())
def test_a_command_line_is_decided_command_by_command(case: tuple[str, list[list[str]]]) -> None:
    text, segments = case
    allowed = all(s[:2] in (["git", "status"], ["git", "diff"]) for s in segments)
    denied = any(s[:2] == ["git", "push"] for s in segments)
    expected = "deny" if denied else "allow" if allowed else "ask"
    assert bash(git_policy(), text) == expected


@settings(max_examples=500)
@given(
    st.one_of(
        st.text(alphabet="git push-./=:,@%+_09\t\r", max_size=30),
        st.text(alphabet="git -./=:,@_ \t$'\";&|<>()#~*?[]{}!\\`\n", max_size=30),
    )
)
def test_the_plain_line_shortcut_splits_as_the_full_reader_does(text: str) -> None:
    """A line of plain words skips the character-by-character reader; nothing else may differ."""
    assert split_command(text) == _Reader(text).read()


@settings(max_examples=400)
@given(st.text(alphabet="gitsau ;&|<>()'\"\\\n#x{}", max_size=40))
def test_an_allowed_line_is_one_a_second_reader_splits_into_allowed_commands(text: str) -> None:
    """Whatever the text, an allow means shlex, read independently, sees only allowed commands."""
    if bash(git_policy(), text) != "allow":
        return
    lexer = shlex.shlex(text.replace("\n", ";"), posix=True, punctuation_chars=";&|()<>")
    lexer.whitespace_split = True
    lexer.commenters = "#"
    tokens = list(lexer)
    groups: list[list[str]] = [[]]
    for token in tokens:
        assert not set(token) & set("<>"), f"a redirection was allowed: {text!r}"
        if token and set(token) <= set(";&|()"):
            groups.append([])
        else:
            groups[-1].append(token)
    for group in groups:
        if group:
            assert group[:2] in (["git", "status"], ["git", "diff"]), (text, tokens)


# ----------------------------------------------------------------- within


@pytest.fixture
def tree(tmp_path: Path) -> Path:
    """work/ (the confined tree) and outside/, with links across them."""
    work, outside = tmp_path / "work", tmp_path / "outside"
    (work / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_text("s")
    (work / "to-outside").symlink_to(outside, target_is_directory=True)
    (work / "secret-link").symlink_to(outside / "secret")
    (work / "dangling").symlink_to(outside / "not-yet")
    (work / "loop").symlink_to(work / "loop")
    (outside / "to-work").symlink_to(work / "src", target_is_directory=True)
    (tmp_path / "work-evil").mkdir()
    return work


def confined(tree: Path) -> Policy:
    return Policy(
        [Rule("allow", "write_file", id="workspace", match={"path": {"within": "."}})], cwd=tree
    )


def write(policy: Policy, path: object) -> str:
    return verdict(policy, "write_file", {"path": path})


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("src/a.py", "allow"),
        ("./src/../src/a.py", "allow"),
        ("new/dir/file", "allow"),
        (".", "allow"),
        ("../outside/secret", "ask"),
        ("src/../../outside/x", "ask"),
        ("to-outside/secret", "ask"),  # a link out of the tree
        ("to-outside/../outside/x", "ask"),  # ".." after a link leaves the link's target
        ("to-outside/../work/x", "allow"),  # ... which here lands back inside the tree
        ("secret-link", "ask"),
        ("dangling", "ask"),  # points outside even before it exists
        ("../work-evil/x", "ask"),  # a sibling whose name starts like the tree's
        ("/etc/passwd", "ask"),
        ("~/x", "ask"),
        ("", "ask"),
        ("src/\x00x", "ask"),
        ("..／..／etc", "allow"),  # fullwidth solidus: one odd file name, inside
    ],
)
def test_a_path_is_confined_after_resolving_dots_and_links(
    tree: Path, path: str, expected: str
) -> None:
    assert write(confined(tree), path) == expected


def test_absolute_paths_case_and_unicode(tree: Path) -> None:
    policy = confined(tree)
    assert write(policy, str(tree / "src" / "a.py")) == "allow"
    assert (
        write(policy, str(tree.parent / "outside" / "to-work" / "a.py")) == "allow"
    )  # lands inside
    assert write(policy, str(tree).upper() + "/x") == "ask"  # another directory here
    café = tree / unicodedata.normalize("NFC", "café")
    café.mkdir()
    only = Policy([Rule("allow", "write_file", match={"path": {"within": str(café)}})])
    assert write(only, str(café / "x")) == "allow"
    assert write(only, unicodedata.normalize("NFD", str(café)) + "/x") == "ask"


def test_a_list_of_paths_is_confined_as_a_whole(tree: Path) -> None:
    policy = confined(tree)
    assert write(policy, ["src/a", "src/b"]) == "allow"
    assert write(policy, ["src/a", "../outside/secret"]) == "ask"
    assert write(policy, []) == "ask"
    assert write(policy, ["src/a", 3]) == "ask"


def test_a_deny_within_catches_a_link_into_its_tree(tree: Path) -> None:
    protected = Policy(
        [Rule("deny", "write_file", id="keep-out", match={"path": {"within": "../outside"}})],
        default="allow",
        cwd=tree,
    )
    assert write(protected, "to-outside/secret") == "deny"
    assert write(protected, "secret-link") == "deny"
    assert write(protected, "src/a") == "allow"
    assert write(protected, "~/x") == "ask"  # cannot tell where it lands
    assert write(protected, ["src/a", "secret-link"]) == "deny"


def resolve_by_hand(base: Path, path: str, depth: int = 0) -> str | None:
    """An independent resolver: component by component, following each link by readlink."""
    if depth > 20:
        return None
    parts = Path(path).parts if os.path.isabs(path) else (*base.parts, *Path(path).parts)
    current = Path("/")
    for part in parts[1:] if os.path.isabs(path) or parts[0] == "/" else parts:
        if part in ("", "."):
            continue
        if part == "..":
            current = current.parent
            continue
        nxt = current / part
        if nxt.is_symlink():
            target = os.readlink(nxt)
            resolved = resolve_by_hand(current, target, depth + 1)
            if resolved is None:
                return None
            current = Path(resolved)
        else:
            current = nxt
    return str(current)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.sampled_from(["src", "..", ".", "to-outside", "secret-link", "dangling", "new", "work"]),
        min_size=1,
        max_size=6,
    ),
    st.booleans(),
)
def test_within_agrees_with_an_independent_resolver(
    tmp_path_factory: pytest.TempPathFactory, parts: list[str], absolute: bool
) -> None:
    root = tmp_path_factory.getbasetemp() / "within-property"
    if not (root / "work").exists():
        (root / "work" / "src").mkdir(parents=True)
        (root / "outside").mkdir()
        (root / "work" / "to-outside").symlink_to(root / "outside", target_is_directory=True)
        (root / "work" / "secret-link").symlink_to(root / "outside" / "secret")
        (root / "work" / "dangling").symlink_to(root / "outside" / "nope")
    work = (root / "work").resolve()
    path = "/".join(parts)
    if absolute:
        path = str(work / path)
    by_hand = resolve_by_hand(work, path)
    assume(by_hand is not None)
    inside = by_hand == str(work) or by_hand.startswith(str(work) + "/")
    assert (write(confined(work), path) == "allow") == inside, (path, by_hand)


# ----------------------------------------------------------------- equals and regex


def test_equals_compares_json_values_exactly() -> None:
    policy = Policy(
        [Rule("allow", "set", match={"level": {"equals": [1, "high"]}})], default="deny"
    )
    assert verdict(policy, "set", {"level": 1}) == "allow"
    assert verdict(policy, "set", {"level": "high"}) == "allow"
    assert verdict(policy, "set", {"level": 1.0}) == "deny"
    assert verdict(policy, "set", {"level": True}) == "deny"
    assert verdict(policy, "set", {"level": "HIGH"}) == "deny"
    assert verdict(policy, "set", {}) == "deny"  # cannot tell: an allow does not match
    nested = Policy([Rule("deny", "set", match={"opts": Equals({"a": [1, 2]})})], default="allow")
    assert verdict(nested, "set", {"opts": {"a": [1, 2]}}) == "deny"
    assert verdict(nested, "set", {"opts": {"a": [2, 1]}}) == "allow"
    assert verdict(nested, "set", {}) == "ask"  # cannot tell: a deny asks


def test_regex_matches_a_whole_string() -> None:
    policy = Policy(
        [Rule("allow", "fetch", match={"url": Regex(r"https://docs\.example\.com/.*")})],
        default="deny",
    )
    assert verdict(policy, "fetch", {"url": "https://docs.example.com/a"}) == "allow"
    assert verdict(policy, "fetch", {"url": "https://docs.example.com.evil.io/a"}) == "deny"
    assert verdict(policy, "fetch", {"url": "xhttps://docs.example.com/a"}) == "deny"
    assert verdict(policy, "fetch", {"url": ["https://docs.example.com/a"]}) == "deny"


def test_matchers_refuse_bad_values_in_code() -> None:
    for bad in (lambda: Within(), lambda: Regex("("), lambda: Equals(), lambda: Within("")):
        with pytest.raises(TypeError):
            bad()
