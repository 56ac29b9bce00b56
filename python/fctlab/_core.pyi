"""Type stub of fctlab's compiled engine binding (crates/py/src/lib.rs). Config in as JSON, columns out."""

from typing import final

import numpy as np
import numpy.typing as npt

__all__ = [
    "__version__",
    "defaults",
    "two_threads_worthwhile",
    "default_topology",
    "validate_config",
    "topology_info",
    "topology_kinds",
    "schemes",
    "scheme_defaults",
    "scheme_rows",
    "run",
    "ideal_fct_ns",
    "Progress",
]

__version__: str

def defaults() -> str:
    """The engine's full default configuration as JSON."""

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
    """Flows finished so far, updated by a running simulation; poll it from another thread."""

    def __init__(self) -> None: ...
    @property
    def flows_done(self) -> int: ...

def run(
    config_json: str,
    src: npt.NDArray[np.uint32],
    dst: npt.NDArray[np.uint32],
    size_bytes: npt.NDArray[np.uint64],
    start_ps: npt.NDArray[np.uint64],
    priority: npt.NDArray[np.uint8] | None = None,
    progress: Progress | None = None,
    estimate_bytes: npt.NDArray[np.uint64] | None = None,
    lower_bytes: npt.NDArray[np.uint64] | None = None,
    upper_bytes: npt.NDArray[np.uint64] | None = None,
    after_flow: npt.NDArray[np.uint32] | None = None,
    qclimb: npt.NDArray[np.bool_] | None = None,
    threads: int = 1,
    conn: npt.NDArray[np.uint32] | None = None,
    deadline_ps: npt.NDArray[np.uint64] | None = None,
    gen_rate_bps: npt.NDArray[np.uint64] | None = None,
    cached_bytes: npt.NDArray[np.uint64] | None = None,
) -> tuple[dict[str, npt.NDArray[np.generic]], str]:
    """Run one simulation (the GIL is released). Returns (result columns in flow-id order, stats JSON).

    ``after_flow[i]`` is the earlier flow that flow i waits for (0xFFFFFFFF: none); ``qclimb[i]`` False hands flow
    i to PIAS in a qclimb run; ``deadline_ps[i]`` is flow i's absolute deadline (2**64 - 1: none; after its
    start). ``gen_rate_bps[i]`` is flow i's data generation rate (0: every byte ready at its start) and
    ``cached_bytes[i]`` the bytes of it available at once (the application model). The columns include
    ``start_ps``, the actual start (2**64 - 1 if never started), ``terminated`` (a flow a deadline-aware scheme
    gave up on), ``app_done_ps`` (when its application finished writing) and ``copy_rate_bps`` (RAX's measured
    copy rate; 0 for other schemes)."""
