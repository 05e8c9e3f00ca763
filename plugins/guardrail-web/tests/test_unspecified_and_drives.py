"""Egress (issue 33): the unspecified address reaches this host and is refused like loopback in
every spelling; Windows drive paths are file paths, never refused as egress."""

from __future__ import annotations

import json
from typing import Any

import pytest
from agentkit_guardrail_web import WebGuardrail
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import GuardrailViolation

SPELLINGS = [
    "0:8080",
    "//0",
    "//0:80/admin",
    "0.0.0.0",
    "0.0.0.0:8000",
    "::",
    "[::]",
    "[::]:8080",
    "0:0:0:0:0:0:0:0",
    "[0:0:0:0:0:0:0:0]:80",
    "::ffff:0.0.0.0",
    "0x0:80",
    "00:8080",
    "0.0:80",
    "http://0/",
    "http://0:8080/admin",
    "https://[::]:443/",
    "http://0x0/",
    "http://00/",
    "http://0.0/",
    "http://[::ffff:0:0]/",
]


@pytest.mark.parametrize("spelling", SPELLINGS)
@pytest.mark.parametrize("where", ["host", "nested", "json"])
async def test_the_unspecified_address_is_refused_like_loopback(spelling: str, where: str) -> None:
    arguments: dict[str, Any] = {
        "host": {"host": spelling},
        "nested": {"config": {"servers": ["https://example.com/", spelling]}},
        "json": {"payload": json.dumps({"target": spelling})},
    }[where]
    # Allowing loopback on purpose does not allow the unspecified address either.
    for guard in (WebGuardrail(), WebGuardrail(allow_private_networks=["127.0.0.0/8", "::1/128"])):
        with pytest.raises(GuardrailViolation, match=r"unspecified.*reaches this host") as info:
            await guard.check_arguments(arguments)
        assert info.value.reason and "like loopback" in info.value.reason


async def test_a_name_that_resolves_to_the_unspecified_address_is_refused() -> None:
    async def zero(host: str, port: int) -> list[str]:
        return ["0.0.0.0"] if host == "zero.example.com" else ["::"]

    async with WebGuardrail().fetcher(resolver=zero) as fetch:
        for url in ("http://zero.example.com/", "http://six.example.com/"):
            with pytest.raises(GuardrailViolation, match=r"reaches this host, like loopback"):
                await fetch.get(url)


@pytest.mark.parametrize(
    "path",
    [
        "C:\\Users\\bob\\Documents\\report.csv",
        "D:/data/x.csv",
        "c:foo",
        "C:0",
        "E:\\",
        "C:\\Program Files\\App\\app.exe",
        "copy C:\\Users\\bob\\a.txt to D:/backup/a.txt",
    ],
)
async def test_a_windows_drive_path_is_not_egress(path: str) -> None:
    for guard in (WebGuardrail(), WebGuardrail(egress_allow=["example.com"])):
        await guard.check_arguments({"path": path, "paths": [path], "json": json.dumps([path])})
        assert guard.check_arguments_offline({"path": path}) == ()


names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ ()-]{0,11}(\.[a-z]{1,4})?", fullmatch=True)


@st.composite
def drive_paths(draw: st.DrawFn) -> str:
    sep = draw(st.sampled_from(["\\", "/"]))
    root = draw(st.sampled_from(["", sep]))
    letter = draw(st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"))
    return f"{letter}:{root}{sep.join(draw(st.lists(names, max_size=4)))}"


@given(path=drive_paths())
@settings(max_examples=200, deadline=None)
async def test_no_drive_path_is_refused_even_under_an_allow_list(path: str) -> None:
    await WebGuardrail(egress_allow=["example.com"]).check_arguments({"file": path})


@given(
    zero=st.sampled_from(["0", "00", "0x0", "0.0.0.0", "[::]", "[0:0:0:0:0:0:0:0]"]),
    port=st.integers(60, 65535),
    scheme=st.sampled_from(["", "//", "http://", "https://"]),
)
@settings(max_examples=200, deadline=None)
async def test_every_unspecified_spelling_with_a_port_is_refused(
    zero: str, port: int, scheme: str
) -> None:
    with pytest.raises(GuardrailViolation, match=r"unspecified"):
        await WebGuardrail().check_arguments({"to": f"{scheme}{zero}:{port}/"})
