"""The instruction-part conformance suite: what every ``agentkit_core.plugin.PartSource`` does.

An instruction-part plugin's test subclasses :class:`InstructionPartConformance` and builds a
configured part with some content (in ``tmp_path``, for a part read from files)::

    class TestMyPartConformance(InstructionPartConformance):
        def make_source(self, tmp_path: Path) -> PartSource:
            (tmp_path / "NOTES.md").write_text("Prefer small commits.")
            return NotesPart(tmp_path)

A :class:`~agentkit_core.plugin.ReloadablePartSource` sets ``reloadable = True``; if it can be made
to fail a reload, it also defines :meth:`spoil` (change ``tmp_path`` so the next ``reload()``
raises), and the suite checks that the part keeps rendering what it rendered before. Content
with non-ASCII text is the better test: budgets are UTF-8 bytes, not characters.
Requires pytest.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path
from typing import ClassVar

import pytest

from .._errors import AgentkitError
from .._errors import ConfigError
from .._instructions import SEPARATOR
from .._instructions import Omission
from .._instructions import PartSource
from .._instructions import ReloadablePartSource
from .._instructions import Rendered
from .._instructions import TextPart
from .._instructions import compose_instructions
from .._tools import Tool
from ._registrations import check_declared_options


def _size(text: str) -> int:
    return len(text.encode("utf-8"))


class InstructionPartConformance:
    """Contract tests for an instruction part source; subclass and define :meth:`make_source`."""

    #: True when the part is a ReloadablePartSource (the suite checks it says so, and reloads).
    reloadable: ClassVar[bool] = False
    #: Budgets tried besides the full size, one byte under it and half of it.
    budgets: ClassVar[tuple[int, ...]] = (0, 1, 2, 3, 10, 50, 200, 1000)
    #: Bytes over its whole size a shrinkable part may need to keep everything; 0 means a
    #: bound the whole text fits keeps it whole (anything else leaves out what would fit).
    whole_fit_slack: ClassVar[int] = 0

    def make_source(self, tmp_path: Path) -> PartSource:
        raise NotImplementedError("define make_source(tmp_path) in the conformance subclass")

    def spoil(self, tmp_path: Path) -> None:
        """Change what the part reads so that its next ``reload()`` raises."""
        raise NotImplementedError

    @pytest.fixture
    def part(self, tmp_path: Path) -> PartSource:
        return self.make_source(tmp_path)

    def _render(self, part: PartSource, max_bytes: int | None) -> Rendered:
        out = part.render(max_bytes)
        assert isinstance(out, Rendered), f"render({max_bytes}) returned {out!r}, not Rendered"
        assert isinstance(out.text, str), f"render({max_bytes}).text is {type(out.text)}"
        assert isinstance(out.omissions, tuple), f"render({max_bytes}).omissions is not a tuple"
        for o in out.omissions:
            assert isinstance(o, Omission), f"render({max_bytes}) omitted {o!r}, not an Omission"
            assert (o.part, o.source) == (part.id, part.source), f"{o!r} names another part"
            assert isinstance(o.what, str) and o.what, f"{o!r} does not say what was left out"
            assert isinstance(o.reason, str) and o.reason, f"{o!r} gives no reason"
            assert isinstance(o.size, int) and o.size >= 0, f"{o!r} has a bad size"
        if out.parts:
            assert SEPARATOR.join(p.text for p in out.parts) == out.text, "parts do not join"
            assert out.parts[0].id == part.id, f"a group starts with the part {part.id!r}"
        return out

    def _full(self, part: PartSource) -> Rendered:
        full = self._render(part, None)
        assert full.text, "configure the part with some content so the suite can check it"
        return full

    def test_declared_options_are_taken_by_the_factory(self, part: PartSource) -> None:
        check_declared_options(part)

    def test_is_a_part_source(self, part: PartSource) -> None:
        assert isinstance(part, PartSource), f"{part!r} lacks id, source, shrinkable or render"
        for name in ("id", "source"):
            value = getattr(part, name)
            assert isinstance(value, str) and value and value == value.strip(), (
                f"{name} must be a non-empty str without surrounding blanks: {value!r}"
            )
        assert isinstance(part.shrinkable, bool)
        assert isinstance(part.tools, Sequence) and all(isinstance(t, Tool) for t in part.tools)
        assert isinstance(part, ReloadablePartSource) is self.reloadable, (
            f"reloadable = {self.reloadable} in the suite, but the part "
            f"{'has' if isinstance(part, ReloadablePartSource) else 'lacks'} reload()"
        )

    def test_rendering_is_deterministic(self, part: PartSource) -> None:
        assert self._full(part) == self._render(part, None)
        half = _size(self._full(part).text) // 2
        assert self._render(part, half) == self._render(part, half)

    def test_budgets_are_kept_in_utf8_bytes(self, part: PartSource) -> None:
        full = self._full(part)
        size = _size(full.text)
        if not part.shrinkable:
            for budget in self.budgets:
                assert self._render(part, budget) == full, "an unshrinkable part ignores bounds"
            return
        kept = self._render(part, size + self.whole_fit_slack)
        assert kept == full, f"a bound of {size} bytes fits the whole text; it must keep it"
        for budget in sorted({*self.budgets, size - 1, size // 2}):
            if budget < 0:
                continue
            out = self._render(part, budget)
            assert _size(out.text) <= budget, (
                f"render({budget}) gave {_size(out.text)} UTF-8 bytes: {out.text!r}"
            )
            if out.text != full.text:
                new = set(out.omissions) - set(full.omissions)
                assert new, f"render({budget}) left text out without reporting an omission"

    def test_composes_next_to_a_text_part(self, part: PartSource) -> None:
        full = self._full(part)
        neighbour = TextPart("Answer briefly. Réponds brièvement.", id="neighbour", source="test")
        order = ["neighbour", part.id]
        joined = compose_instructions([neighbour, part], order=order)
        assert joined.text == neighbour.text + SEPARATOR + full.text
        ids = [p.id for p in joined.parts]
        assert ids[:2] == ["neighbour", part.id]
        if full.parts:  # a group: its own parts, each named under the part's id
            assert tuple(joined.parts[1:]) == full.parts
        else:
            assert len(ids) == 2
        fixed = _size(neighbour.text) + _size(SEPARATOR)
        if part.shrinkable:
            budget = fixed + _size(full.text) // 2
            bounded = compose_instructions([neighbour, part], order=order, budget=budget)
            assert _size(bounded.text) <= budget
            assert bounded.text.startswith(neighbour.text)
        else:
            exact = fixed + _size(full.text)
            assert (
                compose_instructions([neighbour, part], order=order, budget=exact).text
                == joined.text
            )
            with pytest.raises(ConfigError, match=re.escape(part.id)):
                compose_instructions([neighbour, part], order=order, budget=exact - 1)

    def test_reload_keeps_the_last_good_render(self, part: PartSource, tmp_path: Path) -> None:
        if not isinstance(part, ReloadablePartSource):
            assert not self.reloadable
            return
        before = self._full(part)
        part.reload()
        assert self._render(part, None) == before, "reload() with nothing changed changed it"
        if type(self).spoil is InstructionPartConformance.spoil:
            return
        self.spoil(tmp_path)
        with pytest.raises(AgentkitError):
            part.reload()
        assert self._render(part, None) == before, "a failed reload() changed the part"
