"""Traffic patterns: one generator per pattern, each listed once in :data:`PATTERNS`.

A generator takes its arguments by keyword and a ``numpy.random.Generator``, draws from it in the fixed order
its docstring gives (that order is part of the contract: changing it changes every seeded experiment), and
returns the table as :class:`~fctlab.workloads.table.FlowColumns`, which needs numpy alone. The public
functions of the same names (:func:`all_to_all`, ...) are the same generators returning a DataFrame;
:func:`generate` draws a pattern from an experiment's workload keys, as a run does.
"""

from __future__ import annotations

import functools
import inspect
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from fctlab.workloads.cdf import Cdf, UniformSizes, check_sizes
from fctlab.workloads.checks import (
    U32_MAX,
    WorkloadError,
    check_int,
    check_load,
    check_nonnegative,
    check_positive,
    check_rng,
)
from fctlab.workloads.table import FlowColumns, build_table

if TYPE_CHECKING:
    import pandas as pd

__all__ = [
    "Pattern", "PATTERNS", "generate", "all_to_all", "permutation", "incast", "aggregation", "stride", "staggered",
]

_PS_PER_S = 1e12


def _check_host_list(what: str, hosts_list: Sequence[int] | None, hosts: int) -> np.ndarray:
    if hosts_list is None:
        return np.arange(hosts, dtype=np.int64)
    vals = [check_int(f"{what}[{k}]", h, minimum=0, maximum=hosts - 1) for k, h in enumerate(hosts_list)]
    if not vals:
        raise WorkloadError(f"{what} must not be empty")
    if len(set(vals)) != len(vals):
        raise WorkloadError(f"{what} has repeated hosts")
    return np.array(vals, dtype=np.int64)


def _poisson_starts_ps(rng: np.random.Generator, rate_hz: float, n: int) -> np.ndarray:
    """n arrival times (integer ps) of a Poisson process of the given rate, the first one gap after t = 0."""
    # Gaps are rounded to whole picoseconds and summed as integers, so the clock never drifts by float error.
    gaps = np.rint(rng.exponential(_PS_PER_S / rate_hz, n)).astype(np.int64)
    return np.cumsum(gaps, dtype=np.int64)


def _arrival_rate_hz(load: float, host_link_bps: float, n_senders: int, cdf: Cdf) -> float:
    # lambda = rho x (host link rate) x (number of senders) / (8 x mean flow size) (docs/experiment.md)
    return load * host_link_bps * n_senders / (8.0 * cdf.mean_bytes)


def _all_to_all(
    *,
    hosts: int,
    cdf: Cdf,
    load: float,
    host_link_bps: float,
    flows: int,
    rng: np.random.Generator,
    senders: list[int] | None = None,
    receivers: list[int] | None = None,
    groups: Sequence[int] | np.ndarray | None = None,
) -> FlowColumns:
    """All-to-all traffic: Poisson flow arrivals at the offered load of docs/experiment.md.

    Aggregate rate ``lambda = load * host_link_bps * len(senders) / (8 * cdf.mean_bytes)``, i.e. ``load`` is the
    mean offered load on each sender's uplink (with fewer receivers than senders, the receivers' downlinks see
    more). Each flow picks its source uniformly among ``senders`` and its destination uniformly among
    ``receivers`` other than the source; sizes come from ``cdf.sample``. The first flow starts one exponential
    gap after t = 0.

    One global Poisson process whose flows pick a uniform (src, dst) pair is the same process, in distribution,
    as the ns-2 scripts' independent Poisson process per host pair at ``lambda / pairs`` each: the superposition
    of independent Poisson processes is Poisson, and each arrival belongs to a pair with probability
    proportional to that pair's rate (Poisson splitting/merging).

    ``groups`` (one group id per host, e.g. each host's rack or pod) keeps every flow between groups: the
    destination is uniform among the receivers outside the source's group, as the HyLine authors' scripts draw
    only inter-pod pairs (a Poisson process per ordered pair of hosts in different pods). ``load`` still counts
    each sender's uplink: the rate above is unchanged, so a scheme's scripts that give each pair
    ``lambda / (hosts - 1)`` offer ``load x (receivers outside the group) / (hosts - 1)``; give that load to run
    theirs.

    Random draws, in order: gaps, sources, destinations, sizes.
    """
    hosts = check_int("hosts", hosts, minimum=2, maximum=U32_MAX)
    cdf = check_sizes(cdf)
    load = check_load(load)
    host_link_bps = check_positive("host_link_bps", host_link_bps)
    flows = check_int("flows", flows, minimum=1, maximum=U32_MAX)
    rng = check_rng(rng)
    snd = _check_host_list("senders", senders, hosts)
    rcv = _check_host_list("receivers", receivers, hosts)
    if len(rcv) == 1 and rcv[0] in snd:
        raise WorkloadError(f"receivers: sender {int(rcv[0])} has no receiver other than itself")

    rate = _arrival_rate_hz(load, host_link_bps, len(snd), cdf)
    if groups is not None:
        return _all_to_all_between_groups(rng, hosts, snd, rcv, groups, rate, flows, cdf)
    start = _poisson_starts_ps(rng, rate, flows)
    src = snd[rng.integers(0, len(snd), flows)]
    # Position of each source among the receivers (-1 if it is not one); draw among the others and skip it.
    where = np.full(hosts, -1, dtype=np.int64)
    where[rcv] = np.arange(len(rcv))
    pos = where[src]
    k = rng.integers(0, len(rcv) - (pos >= 0), flows)
    k += (pos >= 0) & (k >= pos)
    dst = rcv[k]
    del pos, k  # (freed before the sizes' draw: a large workload's memory peaks there)
    size = cdf.sample(rng, flows)
    return build_table(src, dst, size, start)


def _all_to_all_between_groups(rng: np.random.Generator, hosts: int, snd: np.ndarray, rcv: np.ndarray,
                               groups: Sequence[int] | np.ndarray, rate: float, flows: int, cdf: Cdf) -> FlowColumns:
    """:func:`_all_to_all` with every destination outside its source's group (same draws, same order)."""
    group = np.asarray(groups, dtype=np.int64)
    if group.shape != (hosts,):
        raise WorkloadError(f"groups must give one group per host ({hosts}), got {group.shape[0] if group.ndim else 0}")
    # receivers sorted by group: group g's receivers hold the positions [first[g], first[g] + count[g])
    order = rcv[np.argsort(group[rcv], kind="stable")]
    ids, first_of, count_of = np.unique(group[order], return_index=True, return_counts=True)
    at = np.searchsorted(ids, group[snd])
    known = (at < len(ids)) & (ids[np.minimum(at, len(ids) - 1)] == group[snd])
    first = np.where(known, first_of[np.minimum(at, len(ids) - 1)], 0)
    count = np.where(known, count_of[np.minimum(at, len(ids) - 1)], 0)
    others = len(rcv) - count  # per sender (in snd order): receivers outside its group
    if others.min() < 1:
        raise WorkloadError(f"sender {int(snd[np.argmin(others)])} has no receiver outside its own group")
    start = _poisson_starts_ps(rng, rate, flows)
    pick = rng.integers(0, len(snd), flows)
    src = snd[pick]
    k = rng.integers(0, others[pick], flows)
    k += np.where(k >= first[pick], count[pick], 0)  # skip the source's group
    dst = order[k]
    size = cdf.sample(rng, flows)
    return build_table(src, dst, size, start)


def _together_starts_ps(rng: np.random.Generator, n: int, start_spread_ns: float) -> np.ndarray:
    """Starts of ``n`` flows that arrive together: all at t = 0, or uniform on the integer picoseconds of
    [0, spread) when ``start_spread_ns`` > 0 (drawn only then)."""
    spread = check_nonnegative("start_spread_ns", start_spread_ns)
    spread_ps = int(round(spread * 1000.0))
    if spread_ps <= 0:
        return np.zeros(n, dtype=np.int64)
    return rng.integers(0, spread_ps, n, dtype=np.int64)


def _arrivals(
    rng: np.random.Generator,
    *,
    hosts: int,
    flows: int,
    sizes: Cdf | UniformSizes,
    load: float | None,
    host_link_bps: float | None,
    start_spread_ns: float,
) -> tuple[np.ndarray, np.ndarray]:
    """(start_ps, src) of the host-to-host patterns (permutation, stride, staggered). With ``load``: Poisson
    arrivals at the rate of all-to-all traffic over every host (``lambda = load x host_link_bps x hosts / (8 x
    mean size)``) and a uniform source per flow (draws: gaps, sources). Without: the flows arrive together
    (:func:`_together_starts_ps`; draws: starts, only with a spread) and flow ``j`` comes from host
    ``j mod hosts``, so every host sends floor(flows / hosts) or ceil(flows / hosts) of them."""
    if load is not None:
        load = check_load(load)
        if host_link_bps is None:
            raise WorkloadError("host_link_bps is required when load is given")
        host_link_bps = check_positive("host_link_bps", host_link_bps)
        if start_spread_ns:
            raise WorkloadError("start_spread_ns is for flows that arrive together, not with a load")
        start = _poisson_starts_ps(rng, _arrival_rate_hz(load, host_link_bps, hosts, sizes), flows)
        return start, rng.integers(0, hosts, flows)
    start = _together_starts_ps(rng, flows, start_spread_ns)
    return start, np.arange(flows, dtype=np.int64) % hosts


def _aggregation(
    *,
    hosts: int,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    receiver: int = 0,
    senders: Sequence[int] | None = None,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """Query aggregation (the PDQ paper's §5.2-5.3 "Aggregation", after D3): ``flows`` flows from ``senders``
    (default: every host but the receiver) to one ``receiver``, all starting at t = 0 (or uniformly within
    ``start_spread_ns``). Flow ``j`` comes from ``senders[j mod n]``, so each of the n senders has
    floor(flows / n) or ceil(flows / n) flows (the first ``flows mod n`` senders one more).

    Random draws, in order: starts (only with a spread), sizes.
    """
    hosts = check_int("hosts", hosts, minimum=2, maximum=U32_MAX)
    sizes = check_sizes(sizes)
    flows = check_int("flows", flows, minimum=1, maximum=U32_MAX)
    rng = check_rng(rng)
    receiver = check_int("receiver", receiver, minimum=0, maximum=hosts - 1)
    if senders is None:
        snd = np.array([h for h in range(hosts) if h != receiver], dtype=np.int64)
    else:
        snd = _check_host_list("senders", senders, hosts)
        if receiver in snd:
            raise WorkloadError(f"senders: lists the receiver ({receiver}), which cannot send to itself")
    start = _together_starts_ps(rng, flows, start_spread_ns)
    size = sizes.sample(rng, flows)
    src = snd[np.arange(flows) % len(snd)]
    return build_table(src, np.full(flows, receiver, dtype=np.int64), size, start)


def _stride(
    *,
    hosts: int,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    stride: int,
    load: float | None = None,
    host_link_bps: float | None = None,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """Stride(i) (PDQ §5.3, after Hedera): host ``x`` sends to host ``(x + stride) mod hosts``. Flows arrive
    together or at ``load`` (:func:`_arrivals`).

    Random draws, in order: the arrivals, sizes.
    """
    hosts = check_int("hosts", hosts, minimum=2, maximum=U32_MAX)
    sizes = check_sizes(sizes)
    flows = check_int("flows", flows, minimum=1, maximum=U32_MAX)
    rng = check_rng(rng)
    stride = check_int("stride", stride, minimum=1)
    if stride % hosts == 0:
        raise WorkloadError(f"stride must not be a multiple of the number of hosts ({hosts}), got {stride}: "
                            "every host would send to itself")
    start, src = _arrivals(rng, hosts=hosts, flows=flows, sizes=sizes, load=load, host_link_bps=host_link_bps,
                           start_spread_ns=start_spread_ns)
    size = sizes.sample(rng, flows)
    return build_table(src, (src + stride) % hosts, size, start)


def _staggered(
    *,
    hosts: int,
    racks: Sequence[int] | np.ndarray,
    sizes: Cdf | UniformSizes,
    flows: int,
    rng: np.random.Generator,
    p: float,
    load: float | None = None,
    host_link_bps: float | None = None,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """Staggered Prob(p) (PDQ §5.3, after Hedera's "Stagger Prob"): each flow goes to a host under its sender's
    own rack (ToR or leaf switch) with probability ``p``, uniformly among the rack's other hosts, and otherwise
    to a host under another rack, uniformly among all of them (Hedera's "the rest of the network": a flow that
    is not rack-local leaves the rack). ``racks[h]`` is host h's rack. Flows arrive together or at ``load``
    (:func:`_arrivals`).

    Random draws, in order: the arrivals, the local-or-not choices, the rack-local pick, the remote pick (both
    picks are drawn for every flow), sizes.
    """
    hosts = check_int("hosts", hosts, minimum=2, maximum=U32_MAX)
    sizes = check_sizes(sizes)
    flows = check_int("flows", flows, minimum=1, maximum=U32_MAX)
    rng = check_rng(rng)
    rack = np.asarray(racks, dtype=np.int64)
    if rack.shape != (hosts,):
        raise WorkloadError(f"racks must give one rack per host ({hosts}), got {rack.shape[0] if rack.ndim else 0}")
    try:
        p = float(p)
    except (TypeError, ValueError):
        raise WorkloadError(f"staggered_p must be a number within [0, 1], got {p!r}") from None
    if not 0.0 <= p <= 1.0:
        raise WorkloadError(f"staggered_p must be within [0, 1], got {p!r}")
    # hosts sorted by rack: rack r holds the positions [first[r], first[r] + count[r])
    order = np.argsort(rack, kind="stable")
    pos = np.empty(hosts, dtype=np.int64)
    pos[order] = np.arange(hosts)
    _, first_of, count_of = np.unique(rack[order], return_index=True, return_counts=True)
    idx = np.searchsorted(np.unique(rack), rack)
    first, count = first_of[idx], count_of[idx]  # per host: its rack's first position and size
    if p > 0 and count.min() < 2:
        raise WorkloadError(f"staggered_p = {p:g} needs at least 2 hosts under every rack (host "
                            f"{int(np.argmin(count))} is alone under its rack)")
    if p < 1 and count.max() == hosts:
        raise WorkloadError(f"staggered_p = {p:g} needs a second rack: every host is under the same one")
    start, src = _arrivals(rng, hosts=hosts, flows=flows, sizes=sizes, load=load, host_link_bps=host_link_bps,
                           start_spread_ns=start_spread_ns)
    local = rng.random(flows) < p
    n_local = np.maximum(count[src] - 1, 1)
    k = rng.integers(0, n_local, flows)
    k += k >= pos[src] - first[src]  # skip the sender itself
    local_dst = order[first[src] + k]
    m = rng.integers(0, np.maximum(hosts - count[src], 1), flows)
    m += np.where(m >= first[src], count[src], 0)  # skip the sender's rack
    remote_dst = order[np.minimum(m, hosts - 1)]
    size = sizes.sample(rng, flows)
    return build_table(src, np.where(local, local_dst, remote_dst), size, start)


def _derangement(rng: np.random.Generator, n: int) -> np.ndarray:
    # Rejection gives a uniform derangement; about e draws are needed on average.
    while True:
        perm = rng.permutation(n)
        if not np.any(perm == np.arange(n)):
            return perm


def _permutation(
    *,
    hosts: int,
    cdf: Cdf | UniformSizes,
    load: float | None,
    host_link_bps: float | None,
    flows: int,
    rng: np.random.Generator,
    start_spread_ns: float = 0.0,
) -> FlowColumns:
    """Permutation traffic (PDQ §5.3 "Random Permutation"): every host sends only to its partner in one random
    derangement of the hosts, fixed for the run (so every host also receives from exactly one sender). With
    ``load``: the arrivals and load of ``all_to_all`` (each downlink sees ``load`` too); with ``load=None`` the
    flows arrive together, flow ``j`` from host ``j mod hosts`` (:func:`_arrivals`).

    Random draws, in order: the derangement, the arrivals (with a load: gaps, sources), sizes.
    """
    hosts = check_int("hosts", hosts, minimum=2, maximum=U32_MAX)
    cdf = check_sizes(cdf)
    if load is not None:
        load = check_load(load)
        host_link_bps = check_positive("host_link_bps", host_link_bps)
    flows = check_int("flows", flows, minimum=1, maximum=U32_MAX)
    rng = check_rng(rng)

    partner = _derangement(rng, hosts)
    start, src = _arrivals(rng, hosts=hosts, flows=flows, sizes=cdf, load=load, host_link_bps=host_link_bps,
                           start_spread_ns=start_spread_ns)
    size = cdf.sample(rng, flows)
    return build_table(src, partner[src], size, start)


# Rows of random keys drawn at once when picking incast senders; bounds memory to about 32 MB.
_INCAST_KEYS_PER_CHUNK = 4_000_000


def _incast(
    *,
    hosts: int,
    fan_in: int,
    response_bytes: int,
    queries: int,
    rng: np.random.Generator,
    query_rate_hz: float | None = None,
    load: float | None = None,
    host_link_bps: float | None = None,
) -> FlowColumns:
    """Partition-aggregate (incast) traffic.

    Queries arrive as a Poisson process. Each picks an aggregator uniformly and ``fan_in`` distinct other hosts,
    which all send ``response_bytes`` to the aggregator at the query's arrival time. Give exactly one of
    ``query_rate_hz`` or ``load``: with ``load`` (and ``host_link_bps``) the rate is
    ``lambda_q = load * host_link_bps * hosts / (8 * fan_in * response_bytes)``, so that the aggregators'
    downlinks, averaged over all hosts, carry ``load``. Extra column ``query_id`` (uint32, in arrival order).

    Random draws, in order: gaps, aggregators, responders.
    """
    hosts = check_int("hosts", hosts, minimum=2, maximum=U32_MAX)
    fan_in = check_int("fan_in", fan_in, minimum=1)
    if fan_in >= hosts:
        raise WorkloadError(f"fan_in must be < hosts ({hosts}), got {fan_in}")
    response_bytes = check_int("response_bytes", response_bytes, minimum=1)
    queries = check_int("queries", queries, minimum=1)
    if queries * fan_in > U32_MAX:
        raise WorkloadError(f"queries x fan_in = {queries * fan_in} flows is more than a uint32 flow_id can number")
    rng = check_rng(rng)
    if (query_rate_hz is None) == (load is None):
        raise WorkloadError("give exactly one of query_rate_hz or load")
    if load is not None:
        load = check_load(load)
        if host_link_bps is None:
            raise WorkloadError("host_link_bps is required when load is given")
        host_link_bps = check_positive("host_link_bps", host_link_bps)
        rate = load * host_link_bps * hosts / (8.0 * fan_in * response_bytes)
    else:
        rate = check_positive("query_rate_hz", query_rate_hz)

    q_start = _poisson_starts_ps(rng, rate, queries)
    agg = rng.integers(0, hosts, queries)
    # fan_in distinct hosts among the hosts - 1 others: the fan_in smallest of independent uniform keys give a
    # uniform subset. Responders are listed in host order within a query.
    chosen = np.empty((queries, fan_in), dtype=np.int64)
    rows = max(1, _INCAST_KEYS_PER_CHUNK // (hosts - 1))
    for lo in range(0, queries, rows):
        keys = rng.random((min(rows, queries - lo), hosts - 1))
        pick = np.argpartition(keys, fan_in - 1, axis=1)[:, :fan_in] if fan_in < hosts - 1 else np.argsort(keys, axis=1)
        chosen[lo : lo + len(keys)] = np.sort(pick, axis=1)
    src = chosen + (chosen >= agg[:, None])
    qid = np.repeat(np.arange(queries, dtype=np.uint32), fan_in)
    return build_table(
        src.ravel(),
        np.repeat(agg, fan_in),
        np.full(queries * fan_in, response_bytes, dtype=np.uint64),
        np.repeat(q_start, fan_in),
        query_id=qid,
    )


# --------------------------------------------------------------------------------------------------------------
# The table of patterns
# --------------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Pattern:
    """One traffic pattern: its generator (``columns``, returning FlowColumns) and what :func:`generate` needs
    to call it from workload keys.

    ``uses_sizes``: the pattern draws flow sizes (from ``workload.cdf`` or uniform sizes). ``needs_racks``:
    the pattern needs each host's rack. ``key``: the workload key to blame when the generator refuses its
    arguments (None: the workload as a whole).
    """

    name: str
    columns: Callable[..., FlowColumns]
    draw: Callable[[dict[str, Any]], FlowColumns]
    uses_sizes: bool = True
    needs_racks: bool = False
    key: str | None = None


def _frame_function(pattern: Pattern) -> Callable[..., pd.DataFrame]:
    """The public form of a pattern's generator: the same keyword arguments and draws, the table as a DataFrame."""
    columns = pattern.columns

    @functools.wraps(columns)
    def frame(**kwargs: Any) -> pd.DataFrame:
        return columns(**kwargs).frame()

    frame.__name__ = frame.__qualname__ = pattern.name
    frame.__signature__ = inspect.signature(columns).replace(return_annotation="pd.DataFrame")  # type: ignore[attr-defined]
    del frame.__wrapped__  # the signature above is the one to show
    return frame


def _draw_all_to_all(k: dict[str, Any]) -> FlowColumns:
    return _all_to_all(hosts=k["hosts"], cdf=k["sizes"], load=k["load"], host_link_bps=k["host_link_bps"],
                       flows=k["flows"], rng=k["rng"], senders=k.get("senders"), receivers=k.get("receivers"),
                       groups=k.get("groups"))


def _draw_permutation(k: dict[str, Any]) -> FlowColumns:
    return _permutation(hosts=k["hosts"], cdf=k["sizes"], load=k["load"], host_link_bps=k["host_link_bps"],
                        flows=k["flows"], rng=k["rng"], start_spread_ns=k["start_spread_ns"])


def _draw_incast(k: dict[str, Any]) -> FlowColumns:
    load = k["load"]
    return _incast(hosts=k["hosts"], fan_in=k["fan_in"], response_bytes=k["response_bytes"], queries=k["queries"],
                   rng=k["rng"], query_rate_hz=k.get("query_rate_hz"), load=load,
                   host_link_bps=k["host_link_bps"] if load is not None else None)


def _draw_aggregation(k: dict[str, Any]) -> FlowColumns:
    return _aggregation(hosts=k["hosts"], sizes=k["sizes"], flows=k["flows"], rng=k["rng"],
                        receiver=k.get("receiver") or 0, senders=k.get("senders"),
                        start_spread_ns=k["start_spread_ns"])


def _draw_stride(k: dict[str, Any]) -> FlowColumns:
    return _stride(hosts=k["hosts"], sizes=k["sizes"], flows=k["flows"], rng=k["rng"], stride=k.get("stride"),
                   load=k["load"], host_link_bps=k["host_link_bps"], start_spread_ns=k["start_spread_ns"])


def _draw_staggered(k: dict[str, Any]) -> FlowColumns:
    return _staggered(hosts=k["hosts"], racks=k["racks"], sizes=k["sizes"], flows=k["flows"], rng=k["rng"],
                      p=k.get("staggered_p"), load=k["load"], host_link_bps=k["host_link_bps"],
                      start_spread_ns=k["start_spread_ns"])


#: Every traffic pattern by its ``workload.pattern`` name.
PATTERNS: dict[str, Pattern] = {
    p.name: p
    for p in (
        Pattern("all_to_all", _all_to_all, _draw_all_to_all),
        Pattern("permutation", _permutation, _draw_permutation),
        Pattern("incast", _incast, _draw_incast, uses_sizes=False),
        Pattern("aggregation", _aggregation, _draw_aggregation),
        Pattern("stride", _stride, _draw_stride),
        Pattern("staggered", _staggered, _draw_staggered, needs_racks=True, key="staggered_p"),
    )
}

all_to_all = _frame_function(PATTERNS["all_to_all"])
permutation = _frame_function(PATTERNS["permutation"])
incast = _frame_function(PATTERNS["incast"])
aggregation = _frame_function(PATTERNS["aggregation"])
stride = _frame_function(PATTERNS["stride"])
staggered = _frame_function(PATTERNS["staggered"])


def generate(
    pattern: str,
    *,
    rng: np.random.Generator,
    hosts: int,
    host_link_bps: float,
    load: float | None = None,
    sizes: Cdf | UniformSizes | None = None,
    racks: Sequence[int] | np.ndarray | None = None,
    flows: int | None = None,
    start_spread_ns: float = 0.0,
    **keys: Any,
) -> FlowColumns:
    """Pattern ``pattern``'s flows (:data:`PATTERNS`), from workload keys as an experiment names them: ``sizes``
    for the patterns that draw sizes, ``racks`` (each host's rack) for those that need them, ``groups`` (each
    host's rack or pod) for all_to_all between groups, and the pattern's
    own keys (``senders``, ``receivers``, ``receiver``, ``stride``, ``staggered_p``, ``fan_in``,
    ``response_bytes``, ``queries``, ``query_rate_hz``) by keyword; a key left out means its default. The draws
    are the generator's own."""
    row = PATTERNS.get(pattern)
    if row is None:
        raise WorkloadError(f"unknown pattern {pattern!r}; known: {', '.join(PATTERNS)}")
    return row.draw(dict(keys, rng=rng, hosts=hosts, host_link_bps=host_link_bps, load=load, sizes=sizes,
                         racks=racks, flows=flows, start_spread_ns=start_spread_ns))
