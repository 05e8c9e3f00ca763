"""find_urls on the unspecified address (it reaches this host) and on Windows drive paths."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core._guardrails import find_urls

#: The unspecified addresses, each spelled as a tool argument may carry it, and the URL a
#: client that prepends "http://" would fetch.
UNSPECIFIED = [
    ("0:8080", "http://0:8080"),
    ("//0", "http://0"),
    ("//0/admin", "http://0/admin"),
    ("0:80/admin", "http://0:80/admin"),
    ("0.0.0.0", "http://0.0.0.0"),
    ("0.0.0.0:5432", "http://0.0.0.0:5432"),
    ("::", "http://[::]"),
    ("[::]", "http://[::]"),
    ("[::]:8080", "http://[::]:8080"),
    ("0:0:0:0:0:0:0:0", "http://[0:0:0:0:0:0:0:0]"),
    ("::ffff:0.0.0.0", "http://[::ffff:0.0.0.0]"),
    ("0x0:80", "http://0x0:80"),
    ("0X00:443", "http://0X00:443"),
    ("00:8080", "http://00:8080"),
    ("000:80", "http://000:80"),
    ("//00:30", "http://00:30"),  # given with //: a host, whatever the port
    ("0:60", "http://0:60"),  # no minute is 60
]


@pytest.mark.parametrize(("text", "url"), UNSPECIFIED)
def test_the_unspecified_address_is_a_host_in_every_spelling(text: str, url: str) -> None:
    assert list(find_urls({"target": text})) == [url]
    assert list(find_urls({"target": f"  {text}\n"})) == [url]


@pytest.mark.parametrize(
    "value",
    [
        0,  # a count: an integer never names the unspecified address
        "0",
        "00",
        "0x0",
        "0.0",
        "0/10",  # a score
        "00:30",  # times of day and durations
        "0:45",
        "00:00",
        "dead::beef",
        "std::vector",
    ],
)
def test_zero_as_data_is_not_a_host(value: Any) -> None:
    assert list(find_urls({"value": value})) == []


@pytest.mark.parametrize(
    "path",
    [
        "C:\\Users\\bob\\report.csv",
        "D:/data/x.csv",
        "c:foo",
        "C:",
        "e:\\",
        "Z:/",
        "C:\\Program Files\\app\\app.exe",
        "see C:\\\\server\\share and D://backup",
        "file saved to C:\\Users\\bob\\notes.txt at 00:30",
    ],
)
def test_a_windows_drive_path_is_not_a_url(path: str) -> None:
    assert list(find_urls({"path": path})) == []


def test_a_real_scheme_of_two_letters_still_counts() -> None:
    assert list(find_urls({"u": "ws://127.0.0.1/"})) == ["ws://127.0.0.1/"]
    assert list(find_urls({"u": "go to ab://x.example/ now"})) == ["ab://x.example/"]


drives = st.sampled_from("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz")
names = st.from_regex(r"[A-Za-z0-9_][A-Za-z0-9_ ()-]{0,11}(\.[a-z]{1,4})?", fullmatch=True)


@st.composite
def windows_paths(draw: st.DrawFn) -> str:
    """A drive-letter path: absolute or drive-relative, with either separator."""
    sep = draw(st.sampled_from(["\\", "/"]))
    parts = draw(st.lists(names, max_size=4))
    root = draw(st.sampled_from(["", sep, sep + sep]))
    return f"{draw(drives)}:{root}{sep.join(parts)}"


@given(path=windows_paths(), before=st.sampled_from(["", "open ", "saved to "]))
@settings(max_examples=300, deadline=None)
def test_no_windows_path_is_read_as_a_url(path: str, before: str) -> None:
    assert list(find_urls({"path": before + path, "list": [path]})) == []


@given(hour=st.sampled_from(["0", "00"]), minute=st.integers(0, 59))
@settings(max_examples=60, deadline=None)
def test_a_time_after_midnight_is_not_a_host(hour: str, minute: int) -> None:
    assert list(find_urls({"at": f"{hour}:{minute:02d}"})) == []


@given(
    zero=st.sampled_from(["0", "00", "000", "0x0", "0x00", "0X0"]),
    port=st.integers(60, 65535),
    slashes=st.booleans(),
    path=st.sampled_from(["", "/", "/admin?x=1"]),
)
@settings(max_examples=200, deadline=None)
def test_zero_with_a_port_or_slashes_is_always_a_host(
    zero: str, port: int, slashes: bool, path: str
) -> None:
    text = f"{'//' if slashes else ''}{zero}:{port}{path}"
    assert list(find_urls({"host": text})) == ["http://" + text.removeprefix("//")]
