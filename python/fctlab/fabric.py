"""What Python must know of the engine's wiring and of its columns, written in one place.

- :func:`host_racks`: each host's rack as the engine wires its topologies (crates/sim/src/net/mod.rs), for the
  patterns that need racks (``staggered``).
- :func:`flow_columns`: the flow input columns the engine takes (``_core.flow_columns()``, ``flows::FLOW_COLUMNS``
  in the engine): each one's dtype, whether it is required, and the entry meaning "none" for a flow.
- :data:`NEVER_PS`: the engine's "never" in its u64 picosecond columns (an unfinished flow's finish time, a flow
  without a deadline).
- :data:`NONE_U32`: the engine's "none" in its optional u32 flow columns (``after_flow``: waits for no flow;
  ``path``: routed by ECMP), read from the engine's table on first use; :func:`u32_or_none` encodes a table's -1
  as a column's "none".
"""

from __future__ import annotations

import functools
import json
from typing import Any

import numpy as np

from fctlab.config import ConfigError

__all__ = ["NEVER_PS", "NONE_U32", "flow_columns", "u32_or_none", "host_racks", "host_pods"]

#: The engine's "never" (an unfinished flow's finish time; a flow without a deadline).
NEVER_PS = np.iinfo(np.uint64).max


@functools.cache
def flow_columns() -> dict[str, dict[str, Any]]:
    """The flow input columns the engine takes, by name, in its order: each row's ``dtype`` (numpy's name),
    ``required``, ``none`` (the entry meaning "none" for one flow, or None) and ``meaning``. Read once."""
    from fctlab import _core

    return {row["name"]: row for row in json.loads(_core.flow_columns())}


def __getattr__(name: str) -> Any:
    # NONE_U32 comes from the engine's table, read when first asked for (importing this module loads no engine)
    if name == "NONE_U32":
        return np.uint32(flow_columns()["after_flow"]["none"])
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def u32_or_none(values: np.ndarray, name: str) -> np.ndarray:
    """An int64 column whose negative entries mean "none", as the engine's contiguous u32 column ``name``
    (``after_flow`` or ``path``), "none" written as that column's entry for it."""
    none = flow_columns()[name]["none"]
    return np.ascontiguousarray(np.where(values < 0, np.uint32(none), values).astype(np.uint32))


def host_racks(engine: dict[str, Any]) -> np.ndarray:
    """Each host's rack (the switch it hangs from) in the engine's topology, as the engine wires it
    (crates/sim/src/net/mod.rs): leaf_spine by ``hosts_per_leaf``, fat_tree by hosts per edge switch
    (``hosts_per_edge``, or k/2 when 0), dumbbell by side (the ``senders`` first), single_switch one rack,
    jellyfish by switch (``ports - network_ports`` hosts each). A BCube server hangs from k+1 switches; its rack
    is its level-0 switch (the servers that differ from it in the lowest address digit only, ``n`` of them)."""
    topo = engine["topology"]
    from fctlab import _core

    hosts = int(_core.topology_info(json.dumps(engine))["hosts"])
    h = np.arange(hosts, dtype=np.int64)
    kind = topo["kind"]
    if kind == "leaf_spine":
        return h // int(topo["hosts_per_leaf"])
    if kind == "fat_tree":
        return h // (int(topo["hosts_per_edge"]) or int(topo["k"]) // 2)
    if kind == "dumbbell":
        return (h >= int(topo["senders"])).astype(np.int64)
    if kind == "single_switch":
        return np.zeros(hosts, dtype=np.int64)
    if kind == "jellyfish":
        return h // (int(topo["ports"]) - int(topo["network_ports"]))
    if kind == "bcube":
        return h // int(topo["n"])
    raise ConfigError("workload.pattern", f"staggered needs to know the racks of topology.kind {kind!r}")


def host_pods(engine: dict[str, Any]) -> np.ndarray:
    """Each host's pod in the engine's topology: a fat tree's pods (k/2 edge switches of ``hosts_per_edge``
    hosts each, or k/2 when 0); a leaf-spine or a dumbbell has no tier above its racks, so a pod is a rack there
    too (every path between racks crosses the spine), and a single switch is one pod."""
    topo = engine["topology"]
    kind = topo["kind"]
    if kind == "fat_tree":
        return host_racks(engine) // (int(topo["k"]) // 2)  # k/2 edge switches (racks) per pod
    if kind in ("leaf_spine", "dumbbell", "single_switch"):
        return host_racks(engine)
    raise ConfigError("workload.pairs", f"inter_pod needs to know the pods of topology.kind {kind!r} "
                      "(fat_tree, leaf_spine, dumbbell, single_switch)")
