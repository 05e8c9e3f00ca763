from agentkit_core import open_sessions


async def test_each_open_is_its_own_store(pm) -> None:
    a, b = (
        await open_sessions("memory://", manager=pm),
        await open_sessions("memory://", manager=pm),
    )
    head = await a.create()
    assert [i.id for i in await a.sessions()] == [head.session_id]
    assert await b.sessions() == []
    await a.aclose()
    await b.aclose()
