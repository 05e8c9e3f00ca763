"""The one plugin order: before/after constraints, then an explicit list, priority and name.

Nothing about how plugins were found (install order, ``sys.path``, directory order, hash seed)
enters the sort, so the same set of plugins always comes out in the same order.
"""

from __future__ import annotations

import heapq
import itertools
from collections.abc import Sequence

from ._discovery import PluginInfo
from ._errors import PluginOrderError


def read_declarations(info: PluginInfo) -> None:
    obj = info.obj
    priority = getattr(obj, "AGENTKIT_PRIORITY", 0)
    if not isinstance(priority, int) or isinstance(priority, bool):
        raise TypeError(f"AGENTKIT_PRIORITY must be an int, got {priority!r}")
    info.priority = priority
    for attr in ("AGENTKIT_BEFORE", "AGENTKIT_AFTER"):
        names = getattr(obj, attr, ())
        names = (names,) if isinstance(names, str) else tuple(names)
        if not all(isinstance(n, str) for n in names):
            raise TypeError(f"{attr} must name plugins, got {names!r}")
        setattr(info, attr[len("AGENTKIT_") :].lower(), names)


def resolve_order(
    infos: list[PluginInfo], order: Sequence[str] = (), order_source: str = "order"
) -> list[PluginInfo]:
    """Topological order by before/after; ties: the explicit ``order`` list, priority, name.

    Plugins named in ``order`` come first, in that order, and their before/after declarations
    about each other are replaced by it; constraints to plugins outside the list still hold.
    """
    by_name = {i.name: i for i in infos}
    listed = [n for n in dict.fromkeys(order) if n in by_name]
    rank = {n: idx for idx, n in enumerate(listed)}
    edges: dict[str, set[str]] = {n: set() for n in by_name}
    for info in infos:
        for other in info.before:
            if other in by_name:
                edges[info.name].add(other)
        for other in info.after:
            if other in by_name:
                edges[other].add(info.name)
    for name in listed:
        edges[name] -= set(listed)
    for first, then in itertools.pairwise(listed):
        edges[first].add(then)

    def key(name: str) -> tuple[int, int, str]:
        if name in rank:
            return (0, rank[name], name)
        return (1, -by_name[name].priority, name)

    indegree = dict.fromkeys(by_name, 0)
    for targets in edges.values():
        for t in targets:
            indegree[t] += 1
    heap = [key(n) for n, d in indegree.items() if d == 0]
    heapq.heapify(heap)
    out: list[PluginInfo] = []
    while heap:
        name = heapq.heappop(heap)[2]
        out.append(by_name[name])
        for t in edges[name]:
            indegree[t] -= 1
            if indegree[t] == 0:
                heapq.heappush(heap, key(t))
    if len(out) != len(infos):
        cycle = _find_cycle({n for n, d in indegree.items() if d > 0}, edges)
        raise PluginOrderError(
            f"plugin order constraints form a cycle: {' -> '.join(cycle)}; remove one of their "
            f"before=/after= declarations, or list them in an explicit order ({order_source})",
            plugin=cycle[0],
        )
    return out


def _find_cycle(stuck: set[str], edges: dict[str, set[str]]) -> list[str]:
    """One cycle among the nodes a topological sort could not place, smallest name first."""
    start = min(stuck)
    path, index = [start], {start: 0}
    while True:
        nxt = min(t for t in edges[path[-1]] if t in stuck)
        if nxt in index:
            cycle = path[index[nxt] :]
            pivot = cycle.index(min(cycle))
            cycle = cycle[pivot:] + cycle[:pivot]
            return [*cycle, cycle[0]]
        index[nxt] = len(path)
        path.append(nxt)
