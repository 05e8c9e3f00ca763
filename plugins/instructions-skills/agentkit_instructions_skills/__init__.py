"""Skills from directories of ``SKILL.md`` files, as the ``skills`` instruction part and a tool.

A skill is a directory holding a ``SKILL.md``: front matter with ``name`` and ``description``
between ``---`` lines, then the body. The part is a catalogue (one line per skill); the body is
served by the ``read_skill`` tool, and the catalogue says how to call it only when the tool is
offered, since a paragraph about a tool the model lacks is a lie it would act on.

A skill's ``allowed-tools`` front matter (``Bash(git status:*), Read``) asks for tools it may use
without asking a person. When the model reads the skill in a run with a policy engine, the
catalogue grants them to that engine for the conversation (``agentkit_core.plugin.Grant``), and only
when the product trusts the skill (``trusted=``, off by default): the grant is then in force
until the conversation's next user message.
"""

from __future__ import annotations

from collections.abc import Callable
from collections.abc import Sequence
from functools import partial
from typing import TYPE_CHECKING
from typing import Any

from agentkit_core import ConfigError
from agentkit_core import Tool
from agentkit_core import ToolResult
from agentkit_core import hookimpl
from agentkit_core.plugin import lazy_attributes

if TYPE_CHECKING:  # the instruction-part records load when skills are read, not here
    import os
    from io import BufferedReader
    from pathlib import Path  # imported by Skills(): a first run only registers the factory

    from agentkit_core import RunContext
    from agentkit_core.plugin import Grant
    from agentkit_core.plugin import InstructionPartFactory
    from agentkit_core.plugin import Omission
    from agentkit_core.plugin import Register
    from agentkit_core.plugin import Rendered

    from ._options import SkillsOptions as SkillsOptions
    from ._skill import Skill

__all__ = [
    "GRANT_PREFIX",
    "PART_ID",
    "Skill",
    "Skills",
    "SkillsOptions",
    "parse_allowed_tools",
]

PART_ID = "skills"
SOURCE = "skills"
TOOL_NAME = "read_skill"
#: A skill's grant is named ``skill:<name>``.
GRANT_PREFIX = "skill:"
HEADER = "Skills you can use (each line: name: what it is for):"
USAGE = (
    f"To use a skill, call the {TOOL_NAME} tool with its name and follow the instructions it "
    "returns. Read a skill only when the task calls for it."
)


#: The bytes a SKILL.md may hold (``max_file_bytes=``): its body is sent to the model whole.
_MAX_FILE_BYTES = 64 * 1024


class _OverBound(ConfigError):
    """A SKILL.md over ``max_file_bytes``: left out whole and reported with its size."""


def parse_skill_file(path: Path, max_bytes: int = _MAX_FILE_BYTES) -> Skill:
    """A Skill from one SKILL.md; a file without valid front matter is a ConfigError.

    The front matter is YAML (PyYAML's safe loader): folded and literal blocks, quoting and
    nested mappings such as ``metadata:`` read as YAML says. An error names the file and line.
    A file over ``max_bytes``, or one that is not a regular file (a FIFO, a device), is an
    error too, read at most ``max_bytes`` + 1 bytes deep and never waited on.
    """
    data = _read_bounded(path, max_bytes)
    try:
        text = data.decode("utf-8-sig")  # an editor's BOM is not part of the first '---'
    except UnicodeDecodeError as exc:
        raise ConfigError(
            f"{path}: not UTF-8 text (byte {data[exc.start]:#04x} at offset {exc.start}); "
            "save it as UTF-8",
            source=str(path),
        ) from None
    lines = text.splitlines()
    if not lines or lines[0].strip() != "---" or "---" not in [ln.strip() for ln in lines[1:]]:
        raise ConfigError(f"{path}: no front matter (expected '---' lines around name/description)")
    end = 1 + [ln.strip() for ln in lines[1:]].index("---")
    meta = _FrontMatter(path, "\n".join(lines[1:end]))
    body = "\n".join(lines[end + 1 :]).strip()
    name, description = meta.name(), meta.description()
    from ._skill import Skill

    return Skill(name, description, body, str(path), meta.allowed_tools(), _digest(path))


class _FrontMatter:
    """A SKILL.md's front matter: the YAML mapping, and the line each key's value is on."""

    def __init__(self, path: Path, text: str) -> None:
        # on first use (the catalogue's first load), not when the plugin is discovered
        import yaml  # type: ignore[import-untyped,unused-ignore]

        self.path = path
        loader = yaml.SafeLoader(text)
        try:
            node = loader.get_single_node()
            data = {} if node is None else loader.construct_document(node)
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            where = f"{path}:{self._line(mark.line)}" if mark is not None else str(path)
            problem = getattr(exc, "problem", None) or str(exc)
            raise ConfigError(
                f"{where}: the front matter is not valid YAML ({problem}); quote a value that "
                "holds ': ' or starts with a special character (description: \"Use when: ...\")",
                value=text,
                source=str(path),
            ) from None
        finally:
            loader.dispose()
        if not isinstance(data, dict):
            raise ConfigError(
                f"{path}:2: the front matter is a YAML {type(data).__name__}; it must be a "
                "mapping of keys (name: ..., description: ...)",
                value=data,
                source=str(path),
            )
        self.data: dict[Any, Any] = data
        self.lines = {} if node is None else {k.value: v.start_mark.line for k, v in node.value}

    @staticmethod
    def _line(index: int) -> int:
        """A 0-based line of the front matter as a line of the file (after its first ``---``)."""
        return index + 2

    def _where(self, key: str) -> str:
        line = self.lines.get(key)
        return f"{self.path}:{self._line(line)}" if line is not None else str(self.path)

    def text(self, key: str) -> str:
        """A required one-line text: whitespace, a folded block's newlines included, collapsed."""
        value = self.data.get(key)
        if value is None or value == "":
            raise ConfigError(
                f"{self.path}: front matter lacks {key} (add a line '{key}: ...')",
                source=str(self.path),
            )
        if not isinstance(value, str):
            raise ConfigError(
                f"{self._where(key)}: front matter {key} is a {type(value).__name__} "
                f"({value!r}); it must be text: quote it",
                value=value,
                source=str(self.path),
            )
        return " ".join(value.split())

    def name(self) -> str:
        """The skill's name: text a person reads as one name, and only as that one.

        A control, format (bidi, zero-width) or unassigned character, a name NFKC changes
        (fullwidth ``ｄｅｐｌｏｙ``) and Latin letters mixed with Greek or Cyrillic ones (``dеploy``
        with a Cyrillic ``е``) would show the model one name and mean another.
        """
        import unicodedata

        name = self.text("name")
        bad = next((c for c in name if unicodedata.category(c) in _HIDDEN), None)
        scripts = {unicodedata.name(c, "?").split()[0] for c in name if c.isalpha()}
        if bad is not None:
            problem = f"holds the invisible or control character U+{ord(bad):04X}"
        elif unicodedata.normalize("NFKC", name) != name:
            problem = f"is not in NFKC form (it reads as {unicodedata.normalize('NFKC', name)!r})"
        elif "LATIN" in scripts and scripts & {"GREEK", "CYRILLIC"}:
            problem = "mixes Latin letters with Greek or Cyrillic lookalikes"
        else:
            return name
        raise ConfigError(
            f"{self._where('name')}: the skill name {name!r} {problem}; name it with plain "
            "letters, digits and hyphens (release-notes)",
            value=name,
            source=str(self.path),
        )

    def description(self) -> str:
        """The skill's description, with nothing in it the reader cannot see.

        A control or format character (a bidi override such as U+202E, a zero-width one, a tag
        character U+E0000-U+E007F that spells hidden text) would reach the model's instructions
        and a terminal listing unseen, or reorder what a person reads there. Whitespace of any
        kind (a tab, a folded block's line breaks) is collapsed to one space first, so it is no
        such character.
        """
        import unicodedata

        description = self.text("description")
        bad = next((c for c in description if unicodedata.category(c) in _UNSEEN), None)
        if bad is None:
            return description
        label = unicodedata.name(bad, "")
        raise ConfigError(
            f"{self._where('description')}: the skill description holds the invisible or "
            f"control character U+{ord(bad):04X}{f' ({label})' if label else ''}; remove it "
            "(a person would not see it, the model would)",
            value=description,
            source=str(self.path),
        )

    def allowed_tools(self) -> tuple[str, ...]:
        """``allowed-tools`` as text (comma- or space-separated) or as a YAML list of them."""
        value = self.data.get("allowed-tools")
        if value is None:
            return ()
        items = value if isinstance(value, list) else [value]
        if not all(isinstance(item, str) for item in items):
            raise ConfigError(
                f"{self._where('allowed-tools')}: allowed-tools must be text or a list of "
                f"texts (Bash(git log:*), Read), got {value!r}",
                value=value,
                source=str(self.path),
            )
        return tuple(entry for item in items for entry in parse_allowed_tools(item))


#: Unicode categories no skill name may hold: control, format (bidi, zero-width), surrogate,
#: private-use and unassigned characters, and line and paragraph separators.
_HIDDEN = frozenset({"Cc", "Cf", "Cs", "Co", "Cn", "Zl", "Zp"})
#: Unicode categories no skill description may hold: control, format and surrogate characters.
#: Private-use and unassigned ones may be a symbol font's icon or an emoji newer than the
#: interpreter's Unicode tables; line and paragraph separators are whitespace, collapsed.
_UNSEEN = frozenset({"Cc", "Cf", "Cs"})


def parse_allowed_tools(text: str) -> tuple[str, ...]:
    """The entries of an ``allowed-tools`` value: split at commas and spaces outside brackets.

    ``Bash(git status:*), Read`` and ``Bash(git status:*) Read`` and ``[Read, Grep]`` all
    read the same way; a specifier keeps its spaces (``Bash(git diff --stat:*)``).
    """
    text = text.strip()
    if text.startswith("[") and text.endswith("]"):
        text = text[1:-1]
    entries: list[str] = []
    current: list[str] = []
    depth = 0
    for c in text:
        if c == "(":
            depth += 1
        elif c == ")":
            depth = max(0, depth - 1)
        if depth == 0 and (c == "," or c.isspace()):
            entries.append("".join(current))
            current = []
        else:
            current.append(c)
    entries.append("".join(current))
    return tuple(e.strip().strip("\"'") for e in entries if e.strip().strip("\"'"))


def _read_bounded(path: Path, limit: int) -> bytes:
    """The bytes of the regular file at ``path``; a ConfigError naming the fix for any other.

    At most ``limit`` + 1 bytes are read: a file that grew since it was measured, or one whose
    size the system does not report, is bounded all the same.
    """
    import stat

    try:
        file, status = _open(path)
    except OSError as exc:  # a link to nothing, a loop of links, no permission
        raise ConfigError(
            f"{path}: cannot be read ({exc.strerror or exc}); give the agent read access to it, "
            "or remove it",
            value=str(path),
            source=str(path),
        ) from None
    with file:
        if not stat.S_ISREG(status.st_mode):
            raise ConfigError(
                f"{path}: not a regular file (a FIFO, a device or a directory); make it the "
                "skill's instructions file or remove it",
                value=str(path),
                source=str(path),
            )
        data = b"" if status.st_size > limit else file.read(limit + 1)
    if status.st_size <= limit and len(data) <= limit:
        return data
    size = max(status.st_size, len(data))
    measured = f"{size} bytes" if status.st_size > limit else f"more than {limit} bytes"
    raise _OverBound(
        f"{path}: {measured}, over the bound of {limit} bytes on a skill file "
        "(max_file_bytes); keep SKILL.md to the steps and move the detail into other files "
        "of the skill that it names, or raise max_file_bytes",
        value=size,
        source=str(path),
    )


def _open(path: Path) -> tuple[BufferedReader, os.stat_result]:
    """``path`` opened to read, and its status; opening a FIFO does not wait for a writer."""
    import os

    fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0))
    try:
        return os.fdopen(fd, "rb"), os.fstat(fd)
    except BaseException:
        os.close(fd)
        raise


def _digest(path: Path) -> str:
    """SHA-256 over every file of the skill's directory: its relative name and its bytes.

    Files reached through a linked directory count (see :func:`_walk`): a script the grant lets
    the skill run may live behind one.
    """
    import hashlib  # with the first skill found: loading the plugin does not import it
    import stat

    root = path.parent
    digest = hashlib.sha256()
    for file in sorted(p for p in _walk(root) if p.is_file()):
        opened, status = _open(file)
        with opened:
            if not stat.S_ISREG(status.st_mode):  # replaced by a FIFO since is_file()
                continue
            digest.update(file.relative_to(root).as_posix().encode() + b"\0")
            digest.update(hashlib.file_digest(opened, "sha256").digest())  # in pieces
    return digest.hexdigest()


def _walk(root: Path) -> list[Path]:
    """Everything under ``root`` that is not a directory, through linked directories too.

    ``Path.rglob`` passes over a link to a directory (Python 3.11 and 3.12 cannot be asked
    otherwise), so a skill linked into a skills directory would not be found. A link is followed
    wherever it leads, as a linked ``SKILL.md`` is read wherever it leads; each real directory
    (device and inode) is walked once, the first way it is reached in name order, so a loop of
    links ends and two links to one directory do not find its skills twice. A directory that
    cannot be listed is passed over, as ``rglob`` passes over it.
    """
    import os

    found: list[Path] = []
    seen: set[tuple[int, int]] = set()
    pending = [root]
    while pending:
        directory = pending.pop()
        try:
            status = os.stat(directory)
            if (status.st_dev, status.st_ino) in seen:
                continue
            seen.add((status.st_dev, status.st_ino))
            with os.scandir(directory) as listing:
                entries = sorted(listing, key=lambda entry: entry.name)
        except (OSError, ValueError):
            continue
        below: list[Path] = []
        for entry in entries:
            try:
                is_dir = entry.is_dir()  # follows a link
            except OSError:
                is_dir = False
            (below if is_dir else found).append(directory / entry.name)
        pending.extend(reversed(below))  # the first name is walked first
    return found


class _ReadSkill(Tool):
    def __init__(self, catalogue: Skills) -> None:
        super().__init__(
            TOOL_NAME,
            "Read the full instructions of one skill from the skills catalogue.",
            {
                "type": "object",
                "properties": {"name": {"type": "string", "description": "the skill's name"}},
                "required": ["name"],
                "additionalProperties": False,
            },
            side_effects=False,
        )
        self.catalogue = catalogue

    async def invoke(self, arguments: dict[str, Any], ctx: RunContext) -> ToolResult:
        name = arguments.get("name")
        skill = self.catalogue.get(str(name))
        if skill is None:
            known = ", ".join(s.name for s in self.catalogue.skills) or "none"
            return ToolResult.error(f"no skill named {name!r}; the skills are: {known}")
        structured: dict[str, Any] = {"name": skill.name, "location": skill.location}
        if skill.allowed_tools and ctx.policy is not None:
            from agentkit_core.plugin import (
                grant_scope,  # imports the policy machinery: on use only
            )

            grant = self.catalogue.grant_for(skill, scope=grant_scope(ctx), run=ctx.run_id)
            report = ctx.policy.grant(grant, ctx)
            structured["granted"] = list(report.granted)
            structured["refused"] = [entry for entry, _ in report.refused]
        return ToolResult(skill.body, structured=structured)


class Skills:
    """A skills catalogue over ``dirs`` and ``optional_dirs``, searched in that order.

    Each of ``dirs`` must exist; a missing one of ``optional_dirs`` is passed over. The first
    skill of a name shadows later ones.

    ``offer_tool=False`` renders the catalogue without offering ``read_skill`` (and without
    the usage paragraph). :meth:`reload` discovers again.

    ``trusted`` says whether a skill's ``allowed-tools`` may grant anything when the model
    reads it: False (the default) trusts no skill, True every skill of these directories, a
    function ``trusted(skill)`` decides per skill. Trust the directories a person controls,
    not ones the agent itself writes to.

    A SKILL.md over ``max_file_bytes`` is left out whole and reported with its size.
    """

    id = PART_ID
    source = SOURCE
    shrinkable = True

    def __init__(
        self,
        dirs: Sequence[str | Path] = (),
        *,
        optional_dirs: Sequence[str | Path] = (),
        offer_tool: bool = True,
        trusted: bool | Callable[[Skill], bool] = False,
        max_file_bytes: int = _MAX_FILE_BYTES,
    ) -> None:
        if not isinstance(trusted, bool) and not callable(trusted):
            raise ConfigError(
                f"skills trusted= takes true, false or a function of the skill, got {trusted!r}",
                value=trusted,
                source="skills trusted=",
            )
        bound: object = max_file_bytes
        if isinstance(bound, bool) or not isinstance(bound, int) or bound < 0:
            raise ConfigError(
                f"skills max_file_bytes={max_file_bytes!r} is not a number of bytes; give a "
                "whole number, 0 or more",
                value=max_file_bytes,
                source="skills max_file_bytes=",
            )
        from pathlib import Path

        self.dirs = [(Path(d), False) for d in dirs] + [(Path(d), True) for d in optional_dirs]
        self.offer_tool = offer_tool
        self.trusted = trusted
        self.max_file_bytes = max_file_bytes
        self._tool = _ReadSkill(self)
        self.skills: list[Skill] = []
        self._problems: list[Omission] = []
        self.reload()

    @property
    def tools(self) -> Sequence[Tool]:
        """The ``load_skill`` tool, when it is offered and there is a skill to load."""
        return (self._tool,) if self.offer_tool and self.skills else ()

    def get(self, name: str) -> Skill | None:
        """The skill called ``name``, or None."""
        return next((s for s in self.skills if s.name == name), None)

    def is_trusted(self, skill: Skill) -> bool:
        """Whether ``skill``'s allowed-tools may grant (``trusted=``)."""
        return self.trusted if isinstance(self.trusted, bool) else bool(self.trusted(skill))

    def grant_for(self, skill: Skill, *, scope: str = "", run: str = "") -> Grant:
        """The grant reading ``skill`` makes: its allowed-tools, trusted or not, and its digest."""
        from agentkit_core.plugin import Grant  # imports the policy machinery: on use only

        return Grant(
            f"{GRANT_PREFIX}{skill.name}",
            skill.allowed_tools,
            trusted=self.is_trusted(skill),
            digest=skill.digest,
            reread=f"call {TOOL_NAME} with name {skill.name!r}",
            scope=scope,
            run=run,
        )

    def current_grant(self, source: str) -> Grant | None:
        """The grant reading the skill ``source`` names would make now (None: not a skill here).

        A restart compares it with the grant the session recorded (``Grantor``).
        """
        if not source.startswith(GRANT_PREFIX):
            return None
        skill = self.get(source[len(GRANT_PREFIX) :])
        return None if skill is None else self.grant_for(skill)

    def reload(self) -> None:
        """Discover the skills again; on an error the catalogue in force stays as it was."""
        from agentkit_core.plugin import Omission

        found: dict[str, Skill] = {}
        problems: list[Omission] = []
        for directory, optional in self.dirs:
            if not _is_dir(directory):
                if optional:
                    continue
                raise ConfigError(
                    f"skills directory {str(directory)!r} does not exist; create it, fix the "
                    "path, or pass it as optional_dirs= if it may be absent",
                    value=str(directory),
                    source="skills dirs=",
                )
            for path in sorted(p for p in _walk(directory) if p.name == "SKILL.md"):
                try:
                    skill = parse_skill_file(path, self.max_file_bytes)
                except _OverBound as exc:
                    size = exc.value if isinstance(exc.value, int) else 0
                    reason = f"over max_file_bytes: {exc}"
                    problems.append(Omission(PART_ID, SOURCE, str(path), reason, size))
                    continue
                except (ConfigError, OSError, UnicodeDecodeError) as exc:
                    problems.append(Omission(PART_ID, SOURCE, str(path), f"invalid: {exc}"))
                    continue
                key = skill.name.casefold()  # Deploy and deploy read as one skill: the first
                if key in found:
                    problems.append(
                        Omission(
                            PART_ID,
                            SOURCE,
                            skill.location,
                            "shadowed",
                            len(skill.line.encode()),
                            found[key].location,
                        )
                    )
                    continue
                found[key] = skill
        self.skills = list(found.values())
        self._problems = problems

    def render(self, max_bytes: int | None) -> Rendered:
        """The skill catalogue (names and descriptions) within ``max_bytes``."""
        from agentkit_core.plugin import Omission
        from agentkit_core.plugin import Rendered

        if not self.skills:
            return Rendered("", tuple(self._problems))
        head = [HEADER]
        tail = [USAGE] if self.offer_tool else []
        fixed = len("\n".join(head + tail).encode())  # each kept line adds itself and a newline
        room = None if max_bytes is None else max_bytes - fixed
        lines: list[str] = []
        omissions = list(self._problems)
        for skill in self.skills:
            cost = len(skill.line.encode()) + 1
            if room is not None and cost > room:
                omissions.append(Omission(PART_ID, SOURCE, skill.location, "over budget", cost))
                continue
            lines.append(skill.line)
            if room is not None:
                room -= cost
        if not lines:
            return Rendered("", tuple(omissions))
        return Rendered("\n".join(head + lines + tail), tuple(omissions))


@hookimpl
def agentkit_register_instruction_parts(register: Register[InstructionPartFactory]) -> None:
    """Offer the ``skills`` part."""
    register(PART_ID, Skills, settings=partial(__getattr__, "SkillsOptions"))


def _is_dir(path: Path) -> bool:
    """``path.is_dir()``, False for a name the system refuses (pathlib raises for one too long)."""
    try:
        return path.is_dir()
    except (OSError, ValueError):
        return False


#: ``Skill`` is made when skills are first read: a frozen dataclass compiles six methods and
#: makes its class twice, which every first run (every installed plugin loaded) would pay.
__getattr__ = lazy_attributes(__name__, {"Skill": "._skill", "SkillsOptions": "._options"})
