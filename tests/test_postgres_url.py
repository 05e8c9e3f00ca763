"""PostgresPool's URL: the password goes to libpq as a keyword and never shows, whatever the shape.

No server: the URL is taken apart at ``from_url``, and a refused connection (a port bound but
never listened on) is enough to see what the errors of a first call say. The PostgreSQL
plugins' own tests run the same code against a real server.
"""

from __future__ import annotations

import asyncio
import logging
import socket
from collections.abc import Iterator
from contextlib import contextmanager
from urllib.parse import quote

import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from psycopg.conninfo import conninfo_to_dict

from agentkit_core import AgentkitError
from agentkit_core import ConfigError
from agentkit_core import StorageError
from agentkit_core.stores import PostgresPool


def no_schema(table: str) -> tuple[str, ...]:
    return ()


def open_pool(url: str) -> PostgresPool:
    return PostgresPool.from_url(url, what="checkpoint", table="t", schema=no_schema)


def libpq_params(url: str) -> dict[str, str]:
    """What libpq connects with: the pool's conninfo, parsed back."""
    return {k: str(v) for k, v in conninfo_to_dict(open_pool(url).conninfo).items()}


@contextmanager
def refused_port() -> Iterator[int]:
    """A port bound but never listened on, so a connect to it is refused for sure."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        yield int(sock.getsockname()[1])


def everything_said(exc: BaseException | None) -> str:
    """An error and its whole chain (suppressed context too), with our errors' attributes."""
    said = []
    while exc is not None:
        said += [str(exc), repr(exc)]
        if isinstance(exc, AgentkitError):
            said.append(repr(vars(exc)))
        exc = exc.__cause__ or exc.__context__
    return "\n".join(said)


# --------------------------------------------------------------------------- what libpq gets

passwords = st.text(st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=24).filter(
    lambda p: "\x00" not in p
)


def as_typed(password: str) -> str:
    """The password as a person types it in the userinfo: only ``%`` and ``/`` encoded."""
    return password.replace("%", "%25").replace("/", "%2F")


@settings(max_examples=200, deadline=None)
@given(passwords, st.sampled_from(["app", "a%40b", ""]), st.sampled_from(["", "?sslmode=prefer"]))
@example("p@ss:w?rd#%+ é", "app", "")
@example("@@", "app", "?sslmode=prefer")
@example("", "app", "")
def test_every_password_reaches_libpq_exactly(password: str, user: str, query: str) -> None:
    host = "db.internal:5432,[::1]:5433/agents"
    encoded = quote(password, safe="")
    joiner = "&" if query else "?"
    for url in (
        f"postgresql://{user}:{encoded}@{host}{query}",
        f"postgres://{user}:{as_typed(password)}@{host}{query}",
        f"postgresql://{user}@{host}{query}{joiner}password={encoded}",
    ):
        params = libpq_params(url)
        assert params["password"] == password, url
        assert params.get("user", "") == user.replace("%40", "@")
        assert (params["host"], params["port"], params["dbname"]) == (
            "db.internal,::1",
            "5432,5433",
            "agents",
        )


def test_sslpassword_and_the_rest_of_the_query_reach_libpq_as_libpq_reads_them() -> None:
    params = libpq_params(
        "postgresql://app@db/agents?sslpassword=k%2By+z&application_name=a%20b+c"
        "&options=-c%20x%3Dy&synchronous_commit=off&connect_timeout=3&pool_max=2"
    )
    assert params["sslpassword"] == "k+y+z"  # '+' is a plus, as libpq reads a URL
    assert params["application_name"] == "a b+c"
    assert params["options"] == "-c x=y -c synchronous_commit=off"
    assert params["connect_timeout"] == "3"
    assert "pool_max" not in params and "synchronous_commit" not in params
    assert libpq_params("postgresql://db/agents")["connect_timeout"] == "10"


def test_an_at_sign_after_the_host_is_plain_without_a_colon_before_it() -> None:
    params = libpq_params("postgresql://app@db/x?application_name=a@b&password=p@ss")
    assert (params["application_name"], params["password"]) == ("a@b", "p@ss")
    assert libpq_params("postgresql://db/x?application_name=a@b")["application_name"] == "a@b"
    assert libpq_params("postgresql://app:pw@db/x?application_name=a%40b")["password"] == "pw"


def test_the_password_in_the_query_wins_over_the_userinfo() -> None:
    assert libpq_params("postgresql://app:first@db/x?password=second")["password"] == "second"


# --------------------------------------------------------------------------- what is refused


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("postgresql://app:Hunter2%zzQq@db/x", r"the password has a '%' not followed by two hex"),
        ("postgresql://app:Hunter2Qq%@db/x", r"the password has a '%' not followed"),
        ("postgresql://app:Hunter2%ffQq@db/x", r"the password is not UTF-8 once percent-decoded"),
        ("postgresql://app:Hunter2%00Qq@db/x", r"the password holds a NUL"),
        ("postgresql://db/x?password=Hunter2%zQq", r"the password parameter has a '%'"),
        ("postgresql://db/x?sslpassword=Hunter2%Qq", r"the sslpassword parameter has a '%'"),
        ("postgresql://app:Hunter2/Qq@db/x", r"an '@' after the first '/'.* %2F"),
        ("postgresql://app:Hunter2/?Qq@db/x", r"an '@' after the first '/'.* %2F"),
        ("postgresql://app:Hunter2Qq@db/x?application_name=a@b", r"an '@' after the host as %40"),
        ("postgresql://app:12/?Hunter2Qq@db/x", r"an '@' after the first '/'"),  # 12 a port?
        ("postgresql://app:Hunter2Qq", r"its port is not a number"),  # the password as a port
        ("postgresql://app:Hunter2Qq/x", r"its port is not a number"),
        ("postgresql://app:Hunter2%zzQq", r"its port is not a number"),
        ("postgresql://app:Hunter2Qq@db:fifty/x", r"its port is not a number"),
        ("postgresql://app:Hunter2Qq@[::1]:fifty/x", r"its port is not a number"),
        ("postgresql://app:Hunter2Qq@db/x?port=fifty", r"its port is not a number"),
        ("mysql://app:Hunter2Qq@db/x", r"the scheme must be postgresql:// or postgres://"),
        ("app:Hunter2Qq@db/x", r"the scheme must be"),
        ("postgresql://app:Hunter2Qq@db/x?colour=blue", r"libpq refuses it .*colour"),
        ("postgresql://app:Hunter2Qq@db/x?pool_max=0", r"pool_max=0 must be at least 1"),
    ],
)
def test_bad_urls_are_config_errors_that_never_quote_the_password(url: str, message: str) -> None:
    with pytest.raises(ConfigError, match=message) as info:
        open_pool(url)
    said = everything_said(info.value)
    assert "checkpoint store URL" in said
    for piece in ("Hunter2", "Qq", "zz"):
        assert piece not in said, said


def test_a_url_that_is_not_a_string_is_masked_too() -> None:
    with pytest.raises(ConfigError, match="must be a string") as info:
        open_pool(b"postgresql://app:Hunter2Qq@db/x")  # type: ignore[arg-type]
    assert "Hunter2" not in everything_said(info.value)


# --------------------------------------------------------------------------- nothing shows it

#: Letters that appear in no template, option, error message or libpq message used here: a
#: password made of them (and the URL's reserved characters) shows wherever a piece of it leaks.
MARK = "JKVWXYZ"
# Each shape with the characters its password may hold: in a query value '&', ';', '#' and
# blanks end the value, and without a '@host' an '@' would start the host and a '/' the path.
RESERVED = "@:/?#%&=;' +"
SHAPES = [
    ("postgresql://app:{pw}@127.0.0.1:{port}/db", RESERVED),
    ("postgresql://app:{pw}@127.0.0.1:{port}/db?application_name=a@b", RESERVED),
    ("postgresql://app:{pw}@127.0.0.1:{port}/db?colour=blue", RESERVED),
    ("postgresql://app:{pw}@127.0.0.1:{port},[::1/db", RESERVED),
    ("postgresql://app:{pw}@[::1:{port}/db", RESERVED),
    ("postgres://:{pw}@127.0.0.1:{port}/db?pool_max=0", RESERVED),
    ("postgresql://app:{pw}", RESERVED.replace("@", "").replace("/", "")),
    ("postgresql://app:{pw}/db", RESERVED.replace("@", "").replace("/", "")),
    ("postgresql://app@127.0.0.1:{port}/db?password={pw}", "@:/?%=+"),
    ("postgresql://127.0.0.1:{port}/db?user=app&sslpassword={pw}&sslmode=disable", "@:/?%=+"),
    ("postgresql://app:{pw}@127.0.0.1:{port}/db?password={pw}", "@:/?%=+"),
]


@st.composite
def shapes_and_passwords(draw: st.DrawFn) -> tuple[str, str]:
    shape, alphabet = draw(st.sampled_from(SHAPES))
    password = draw(st.text(MARK + alphabet, min_size=1, max_size=12))
    return shape, draw(st.sampled_from(MARK)) + password


@settings(max_examples=150, deadline=None)
@given(shapes_and_passwords())
@example(("postgresql://app:{pw}@127.0.0.1:{port}/db", "JK%zzVW"))
@example(("postgresql://app:{pw}", "J%zzK"))
@example(("postgresql://app:{pw}", "J:K:"))
def test_no_shape_shows_its_password_in_errors_reprs_or_logs(
    shape_and_password: tuple[str, str],
) -> None:
    shape, password = shape_and_password
    said = asyncio.run(what_is_said(shape.replace("{pw}", password)))
    assert not any(c in MARK for c in said), said


# Each URL carries the password "Hunter2Qq" (or pieces of it); none may show anywhere.
SECRET_SHAPES = [
    "postgresql://app:Hunter2%zzQq@127.0.0.1:{port}/db",  # a bad percent-escape
    "postgresql://app:Hunter2%Qq@127.0.0.1:{port}/db",
    "postgresql://app:Hunter2Qq%@127.0.0.1:{port}/db",
    "postgresql://app:Hunter2%ffQq@127.0.0.1:{port}/db",  # not UTF-8 once decoded
    "postgresql://app:Hunter2@Qq@127.0.0.1:{port}/db",  # an unencoded @
    "postgresql://app:Hunter2@@Qq@127.0.0.1:{port}/db",
    "postgresql://app:Hunter2/Qq@127.0.0.1:{port}/db",  # an unencoded /
    "postgresql://app:Hunter2?Qq@127.0.0.1:{port}/db",  # an unencoded ?
    "postgresql://app:Hunter2#Qq@127.0.0.1:{port}/db",  # an unencoded #
    "postgresql://app:Hunter2:Qq@127.0.0.1:{port}/db",  # a colon
    "postgresql://app:Hunter2Qq@[::1:{port}/db",  # a broken IPv6 host
    "postgresql://app:Hunter2Qq@127.0.0.1:{port},[::1/db",
    "postgresql://app:Hunter2Qq",  # no host: libpq would read the password as the port
    "postgresql://app:Hunter2%zzQq",
    "postgresql://app:Hunter2Qq/db",
    "postgresql://127.0.0.1:{port}/db?password=Hunter2%zzQq",
    "postgresql://127.0.0.1:{port}/db?password=Hunter2@Qq",
    "postgresql://127.0.0.1:{port}/db?user=app&password=Hunter2Qq&sslmode=disable",
    "postgresql://127.0.0.1:{port}/db?sslpassword=Hunter2%zzQq",
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db?colour=blue",  # libpq refuses the option
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db?sslmode=bogus",
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db?pool_max=0",
    "postgresql://app:Hunter2Qq@127.0.0.1:{port}/db",  # well-formed: the connection is refused
    "postgresql://app:Hunter2@Qq@127.0.0.1:{port}/db?application_name=a@b",
]


@pytest.mark.parametrize("shape", SECRET_SHAPES)
async def test_a_table_of_shapes_shows_no_piece_of_its_password(shape: str) -> None:
    said = await what_is_said(shape)
    for piece in ("Hunter2", "Qq", "zz"):
        assert piece not in said, said


async def what_is_said(shape: str) -> str:
    """Every message a pool on the URL gives: its repr, its errors, the log lines meanwhile.

    ``{port}`` in ``shape`` becomes a port nobody listens on.
    """
    said: list[str] = []
    logger = logging.getLogger()
    handler = Collect(said)
    logger.addHandler(handler)
    level, logger.level = logger.level, logging.DEBUG
    try:
        with refused_port() as port:
            try:
                pool = open_pool(shape.replace("{port}", str(port)))
            except ConfigError as exc:
                return everything_said(exc)
            said += [repr(pool), pool.url]
            try:
                await pool.fetch("SELECT 1", (), "reading")
            except StorageError as exc:
                said.append(everything_said(exc))
            else:
                raise AssertionError("a refused port answered")
            finally:
                await pool.aclose()
    finally:
        logger.removeHandler(handler)
        logger.level = level
    return "\n".join(said)


class Collect(logging.Handler):
    def __init__(self, into: list[str]) -> None:
        super().__init__(logging.DEBUG)
        self.into = into

    def emit(self, record: logging.LogRecord) -> None:
        self.into.append(record.getMessage())
