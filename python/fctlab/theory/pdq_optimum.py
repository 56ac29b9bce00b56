"""Optimal references for flows that share one bottleneck: the "Optimal" curves of the PDQ paper's Figure 3.

For f flows that all start at t = 0 and all cross one link of rate C (the receiver's downlink in query
aggregation), the link is a single machine and each flow a job whose processing time is its wire bytes x 8 / C:

* **mean FCT**: shortest remaining processing time first (SRPT; with every job present at t = 0, shortest job
  first) minimises the sum of completion times on one machine. The k-th smallest flow's bytes have crossed the
  bottleneck once the k smallest have, at (their wire bytes summed) x 8 / C;
* **application throughput**: the most flows that can meet their deadlines is 1||ΣU_j (minimise the number of
  late jobs), which the Moore-Hodgson algorithm solves exactly: take jobs in deadline order, and whenever the
  last one taken finishes late, drop the longest job taken so far.

A flow's FCT also includes what the bottleneck does not account for: propagation, and the store-and-forward of
its packets on the hops before and after the bottleneck. Each function takes it per flow as ``latency_ns``: the
flow's ideal FCT (the engine's ``ideal_fct_ns``: alone in the idle fabric) minus its own transmission time at C,
which is what :func:`latency_from_ideal` computes. The reference then completes flow k at its SRPT time at the
bottleneck plus its latency, and gives it until its deadline minus its latency to cross the bottleneck. This is
the PDQ paper's idealisation (a fluid bottleneck with no initialisation cost), not a bound the engine could
reach: every protocol pays at least one RTT to start, which is why PDQ's gap to it is largest with one flow.

Pure numpy; times in nanoseconds (float64).
"""

from __future__ import annotations

import heapq
from typing import Any

import numpy as np

__all__ = [
    "transmission_ns",
    "latency_from_ideal",
    "srpt_fct_ns",
    "moore_hodgson",
    "optimal_application_throughput",
]


def transmission_ns(size_bytes: Any, rate_bps: float, *, mss_bytes: int = 1460, header_bytes: int = 40) -> np.ndarray:
    """Each flow's time on a link of ``rate_bps``: its wire bytes (payload plus ``header_bytes`` per packet of at
    most ``mss_bytes``) x 8 / rate, in ns."""
    if not rate_bps > 0:
        raise ValueError(f"rate_bps: must be > 0 (got {rate_bps!r})")
    size = np.asarray(size_bytes, dtype=np.int64)
    wire = size + -(-size // mss_bytes) * header_bytes
    return wire.astype(np.float64) * 8.0 / rate_bps * 1e9


def latency_from_ideal(ideal_fct_ns: Any, size_bytes: Any, rate_bps: float, *, mss_bytes: int = 1460,
                       header_bytes: int = 40) -> np.ndarray:
    """The part of each flow's ideal FCT that is not its transmission at the bottleneck (ns, at least 0)."""
    tx = transmission_ns(size_bytes, rate_bps, mss_bytes=mss_bytes, header_bytes=header_bytes)
    return np.maximum(np.asarray(ideal_fct_ns, dtype=np.float64) - tx, 0.0)


def srpt_fct_ns(processing_ns: Any, latency_ns: Any = 0.0) -> np.ndarray:
    """Each flow's FCT (ns, in input order) when flows that all start at 0 cross one bottleneck shortest first:
    its completion at the bottleneck (the processing times of the flows before it and its own, summed) plus its
    ``latency_ns``. Ties keep the input order. Its mean is the optimal mean FCT."""
    p = np.asarray(processing_ns, dtype=np.float64)
    if np.any(p < 0) or np.any(~np.isfinite(p)):
        raise ValueError("processing_ns: must be finite and >= 0")
    order = np.argsort(p, kind="stable")
    done = np.empty_like(p)
    done[order] = np.cumsum(p[order])
    return done + np.broadcast_to(np.asarray(latency_ns, dtype=np.float64), p.shape)


def moore_hodgson(processing_ns: Any, due_ns: Any) -> np.ndarray:
    """The Moore-Hodgson algorithm for 1||ΣU_j: a largest set of jobs that one machine can finish by their due
    times, all jobs present at t = 0. Returns a boolean mask (input order) of the on-time jobs; scheduled in
    due-date order they all meet their due times, and no larger set can (Moore, 1968).

    Jobs are taken in due-date order (ties by input order); when the job just taken completes after its due
    time, the longest job taken so far (ties: the later taken) is dropped. A job may finish exactly at its due
    time. NaN due times (no deadline) are not scheduled.
    """
    p = np.asarray(processing_ns, dtype=np.float64)
    d = np.asarray(due_ns, dtype=np.float64)
    if p.shape != d.shape:
        raise ValueError("processing_ns and due_ns: must have the same length")
    if np.any(p < 0) or np.any(~np.isfinite(p)):
        raise ValueError("processing_ns: must be finite and >= 0")
    on_time = np.zeros(len(p), dtype=bool)
    candidates = np.flatnonzero(~np.isnan(d))
    order = candidates[np.argsort(d[candidates], kind="stable")]
    heap: list[tuple[float, int, int]] = []  # (-processing, -position taken, job): the longest on top
    t = 0.0
    for pos, j in enumerate(order):
        heapq.heappush(heap, (-p[j], -pos, int(j)))
        on_time[j] = True
        t += p[j]
        if t > d[j]:
            neg_p, _, k = heapq.heappop(heap)
            on_time[k] = False
            t += neg_p
    return on_time


def optimal_application_throughput(processing_ns: Any, deadline_ns: Any, latency_ns: Any = 0.0) -> float | None:
    """The largest share of the flows with a deadline (``deadline_ns`` after their common start at 0; NaN: none)
    that can finish by it through one bottleneck: Moore-Hodgson on due times ``deadline - latency``. None when
    no flow has a deadline."""
    d = np.asarray(deadline_ns, dtype=np.float64)
    has = ~np.isnan(d)
    if not has.any():
        return None
    due = d - np.broadcast_to(np.asarray(latency_ns, dtype=np.float64), d.shape)
    # a flow without a deadline competes for nothing here: the optimum sends it after the deadline flows
    on_time = moore_hodgson(np.asarray(processing_ns, dtype=np.float64)[has], due[has])
    return float(on_time.sum() / has.sum())
