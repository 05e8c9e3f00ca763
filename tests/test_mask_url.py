"""mask_url: a store URL's password never shows, whatever the URL's shape."""

from __future__ import annotations

import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from agentkit_core import ConfigError
from agentkit_core import UnknownNameError
from agentkit_core.plugin import mask_url
from agentkit_core.plugin import open_checkpoint_store

# Each URL holds the secret "S3CR3T" (or pieces of it); the masked form must hold none of it.
MALFORMED = [
    ("postgresql://app:S3CR3T@db/agents", "postgresql://app:***@db/agents"),
    ("postgresql://app:S3%zzCR3T@db/agents", "postgresql://app:***@db/agents"),  # bad escape
    ("postgresql://app:S3%CR3T@db", "postgresql://app:***@db"),
    ("postgresql://app:S3@CR3T@db/agents", "postgresql://app:***@db/agents"),  # unencoded @
    ("postgresql://app:S3/CR3T@db/agents", "postgresql://app:***@db/agents"),  # unencoded /
    ("postgresql://app:S3?CR3T@db/agents", "postgresql://app:***@db/agents"),  # unencoded ?
    ("postgresql://app:S3#CR3T@db/agents", "postgresql://app:***@db/agents"),  # unencoded #
    ("postgresql://app:S3:CR3T@db", "postgresql://app:***@db"),  # a colon in the password
    ("postgresql://a@b.c:S3CR3T@db", "postgresql://a@b.c:***@db"),  # an unencoded @ in the user
    ("postgresql://:S3CR3T@db", "postgresql://:***@db"),  # no user
    ("postgresql://app:@db", "postgresql://app:***@db"),  # an empty password
    ("postgresql://db/agents?password=S3CR3T", "postgresql://db/agents?password=***"),
    (
        "postgresql://db/agents?user=app&password=S3%zzCR3T&sslmode=require",
        "postgresql://db/agents?user=app&password=***&sslmode=require",
    ),
    ("postgresql://db?sslpassword=S3CR3T", "postgresql://db?sslpassword=***"),
    ("postgresql://db?PASSWORD=S3CR3T", "postgresql://db?PASSWORD=***"),
    ("postgresql://app:S3CR3T@[::1:5432/agents", "postgresql://app:***@[::1:5432/agents"),
    (
        "postgresql://app:S3CR3T@h1:5432,h2:5433/agents",
        "postgresql://app:***@h1:5432,h2:5433/agents",
    ),
    ("postgresql://app:S3CR3T", "postgresql://app:***"),  # no @host: the "port" is a password
    ("postgresql://app:S3:CR3T:", "postgresql://app:***"),  # ...and the port is all after ':'
    ("postgresql://app:S3?CR3T#S3", "postgresql://app:***"),  # ...up to the first '/'
    ("postgresql://app:S3#CR3T/db?x=y", "postgresql://app:***/db?x=y"),
    ("postgresql://db:5432?sslmode=require#f", "postgresql://db:5432?sslmode=require#f"),
    ("postgresql://app:S3CR3T/agents", "postgresql://app:***/agents"),
    ("app:S3CR3T@db:5432/agents", "***@db:5432/agents"),  # no scheme at all
    ("S3CR3T@db", "***@db"),
    ("host=db user=app password=S3CR3T", "host=db user=app password=***"),  # libpq key=value
    ("host=db password='S3 CR3T' port=5432", "host=db password=*** port=5432"),
    (
        "postgresql://app:S3CR3T@db/agents\nsecond line",
        "postgresql://app:***@db/agents\nsecond line",
    ),
    (
        "postgresql://app:S3CR3T@db/agents?token=S3CR3T#frag",
        "postgresql://app:***@db/agents?token=***#frag",
    ),
    ("sqlite://app:S3CR3T@/runs.db", "sqlite://app:***@/runs.db"),
    ("memory://", "memory://"),
    ("sqlite:///runs.db?synchronous=normal", "sqlite:///runs.db?synchronous=normal"),
    ("postgresql://app@db:5432/agents", "postgresql://app@db:5432/agents"),  # nothing secret
    ("postgresql://[::1]:5432/agents", "postgresql://[::1]:5432/agents"),
]


@pytest.mark.parametrize(("url", "masked"), MALFORMED)
def test_a_table_of_malformed_urls_is_masked(url: str, masked: str) -> None:
    assert mask_url(url) == masked
    for piece in ("S3CR3T", "S3", "CR3T", "zz"):
        assert piece not in mask_url(url)


def test_masking_is_idempotent_and_takes_any_value() -> None:
    for _, masked in MALFORMED:
        assert mask_url(masked) == masked
    assert mask_url(None) == "None"  # type: ignore[arg-type]
    assert "S3CR3T" not in mask_url(b"postgresql://a:S3CR3T@h")  # type: ignore[arg-type]


# A password from characters that appear nowhere else in the URL, so any leak shows.
SECRET_CHARS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ@:/?#%&=;' "
passwords = st.text(SECRET_CHARS, min_size=1, max_size=16).filter(
    lambda p: any(c.isupper() for c in p)
)


# In a query value, '&', ';', '#' and blanks end the value by the URL's own rules.
query_passwords = st.text(SECRET_CHARS.translate({ord(c): None for c in "&;#' "}), min_size=1)


@settings(max_examples=300, deadline=None)
@given(
    passwords,
    query_passwords.filter(lambda p: any(c.isupper() for c in p)),
    st.sampled_from(["postgresql://", "postgres://", "sqlite://", "", "x+y.z://"]),
    st.sampled_from(["app", "", "a@b", "ap:p"]),
    st.sampled_from(["db", "db:5432", "[::1]:5432", "h1,h2:5433", ""]),
    st.sampled_from(["", "/agents", "/agents?sslmode=require", "?pool_max=4&x=y"]),
)
def test_no_piece_of_a_password_survives(
    password: str, in_query: str, scheme: str, user: str, host: str, rest: str
) -> None:
    assume(not (scheme == "" and password.startswith("//")))  # that is a scheme and a host
    joiner = "&" if "?" in rest else "?"
    for url in (
        f"{scheme}{user}:{password}@{host}{rest}",
        f"{scheme}{host}{rest}{joiner}password={in_query}",
        f"{scheme}{user}:{password}@{host}{rest}{joiner}password={in_query}",
    ):
        masked = mask_url(url)
        leaked = [c for c in masked if c.isupper()]
        assert not leaked, (url, masked)


async def test_open_by_url_errors_show_the_url_masked(pm) -> None:
    with pytest.raises(UnknownNameError, match=r"'nosuch://app:\*\*\*@db'") as info:
        await open_checkpoint_store("nosuch://app:S3CR3T@db", manager=pm)
    assert "S3CR3T" not in str(info.value)
    with pytest.raises(UnknownNameError) as info:
        await open_checkpoint_store("app:S3CR3T@db", manager=pm)  # "app" looks like a scheme
    assert "S3CR3T" not in str(info.value)
    with pytest.raises(ConfigError, match="has no scheme") as cfg:
        await open_checkpoint_store("//app:S3CR3T@db", manager=pm)
    assert "S3CR3T" not in str(cfg.value) and "S3CR3T" not in repr(cfg.value.value)
    with pytest.raises(UnknownNameError) as info:
        await open_checkpoint_store(
            "http://app:S3CR3T@[::1/x", manager=pm
        )  # urlsplit would raise here
    assert "S3CR3T" not in str(info.value)
