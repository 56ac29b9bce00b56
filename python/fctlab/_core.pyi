"""Type stub of fctlab's compiled engine binding (crates/py/src/lib.rs). Config in as JSON, columns out."""

from collections.abc import Callable
from typing import final

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "defaults",
    "config_schema",
    "two_threads_worthwhile",
    "default_topology",
    "validate_config",
    "topology_info",
    "topology_kinds",
    "schemes",
    "scheme_defaults",
    "scheme_rows",
    "flow_columns",
    "run",
    "check_flows",
    "ideal_fct_ns",
    "fabric_scale",
    "tier_loads",
    "Progress",
]

__version__: str

def defaults() -> str:
    """The engine's full default configuration as JSON."""

def config_schema() -> str:
    """The JSON Schema of the engine's config sections: each key's type, description, default and allowed
    values."""

def two_threads_worthwhile(config_json: str) -> bool:
    """Whether two engine threads would speed up a run of this config (the engine's own rule)."""

def default_topology(kind: str) -> str:
    """Default parameters of one topology kind as JSON."""

def validate_config(config_json: str) -> str:
    """Parse and check a config (ranges, the built fabric, the level); return it with defaults filled.
    Raises ValueError("key: why")."""

def topology_info(config_json: str) -> dict[str, object]:
    """hosts, host_link_bps and kind of a config's topology."""

def ideal_fct_ns(
    config_json: str,
    src: npt.NDArray[np.uint32],
    dst: npt.NDArray[np.uint32],
    size_bytes: npt.NDArray[np.uint64],
) -> npt.NDArray[np.float64]:
    """Each flow's ideal FCT in ns (alone in the idle fabric, on its ECMP path, no handshake)."""

def fabric_scale(config_json: str) -> dict[str, object]:
    """The fabric's yardsticks: base_rtt_ns (the longest base RTT), hops (ports of its path), bdp_bytes and
    bdp_packets (its bandwidth-delay product, in bytes and in full-size packets)."""

def tier_loads(
    config_json: str,
    src: npt.NDArray[np.uint32],
    dst: npt.NDArray[np.uint32],
    size_bytes: npt.NDArray[np.uint64],
    span_ns: float,
) -> tuple[list[tuple[str, int, float, float]], int]:
    """Offered load per tier of links for these flows arriving over span_ns: (tier, ports, mean, most loaded
    port); and the data packets' port crossings on their ECMP paths."""

def topology_kinds() -> list[str]:
    """The topology kinds the engine builds."""

def schemes() -> list[tuple[str, str]]:
    """(name, description) of every scheme the engine runs."""

def scheme_rows() -> str:
    """Every scheme's row as a JSON list: name, summary, family, protocol, tagging, rank_queue, flow_level,
    window, setup_rtts, needs_thresholds, presets, keys, and tcp_kind (the transport.kind it runs, or null)."""

def scheme_defaults(name: str, preset: str = "native") -> str:
    """The full config (JSON) a scheme runs with when nothing else is given."""

@final
class Progress:
    """Flows finished so far and the simulated time reached, updated by a running simulation (at either level);
    poll it from another thread."""

    def __init__(self) -> None: ...
    @property
    def flows_done(self) -> int: ...
    @property
    def sim_time_ps(self) -> int: ...

def flow_columns() -> str:
    """The flow input columns ``run`` takes, as a JSON list of rows: name, dtype ("uint32", "uint64", "uint8" or
    "bool"), required, none (the entry meaning "none" for one flow, or null) and meaning."""

def check_flows(
    config_json: str, columns: dict[str, npt.NDArray[np.generic]]
) -> tuple[str, int | None, str | None, str | None] | None:
    """Check flow columns (as ``run`` takes them) against a config as a run would before it simulates anything:
    None when a run would accept them, else (message, flow id or None, column or None, the fault said of that
    cell alone or None). Raises ValueError for a bad config or a column of the wrong name or dtype."""

def run(
    config_json: str,
    columns: dict[str, npt.NDArray[np.generic]],
    progress: Progress | None = None,
    threads: int = 1,
    on_batch: Callable[[int, dict[str, npt.NDArray[np.generic]]], object] | None = None,
    batch_rows: int = 65_536,
) -> tuple[dict[str, npt.NDArray[np.generic]], str]:
    """Run one simulation (the GIL is released). Returns (result columns in flow-id order, stats JSON).

    With ``on_batch``, the result columns go to ``on_batch(first, columns)`` instead, in batches of
    ``batch_rows`` flows in flow-id order (``first``: the batch's first flow id; the last batch shorter, one empty
    batch for no flows), and the returned dict is empty. The flow level calls it while it runs, as soon as a
    batch's flows and every flow before them have finished or been given up, so it never holds the whole
    columns; the packet level calls it from its whole columns once the run has ended. It is called on the
    thread that called ``run``, holding the GIL; an exception it raises ends the run and is raised from ``run``.

    ``columns`` maps each flow input column's name (``flow_columns()``) to a 1-D array of its dtype: src, dst,
    size_bytes and start_ps are required, the others optional. ``after_flow[i]`` is the earlier flow that flow i
    waits for; ``qclimb[i]`` False hands flow i to PIAS in a qclimb run; ``deadline_ps[i]`` is flow i's absolute
    deadline (after its start). ``gen_rate_bps[i]`` is flow i's data generation rate and ``cached_bytes[i]`` the
    bytes of it available at once (the application model); ``path[i]`` its source route. An unknown name, a
    missing required column, a wrong dtype or a length that differs from src's raises ValueError naming the
    column. The result columns include ``start_ps``, the actual start (2**64 - 1 if never started),
    ``terminated`` (a flow a deadline-aware scheme gave up on), ``app_done_ps`` (when its application finished
    writing), ``copy_rate_bps`` (RAX's measured copy rate; 0 for other schemes) and, for the TCP family at the
    packet level only, ``data_arrivals`` (data packets that reached the receiver host) and ``queue_delay_ps``
    (their time in queues, summed)."""
