"""Bad executor options are refused where they are given, naming the value and the fix."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agentkit_core import Agent
from agentkit_core import ConfigError
from agentkit_core import Kit
from agentkit_core import StorageError
from agentkit_core.testing import TestModel


def test_kit_builds_the_dbos_executor_from_its_options(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'runs.sqlite'}"
    kit = Kit(model=TestModel(), executor="dbos", executor_options={"database": url, "queue": "q"})
    executor = kit.config().executor
    assert executor is not None and executor.name == "dbos"
    assert (executor.database, executor.queue) == (url, "q")  # type: ignore[attr-defined]


def test_a_misspelt_option_is_named_with_the_options_there_are() -> None:
    with pytest.raises(ConfigError, match=r"'databse'.*the options are: database, queue"):
        Kit(model=TestModel(), executor="dbos", executor_options={"databse": "sqlite:///x"})


@pytest.mark.parametrize(
    ("options", "named"),
    [
        ({"database": "mysql://db/runs"}, "mysql://db/runs"),
        ({"concurrency": 0}, "concurrency"),
        ({"queue": ""}, "queue"),
        ({"step_timeout": -1}, "step_timeout"),
    ],
)
def test_a_bad_value_is_named(options: dict[str, object], named: str) -> None:
    with pytest.raises(ConfigError, match=named):
        Kit(model=TestModel(), executor="dbos", executor_options=options)


def test_agent_run_outside_a_workflow_says_how_to_start_one(tmp_path: Path) -> None:
    kit = Kit(
        model=TestModel(),
        tools=[],
        executor="dbos",
        executor_options={"database": f"sqlite:///{tmp_path / 'r.sqlite'}"},
    )
    agent = Agent.from_config(kit.config())
    with pytest.raises(ConfigError, match=r"outside a DBOS workflow.*executor.run"):
        asyncio.run(agent.run("hello"))


UNREACHABLE = "postgresql://nobody:secret@127.0.0.1:1/runs"


def test_a_database_that_cannot_be_reached_is_named_without_its_password() -> None:
    from agentkit_executor_dbos import DBOSExecutor

    executor = DBOSExecutor(database=UNREACHABLE)
    with pytest.raises(StorageError, match=r"postgresql://nobody:\*\*\*@127.0.0.1:1/runs") as info:
        asyncio.run(executor.submit("hello"))
    assert "secret" not in str(info.value) and "sqlalche.me" not in str(info.value)
    agent = Agent("a", TestModel(), executor=executor)
    # a run opens the database before DBOS launches, so it fails the same way, in one line
    opening = r"cannot open the DBOS database postgresql://nobody:\*\*\*@"
    with pytest.raises(StorageError, match=opening):
        asyncio.run(executor.run(agent, "hello"))
    executor.close()


def test_an_unknown_run_is_a_storage_lookup_error_that_survives_pickling() -> None:
    import pickle

    from agentkit_executor_dbos import RunNotFound

    error = RunNotFound.of("r-1", UNREACHABLE)
    assert isinstance(error, StorageError) and isinstance(error, LookupError)
    back = pickle.loads(pickle.dumps(error))
    assert (type(back), str(back), back.run_id) == (RunNotFound, str(error), "r-1")
    assert back.database == "postgresql://nobody:***@127.0.0.1:1/runs" and "secret" not in str(back)
