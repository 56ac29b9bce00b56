"""Application flow traces with per-flow features, for the flow-size predictor of QCLIMB (paper §2.3, §4.1).

QCLIMB trains its bounds predictor on the FLUX traces (Dukic et al., NSDI 2019: K-Means, PageRank, SGD and
TensorFlow jobs on a university cluster). Those are kept in Git LFS and cannot be fetched here, so this module has
(1) a generator of application traces that stands in for them, (2) a loader for the FLUX format, for users who
hold the data, and (3) the per-flow features of §4.1, computed the same way for both.

Flows and features
------------------
A trace is a pandas DataFrame, one row per flow, sorted by start time (stable), with the columns

* ``src``, ``dst`` (host indices), ``size_bytes`` (>= 1), ``start_ns`` (int64): what ``workloads.read_trace``
  reads;
* ``sport``, ``dport``, ``proto`` (6 = TCP): with ``src`` and ``dst`` the flow's 5-tuple. A *connection* is the
  directed 5-tuple: the flows one sender writes into one TCP connection (what QCLIMB's sender-side flow monitor
  sees on its Netfilter hook). The two directions of one TCP connection are two connections here;
* the features of §4.1, computed by :func:`add_features` from the columns above:
  ``gap_ns``: start of this flow - start of the previous flow of the same connection. The paper says "time since
  the end of the previous flow"; a trace has no end times (those come out of the network), so the gap is
  start-to-start; ``prev_size_1`` .. ``prev_size_5``: sizes of the connection's last 5 flows, most recent first.
  Missing history (a connection's first flows) is the sentinel ``MISSING = -1`` in every one of these columns
  (sizes are >= 1 and gaps >= 0, so -1 cannot be confused with a value, and a tree can split it off);
* generated traces also carry two *hidden* columns the predictor never reads (:data:`HIDDEN_COLUMNS`): ``job``
  (the application job that sent the flow) and ``kind`` (what the message is: ``task``, ``shuffle``, ...), for
  analysis only.

The predictor's features are :func:`feature_columns`: ``gap_ns``, the 5 previous sizes and the 5-tuple fields
(for a FLUX trace, its own columns instead of the 5-tuple, see :func:`load_flux`), and with the ``paper`` set also
``start_ns``, which is left out by default (see :data:`FEATURE_SETS` for why and what it costs).

Files
-----
``workloads.read_trace`` rejects unknown columns, so :func:`save_trace` writes two files: ``PATH`` (``.csv`` or
``.parquet``) with exactly ``src, dst, size_bytes, start_ns``, which the engine reads as a workload trace, and the
side file ``PATH`` with ``.features`` before the suffix (``trace.features.parquet``) with every column above.
:func:`load_trace` reads the side file (and checks that the trace beside it holds the same flows), a FLUX CSV, or
any plain fctlab trace (then a connection is the (src, dst) pair and the ports and protocol are ``MISSING``).

The generator
-------------
``generate(profile, flows, seed)`` simulates a cluster of ``hosts`` machines on which application jobs start one
after another (Poisson job arrivals, a few jobs at once). Each job picks its hosts, draws its hidden parameters
(number of workers, iterations, compute time, per-worker state) and runs its iterations; every message it sends
is one flow on a connection between two of its processes. Jobs run side by side, each advancing one iteration at
a time in time order, and the trace is the first ``flows`` flows by start time (so the last jobs are cut off, as
in any capture). A job's dataset, graph or model comes from a per-trace *catalogue* (24 configurations; 6
TensorFlow models) picked with Zipf-like popularity: clusters run the same pipelines again and again and a rare
one now and then, so most test jobs resemble training jobs and a few do not. A message's size is a function
of hidden state, of which the features show only traces: the history of a connection reveals a job's parameters
once it has carried a few messages, but not a new job's, not the phase within an iteration (several message types
interleave on one connection), not the drift of iterative state (PageRank's active vertices, SGD's gradient
density), not when a regime switches, and not the occasional bulk transfer on a fresh connection (data loads,
cache misses, checkpoints). So history predicts size well but imperfectly, as in real clusters. The same seed
gives the same trace (one ``numpy.random.Generator``, drawn from in a fixed order).

Four profiles stand in for the paper's workloads (shares from §5.1/§5.3 and Fig. 6 of the QCLIMB paper; maxima
from its Fig. 1 gaps). All are heavy-tailed: most flows are small, most bytes are in a few large flows.

``kmeans`` (~95% of flows <= 100 KB; up to 256 MB): a Spark MLlib K-Means job. Workers first read their data
partition from HDFS (256 MB blocks, each on a fresh connection after a ~200 B read request). Each iteration the
driver launches a task per worker carrying the current centroids (``8 k d`` bytes: the dataset's dimension d,
2-600, and a number of clusters k among the round numbers users pick, 2-100, both hidden, plus a 2-6 KB closure,
40 KB more the first time), the worker reports RUNNING (~400 B), sends heartbeats while it computes
(0.5-3 KB, their number depends on the compute time) and returns its partial sums (centroid-sized) when done.
With probability 1% per worker and iteration a cached partition block was evicted and is read again (a bulk
transfer nothing announces). At the end the driver writes the model to HDFS through a 3-replica pipeline. Why:
K-Means traffic is mostly RPCs whose size is set by (k, d): predictable within a job once seen, not across jobs.

``pagerank`` (~74%; up to 256 MB blocks and shuffles of up to hundreds of MB): a Spark GraphX PageRank job. After
loading its edge partitions from HDFS, each iteration every worker fetches its shuffle blocks from every other
worker: a fetch request (~200-400 B) and a response whose size is the pair's edge cut (heavy-tailed across pairs,
hidden) x 12 B x the fraction of vertices still active, which decays by a hidden per-job rate as ranks converge,
with +-30% noise. Tasks and status messages go to and from the driver; every 10 iterations, with probability
one half, the workers checkpoint their vertex partitions to HDFS (3-replica pipelines). Why: PageRank's shuffle
sizes drift from iteration to iteration, so the last sizes of a connection bound the next one only roughly.

``sgd`` (~66%; every flow > 44 B; up to ~54 MB): a parameter-server SGD job. The model (300 K - 13.5 M float32
parameters, hidden) is sharded over 1-3 servers and sent in slices of at most 65,536 parameters (262,189 B).
Each minibatch every worker sends a pull request per server (>= 45 B), receives the dense slices, computes, and
pushes one gradient per slice: sparse (45 B + 8 B per non-zero) with a density set by the worker's current data
shard, or dense when more than half of it is non-zero; each push is acknowledged (45-60 B). The density regime
persists for an epoch (10-40 minibatches) and is drawn anew at each epoch, when the worker also prefetches its
next data shard (1-50 MB, on fresh storage connections) and re-synchronises its model replica: each server sends
its whole shard (1.2-54 MB) as one message on the connection that carries the slices. Every 100 minibatches each
server checkpoints its shard to storage. Why: the medium flows are slice-sized (the paper's SGD medium-flow lower
bounds are ~255-260 KB), the smallest message is a header plus one parameter, hence nothing at or below 44 B, and
the paper's SGD has a large class (> 10 MB, Table 5) whose lower bounds are only 260 KB-1.1 MB (O3) and a largest
prediction gap of ~54 MB (Fig. 1): whole-shard messages on a connection whose history is slices and acks are
such flows. Large flows stay rare by count (100,000 flows of seed 1: 51 above 10 MB, 43 data-shard loads and 8
re-synchronisations; before the re-synchronisation was modelled: 38, all loads on fresh connections),
so a run needs tens of thousands of SGD flows to hold any: the 5,000 simulated flows of the earlier
``qclimb-sim`` runs had none. Adding the re-synchronisation changed every SGD trace (the generator's draws).

``tensorflow`` (~77% of flows < 100 B; tensors of up to ~16 MB, checkpoints of up to ~500 MB): distributed
TensorFlow with parameter servers over gRPC. A model has 3-12 dense layers (kernel ``4 n_in n_out`` bytes and
bias ``4 n_out`` bytes, widths 16-2048, hidden), 3-6 scalar variables per layer (step counters, schedules, loss
scale, batch-norm counters: 4-8 B tensors) and an embedding table (10^4-10^6 rows of 16-128 floats). A job trains
for 20-120 steps with a batch of 256-2048 examples. Each step the master sends RunStep to every worker; the worker
fetches every variable from its parameter server (a ~60-95 B RecvTensor request, the tensor plus a 28 B frame in
reply) and the embedding rows of the batch's distinct ids (their number varies from batch to batch around a
hidden share of the batch), computes, sends the embedding rows' gradient and a gradient per trainable variable
(each acknowledged with 40-60 B) and reports step completion. Every 50 steps the chief checkpoints all variables.
Why: the many tiny RPCs and scalar tensors are the tiny flows of the paper's TensorFlow workload.

The FLUX format
---------------
:func:`load_flux` reads the per-flow CSV files of the FLUX repository (vojislavdjukic/flux, ``data/ml/<app>/``):
columns ``index, time, previous_flow_time, agg_net_out, agg_net_in, agg_net_out_per_machine,
agg_net_in_per_machine, tcp_queue, machine, cpu, ram, disk_write, memory_read, memory_write, first_call,
flow_size`` (per that repository's code and a third-party notebook). Their units are not documented anywhere we
know of: ``flow_size`` is taken as bytes and ``time`` as seconds (``time_unit_ns``, default 1e9, changes that).
"""

from __future__ import annotations

import math
import heapq
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "TraceError",
    "PROFILES",
    "Profile",
    "MISSING",
    "HISTORY",
    "TUPLE_COLUMNS",
    "HIDDEN_COLUMNS",
    "FLUX_COLUMNS",
    "generate",
    "add_features",
    "feature_columns",
    "FEATURE_SETS",
    "split_by_time",
    "profile_stats",
    "load_flux",
    "save_trace",
    "load_trace",
    "features_path",
]

#: Missing history (a connection's first flows) and missing 5-tuple fields.
MISSING = -1
#: How many previous flows of the same connection are features (§4.1: "flow sizes for the last 5 flows").
HISTORY = 5
TRACE_COLUMNS = ("src", "dst", "size_bytes", "start_ns")
TUPLE_COLUMNS = ("src", "dst", "sport", "dport", "proto")
HISTORY_COLUMNS = tuple(f"prev_size_{k}" for k in range(1, HISTORY + 1))
#: Columns of generated traces that describe the hidden application state; never features.
HIDDEN_COLUMNS = ("job", "kind")
#: Columns of a FLUX CSV file (``index`` is dropped, ``time`` becomes start_ns, ``flow_size`` size_bytes).
FLUX_COLUMNS = (
    "index", "time", "previous_flow_time", "agg_net_out", "agg_net_in", "agg_net_out_per_machine",
    "agg_net_in_per_machine", "tcp_queue", "machine", "cpu", "ram", "disk_write", "memory_read", "memory_write",
    "first_call", "flow_size",
)
FLUX_FEATURES = tuple(c for c in FLUX_COLUMNS if c not in ("index", "time", "flow_size"))
FEATURES_TAG = ".features"

TCP = 6
_MB = 1_000_000
_MS = 1_000_000  # ns
_US = 1_000  # ns
_HDFS_PORT = 50010
_HDFS_BLOCK = 256 * 2**20
# Host NICs of the modelled cluster: a transfer of b bytes takes about b * 0.8 ns (10 Gbps).
_NS_PER_BYTE = 0.8


class TraceError(ValueError):
    """A trace file, profile or generator argument is invalid. The message names the culprit."""


# --------------------------------------------------------------------------------------------------------------
# The generator
# --------------------------------------------------------------------------------------------------------------

Conn = tuple[int, int, int, int, int]  # (src, dst, sport, dport, proto)
# A job is a generator: it emits one iteration's flows, then yields its clock (ns), the start of its next
# iteration; every flow it emits later starts at or after that time.
_Steps = Iterator[float]


def _rev(c: Conn) -> Conn:
    """The other direction of the same TCP connection."""
    return (c[1], c[0], c[3], c[2], c[4])


def _logu(rng: np.random.Generator, lo: float, hi: float) -> float:
    """Log-uniform on [lo, hi]."""
    return float(math.exp(rng.uniform(math.log(lo), math.log(hi))))


def _xfer_ns(size: float) -> float:
    return 20 * _US + size * _NS_PER_BYTE


class _Cluster:
    """Collects the flows of the jobs, and hands out connections (ephemeral ports per host)."""

    def __init__(self, rng: np.random.Generator, hosts: int, catalogue: int = 24) -> None:
        self.rng = rng
        self.hosts = hosts
        self.catalogue = catalogue
        ranks = np.arange(1, catalogue + 1) ** -0.5
        self._popularity = ranks / ranks.sum()
        self.rows: list[tuple[int, int, int, int, int, int, int, int, str]] = []
        self._next_port = [int(p) for p in rng.integers(32768, 61000, hosts)]
        self._conns: dict[Any, Conn] = {}
        self._catalogue: list[Any] | None = None

    def ephemeral(self, host: int) -> int:
        p = self._next_port[host]
        self._next_port[host] = 32768 if p >= 60999 else p + 1
        return p

    def conn(self, key: Any, src: int, dst: int, dport: int) -> Conn:
        """The connection named ``key`` from src to dst's port ``dport``, opened on first use."""
        c = self._conns.get(key)
        if c is None:
            c = (int(src), int(dst), self.ephemeral(int(src)), int(dport), TCP)
            self._conns[key] = c
        return c

    def fresh(self, src: int, dst: int, dport: int) -> Conn:
        """A new connection (a new ephemeral source port): no history."""
        return (int(src), int(dst), self.ephemeral(int(src)), int(dport), TCP)

    def emit(self, t_ns: float, c: Conn, size: float, job: int, kind: str) -> None:
        self.rows.append((int(t_ns), c[0], c[1], c[2], c[3], c[4], max(1, int(round(size))), job, kind))

    def config(self, make: Callable[[np.random.Generator, float], Any]) -> Any:
        """A job configuration (dataset, model, ...) from this trace's catalogue of ``catalogue`` of them, picked
        with Zipf-like popularity (the k-th most popular with weight k^-0.5): a cluster runs the same pipelines
        over and over, and now and then a rare one. The catalogue is made on first use by ``make(rng, u)``, where
        the u of the configurations are stratified over [0, 1) (one in each 1/catalogue) and shuffled, so that
        every trace has small and large configurations and popularity does not follow size."""
        cat = self._catalogue
        n = self.catalogue
        if cat is None:
            u = (self.rng.permutation(n) + self.rng.random(n)) / n
            cat = self._catalogue = [make(self.rng, float(x)) for x in u]
        return cat[int(self.rng.choice(n, p=self._popularity))]

    def pick_hosts(self, n: int) -> list[int]:
        return [int(h) for h in self.rng.choice(self.hosts, n, replace=False)]

    def other_host(self, *exclude: int) -> int:
        while True:
            h = int(self.rng.integers(0, self.hosts))
            if h not in exclude:
                return h

    def hdfs_read(self, t: float, reader: int, size: float, job: int, kind: str) -> float:
        """Read ``size`` bytes from HDFS (datanodes on other hosts), one fresh connection per block: a read
        request then the block. Returns the time the last block is in."""
        rng = self.rng
        while size >= 1:
            blk = min(size, _HDFS_BLOCK)
            size -= blk
            dn = self.other_host(reader)
            req = self.fresh(reader, dn, _HDFS_PORT)
            self.emit(t, req, rng.integers(150, 260), job, "hdfs_request")
            t += 100 * _US
            self.emit(t, _rev(req), blk, job, kind)
            t += _xfer_ns(blk)
        return t

    def hdfs_write(self, t: float, writer: int, size: float, job: int, kind: str) -> float:
        """Write ``size`` bytes to HDFS with 3 replicas: a pipeline writer -> dn1 -> dn2 -> dn3 per block."""
        while size >= 1:
            blk = min(size, _HDFS_BLOCK)
            size -= blk
            hop = writer
            chain: list[int] = [writer]
            for _ in range(3):
                nxt = self.other_host(*chain)
                self.emit(t, self.fresh(hop, nxt, _HDFS_PORT), blk, job, kind)
                chain.append(nxt)
                hop = nxt
                t += 50 * _US
            t += _xfer_ns(blk)
        return t




_KMEANS_K = (2, 3, 4, 5, 8, 10, 12, 16, 20, 25, 32, 50, 64, 100)


def _kmeans_job(cl: _Cluster, job: int, t0: float) -> _Steps:
    rng = cl.rng
    n_workers = int(rng.integers(2, min(8, cl.hosts - 1) + 1))
    hosts = cl.pick_hosts(n_workers + 1)
    driver, workers = hosts[0], hosts[1:]
    # A dataset (its dimension) and a number of clusters; each run varies k a little around the pipeline's.
    # A dataset (of dimension d, log-uniform in [2, 600]) from the catalogue, and a number of clusters k that
    # users vary from run to run among the usual round numbers.
    dim = cl.config(lambda r, u: int(round(2 * 300**u)))
    k = int(rng.choice(_KMEANS_K))
    centroids = 8 * k * dim + 64
    closure = int(rng.integers(2_000, 6_000))
    iters = int(rng.integers(5, 31))
    compute = _logu(rng, 5 * _MS, 60 * _MS)
    speed = rng.lognormal(0.0, 0.2, n_workers)
    rpc_port = int(rng.integers(30000, 60000))
    heartbeat = float(rng.uniform(1.0, 1.5)) * 10 * _MS

    # 1. Each worker loads its partition from HDFS.
    ready = []
    for w in workers:
        part = min(rng.lognormal(math.log(150 * _MB), 1.0), 2_000 * _MB)
        ready.append(cl.hdfs_read(t0 + rng.uniform(0, _MS), w, part, job, "hdfs_block"))
    t = max(ready)
    yield t
    # 2. Iterations: task (driver -> worker), RUNNING, heartbeats, result (worker -> driver).
    for it in range(iters):
        done = []
        for i, w in enumerate(workers):
            up = cl.conn((job, "rpc", w), w, driver, rpc_port)
            tw = t + i * 30 * _US
            task = centroids + closure + (40_000 if it == 0 else 0)
            cl.emit(tw, _rev(up), task * rng.uniform(0.995, 1.005), job, "task")
            tw += _xfer_ns(task) + 200 * _US
            cl.emit(tw, up, rng.integers(350, 460), job, "status")
            if rng.random() < 0.01:  # an evicted cached block: read it again, unannounced
                tw = cl.hdfs_read(tw, w, rng.uniform(0.2, 1.0) * _HDFS_BLOCK, job, "cache_miss")
            c = compute * speed[i] * rng.lognormal(0.0, 0.15)
            hb = tw + rng.uniform(0, heartbeat)
            while hb < tw + c:
                cl.emit(hb, up, rng.integers(500, 3_000), job, "heartbeat")
                hb += heartbeat
            tw += c
            cl.emit(tw, up, (centroids + 8 * k + 300) * rng.uniform(0.99, 1.01), job, "result")
            done.append(tw + _xfer_ns(centroids))
        t = max(done) + rng.uniform(0.5, 2.0) * _MS
        yield t
    # 3. The model goes to HDFS; executors are stopped.
    t = cl.hdfs_write(t, driver, centroids, job, "model_save")
    for w in workers:
        cl.emit(t, _rev(cl.conn((job, "rpc", w), w, driver, rpc_port)), rng.integers(100, 200), job, "stop")


def _pagerank_job(cl: _Cluster, job: int, t0: float) -> _Steps:
    rng = cl.rng
    n_workers = int(rng.integers(3, min(6, cl.hosts - 1) + 1))
    hosts = cl.pick_hosts(n_workers + 1)
    driver, workers = hosts[0], hosts[1:]
    edges = cl.config(lambda r, u: 1e6 * 100**u) * rng.uniform(0.9, 1.1)  # a graph (log-uniform), a snapshot of it
    vertices = edges / rng.uniform(8, 30)
    iters = int(rng.integers(5, 21))
    decay = float(rng.uniform(0.75, 0.97))
    floor = float(rng.uniform(0.02, 0.15))
    compute = _logu(rng, 5 * _MS, 80 * _MS) * max(1.0, edges / 3e7)
    rpc_port = int(rng.integers(30000, 60000))
    shuffle_port = 7337
    # Each ordered pair's share of the edge cut: heavy-tailed (a few pairs carry most of the shuffle).
    pairs = [(a, b) for a in range(n_workers) for b in range(n_workers) if a != b]
    share = rng.lognormal(0.0, 1.5, len(pairs))
    cut = edges * 0.6 * share / share.sum()
    task = rng.integers(4_000, 12_000, n_workers)

    ready = [cl.hdfs_read(t0 + rng.uniform(0, _MS), w, edges * 16 / n_workers, job, "hdfs_block") for w in workers]
    t = max(ready)
    yield t
    for it in range(iters):
        active = max(floor, decay**it)
        done = []
        for i, w in enumerate(workers):
            up = cl.conn((job, "rpc", w), w, driver, rpc_port)
            tw = t + i * 30 * _US
            cl.emit(tw, _rev(up), task[i] * rng.uniform(0.99, 1.01), job, "task")
            cl.emit(tw + 300 * _US, up, rng.integers(350, 460), job, "status")
            done.append(tw + 300 * _US + compute * rng.lognormal(0.0, 0.2) * active**0.5)
        t = max(done)
        for i, w in enumerate(workers):
            up = cl.conn((job, "rpc", w), w, driver, rpc_port)
            cl.emit(t + i * 20 * _US, up, 300 + 10 * n_workers + rng.integers(0, 80), job, "map_status")
        t += _MS
        # Shuffle: b fetches its blocks from every a.
        ends = []
        for p, (a, b) in enumerate(pairs):
            fetch = cl.conn((job, "shuffle", b, a), workers[b], workers[a], shuffle_port)
            tp = t + rng.uniform(0, 500 * _US)
            cl.emit(tp, fetch, 180 + 40 * rng.integers(1, 6), job, "fetch_request")
            size = 120 + cut[p] * 12 * active * rng.lognormal(0.0, 0.3)
            cl.emit(tp + 80 * _US, _rev(fetch), size, job, "shuffle")
            ends.append(tp + _xfer_ns(size))
        t = max(ends) + _MS
        if (it + 1) % 10 == 0 and rng.random() < 0.5:
            t = max(cl.hdfs_write(t, w, vertices * 16 / n_workers, job, "checkpoint") for w in workers)
        yield t
    for w in workers:
        cl.emit(t, _rev(cl.conn((job, "rpc", w), w, driver, rpc_port)), rng.integers(100, 200), job, "stop")


_SLICE_PARAMS = 65_536
_SGD_HEADER = 45


def _sgd_job(cl: _Cluster, job: int, t0: float) -> _Steps:
    rng = cl.rng
    n_servers = int(rng.integers(1, 4))
    n_workers = int(rng.integers(2, max(3, min(8, cl.hosts - n_servers)) + 1))
    n_workers = min(n_workers, cl.hosts - n_servers)
    hosts = cl.pick_hosts(n_servers + n_workers)
    servers, workers = hosts[:n_servers], hosts[n_servers:]
    params = cl.config(lambda r, u: 3e5 * 45**u)  # a model: log-uniform in [300 K, 13.5 M] parameters
    shard = int(params / n_servers)
    slices = [_SLICE_PARAMS] * (shard // _SLICE_PARAMS) + ([shard % _SLICE_PARAMS] if shard % _SLICE_PARAMS else [])
    batches = int(rng.integers(60, 301))
    compute = _logu(rng, 3 * _MS, 40 * _MS)
    port = int(rng.integers(9000, 9100))
    storage = cl.other_host(*hosts) if cl.hosts > len(hosts) else servers[0]

    def new_density() -> float:
        return _logu(rng, 0.0002, 0.25)

    density = [new_density() for _ in workers]
    epoch_end = [int(rng.integers(10, 41)) for _ in workers]
    # Initial data shards and model.
    t = max(cl.hdfs_read(t0 + rng.uniform(0, _MS), w, rng.uniform(1, 50) * _MB, job, "data_load") for w in workers)
    yield t
    for b in range(batches):
        ends = []
        for i, w in enumerate(workers):
            tw = t + i * 40 * _US
            if b == epoch_end[i]:  # a new epoch: a new data shard and a new gradient-density regime
                density[i] = new_density()
                epoch_end[i] = b + int(rng.integers(10, 41))
                tw = cl.hdfs_read(tw, w, rng.uniform(1, 50) * _MB, job, "data_load")
                # and the worker re-synchronises its replica: each server's whole shard as one message on the
                # connection that carries the slices (so its history shows only slice-sized messages)
                for s in servers:
                    cl.emit(tw, _rev(cl.conn((job, w, s), w, s, port)), _SGD_HEADER + 4 * shard, job, "model_sync")
                    tw += _xfer_ns(4 * shard)
            for s in servers:
                up = cl.conn((job, w, s), w, s, port)
                cl.emit(tw, up, _SGD_HEADER + 4 * len(slices) + rng.integers(0, 17), job, "pull_request")
                tw += 60 * _US
                for n in slices:
                    cl.emit(tw, _rev(up), _SGD_HEADER + 4 * n, job, "pull")
                    tw += _xfer_ns(4 * n)
            tw += compute * rng.lognormal(0.0, 0.2)
            for s in servers:
                up = cl.conn((job, w, s), w, s, port)
                for n in slices:
                    d = min(1.0, density[i] * rng.lognormal(0.0, 0.3))
                    nnz = max(1, int(rng.binomial(n, d)))
                    size = _SGD_HEADER + (4 * n if nnz > n // 2 else 8 * nnz)
                    cl.emit(tw, up, size, job, "push")
                    cl.emit(tw + _xfer_ns(size) + 30 * _US, _rev(up), rng.integers(45, 61), job, "ack")
                    tw += _xfer_ns(size)
            ends.append(tw)
        t = max(ends) + rng.uniform(0.2, 1.0) * _MS
        if (b + 1) % 100 == 0:
            for s in servers:
                cl.emit(t, cl.fresh(s, storage if storage != s else cl.other_host(s), _HDFS_PORT), 4 * shard + 512,
                        job, "checkpoint")
        yield t


def _tf_model(rng: np.random.Generator, u: float) -> tuple[list[tuple[int, bool]], tuple[int, int]]:
    """A model: 3-12 dense layers (kernel and bias; widths log-uniform in [16, 2048 u + 64]) and 3-6 scalar
    variables per layer."""
    layers = int(rng.integers(3, 13))
    widths = [int(round(_logu(rng, 16, 64 + 1984 * u))) for _ in range(layers + 1)]
    tensors: list[tuple[int, bool]] = []
    for li in range(layers):
        tensors.append((4 * widths[li] * widths[li + 1], True))
        tensors.append((4 * widths[li + 1], True))
    n_scalars = sum(int(rng.integers(3, 7)) for _ in range(layers))
    tensors += [(int(rng.choice([4, 8])), False) for _ in range(n_scalars)]
    # An embedding table: 10^4-10^6 rows (log-uniform at quantile u) of 16-128 floats.
    embedding = (int(10_000 * 100**u), int(rng.choice([16, 32, 64, 128])))
    return tensors, embedding


def _tensorflow_job(cl: _Cluster, job: int, t0: float) -> _Steps:
    rng = cl.rng
    n_ps = int(rng.integers(1, 3))
    n_workers = int(rng.integers(2, min(6, cl.hosts - n_ps) + 1))
    hosts = cl.pick_hosts(n_ps + n_workers)
    ps, workers = hosts[:n_ps], hosts[n_ps:]
    chief = workers[0]
    tensors, (rows, dim) = cl.config(_tf_model)  # (bytes, trainable) per variable; the embedding table
    batch = int(rng.choice([256, 512, 1024, 2048]))
    distinct = float(rng.uniform(0.2, 0.9))  # share of a batch's ids that are distinct (hidden, per dataset)
    home = [int(x) for x in rng.integers(0, n_ps, len(tensors))]
    steps = int(rng.integers(20, 121))
    compute = _logu(rng, 5 * _MS, 60 * _MS)
    grpc = 2222
    ckpt_host = cl.other_host(*hosts) if cl.hosts > len(hosts) else ps[0]

    t = t0
    for step in range(steps):
        ends = []
        for i, w in enumerate(workers):
            tw = t + i * 30 * _US
            if w != chief:
                ctl = cl.conn((job, "ctl", w), w, chief, grpc)
                cl.emit(tw, _rev(ctl), rng.integers(70, 100), job, "run_step")
            tw += 50 * _US
            for v, (size, _) in enumerate(tensors):
                up = cl.conn((job, w, ps[home[v]]), w, ps[home[v]], grpc)
                cl.emit(tw, up, rng.integers(60, 96), job, "recv_request")
                cl.emit(tw + 40 * _US, _rev(up), size + 28, job, "tensor")
                tw += 40 * _US + _xfer_ns(size)
            # Embedding lookup: the rows of this batch's distinct ids (a number that varies batch to batch).
            emb = cl.conn((job, w, ps[0]), w, ps[0], grpc)
            looked_up = min(rows, int(rng.binomial(batch, distinct)))
            cl.emit(tw, emb, 60 + 4 * min(looked_up, 8), job, "lookup_request")
            cl.emit(tw + 40 * _US, _rev(emb), 28 + 4 * dim * looked_up, job, "embedding")
            tw += 40 * _US + _xfer_ns(4 * dim * looked_up)
            tw += compute * rng.lognormal(0.0, 0.2)
            cl.emit(tw, emb, 28 + 4 * dim * looked_up + 4 * looked_up, job, "embedding_gradient")
            tw += _xfer_ns(4 * dim * looked_up)
            for v, (size, trainable) in enumerate(tensors):
                if trainable:
                    up = cl.conn((job, w, ps[home[v]]), w, ps[home[v]], grpc)
                    cl.emit(tw, up, size + 28, job, "gradient")
                    cl.emit(tw + _xfer_ns(size) + 20 * _US, _rev(up), rng.integers(40, 61), job, "ack")
                    tw += _xfer_ns(size)
            if w != chief:
                cl.emit(tw, cl.conn((job, "ctl", w), w, chief, grpc), rng.integers(60, 91), job, "step_done")
            ends.append(tw)
        t = max(ends) + rng.uniform(0.1, 0.5) * _MS
        if (step + 1) % 50 == 0:
            total = sum(size for size, _ in tensors) + 4 * rows * dim
            cl.emit(t, cl.fresh(chief, ckpt_host if ckpt_host != chief else cl.other_host(chief), _HDFS_PORT),
                    total + 4096, job, "checkpoint")
        yield t


@dataclass(frozen=True)
class Profile:
    """A generator profile: one kind of application job, and the share of small flows it aims at."""

    name: str
    description: str
    job: Callable[[_Cluster, int, float], _Steps]
    #: Mean time between job starts (ns): a few jobs run at once.
    job_gap_ns: float
    #: (upper edge in bytes, target share of flows <= it): the paper's statement the profile is shaped on.
    target: tuple[int, float]
    #: Every flow is larger than this (bytes), if the profile promises it.
    min_exclusive: int = 0
    #: How many job configurations (datasets, graphs, models) the cluster's users run.
    catalogue: int = 24


PROFILES: dict[str, Profile] = {
    p.name: p
    for p in (
        Profile("kmeans", "Spark K-Means: centroid-sized tasks and results, HDFS loads (~95% <= 100 KB)",
                _kmeans_job, 400 * _MS, (100_000, 0.95)),
        Profile("pagerank", "Spark GraphX PageRank: drifting shuffle blocks between workers (~74% <= 100 KB)",
                _pagerank_job, 300 * _MS, (100_000, 0.74)),
        Profile("sgd", "parameter-server SGD: 256 KB slices, sparse pushes, all flows > 44 B (~66% <= 100 KB)",
                _sgd_job, 400 * _MS, (100_000, 0.66), min_exclusive=44),
        Profile("tensorflow", "distributed TensorFlow: tiny gRPC control and scalar tensors (~77% < 100 B)",
                _tensorflow_job, 400 * _MS, (99, 0.77), catalogue=6),
    )
}


def _check_int(what: str, value: Any, minimum: int, maximum: int | None = None) -> int:
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, (int, np.integer)):
        raise TraceError(f"{what} must be an integer, got {value!r}")
    v = int(value)
    if v < minimum or (maximum is not None and v > maximum):
        hi = f" and <= {maximum}" if maximum is not None else ""
        raise TraceError(f"{what} must be >= {minimum}{hi}, got {v}")
    return v


def generate(profile: str, flows: int, seed: int, *, hosts: int = 16) -> pd.DataFrame:
    """A trace of ``flows`` flows of application ``profile`` (see :data:`PROFILES`) on ``hosts`` machines, with
    features (:func:`add_features`) and the hidden columns ``job`` and ``kind``. Deterministic for a seed.

    The trace is the first ``flows`` flows, by start time, of jobs started one after another (Poisson job arrivals);
    it starts at the first flow of the first job (``start_ns`` = 0 there).
    """
    if profile not in PROFILES:
        raise TraceError(f"profile: unknown {profile!r}; known: {', '.join(PROFILES)}")
    prof = PROFILES[profile]
    flows = _check_int("flows", flows, 1, 50_000_000)
    seed = _check_int("seed", seed, 0)
    hosts = _check_int("hosts", hosts, 5, 65_535)
    rng = np.random.default_rng(seed)
    cl = _Cluster(rng, hosts, prof.catalogue)
    # Jobs run side by side: always advance the one whose clock is earliest by one iteration, and start a new job
    # when the next arrival comes first. Once the flows that start before every clock (and before the next
    # arrival) number `flows`, nothing later can come before them: those are the trace.
    running: list[tuple[float, int, _Steps]] = []
    next_start, job = 0.0, 0
    checked = 0
    while True:
        if not running or next_start <= running[0][0]:
            steps = prof.job(cl, job, next_start)
            heapq.heappush(running, (next_start, job, steps))
            job += 1
            next_start += rng.exponential(prof.job_gap_ns)
        _, jid, steps = heapq.heappop(running)
        clock = next(steps, None)
        if clock is not None:
            heapq.heappush(running, (clock, jid, steps))
        if len(cl.rows) >= flows and len(cl.rows) - checked >= max(1000, flows // 10):
            checked = len(cl.rows)
            frontier = min(next_start, running[0][0]) if running else next_start
            starts = np.fromiter((r[0] for r in cl.rows), dtype=np.int64, count=len(cl.rows))
            if np.count_nonzero(starts < frontier) >= flows:
                break
    cols = list(zip(*cl.rows))
    df = pd.DataFrame({
        "src": np.asarray(cols[1], dtype=np.int64),
        "dst": np.asarray(cols[2], dtype=np.int64),
        "size_bytes": np.asarray(cols[6], dtype=np.int64),
        "start_ns": np.asarray(cols[0], dtype=np.int64),
        "sport": np.asarray(cols[3], dtype=np.int64),
        "dport": np.asarray(cols[4], dtype=np.int64),
        "proto": np.asarray(cols[5], dtype=np.int64),
        "job": np.asarray(cols[7], dtype=np.int64),
        "kind": pd.Categorical(cols[8]),
    })
    df = df.sort_values("start_ns", kind="stable").iloc[:flows].reset_index(drop=True)
    df["start_ns"] -= df["start_ns"].iloc[0]
    df.attrs["profile"] = profile
    df.attrs["seed"] = seed
    return add_features(df)


def profile_stats(df: pd.DataFrame) -> dict[str, float]:
    """Shape of a trace's size distribution: shares of small and tiny flows, tail ratios."""
    s = df["size_bytes"].to_numpy(dtype=np.float64)
    srt = np.sort(s)[::-1]
    top = max(1, int(math.ceil(0.05 * len(s))))
    return {
        "flows": float(len(s)),
        "share_le_100kb": float(np.mean(s <= 100_000)),
        "share_lt_100b": float(np.mean(s < 100)),
        "min_bytes": float(s.min()),
        "median_bytes": float(np.median(s)),
        "mean_bytes": float(s.mean()),
        "p99_bytes": float(np.quantile(s, 0.99)),
        "max_bytes": float(s.max()),
        "p99_over_median": float(np.quantile(s, 0.99) / np.median(s)),
        "max_over_mean": float(s.max() / s.mean()),
        "bytes_in_top_5pct": float(srt[:top].sum() / s.sum()),
    }


# --------------------------------------------------------------------------------------------------------------
# Features
# --------------------------------------------------------------------------------------------------------------


def add_features(df: pd.DataFrame, *, key: tuple[str, ...] | None = None) -> pd.DataFrame:
    """The §4.1 history features, added to (a copy of) a trace sorted by start time: ``gap_ns`` and
    ``prev_size_1..5`` per connection, ``MISSING`` where there is no history.

    ``key`` names the columns that identify a connection: by default the 5-tuple when the trace has one, else
    ``("src", "dst")``.
    """
    out = df.copy()
    if key is None:
        key = TUPLE_COLUMNS if all(c in out.columns for c in TUPLE_COLUMNS) else ("src", "dst")
    for c in (*key, "size_bytes", "start_ns"):
        if c not in out.columns:
            raise TraceError(f"add_features: missing column {c!r}")
    start = out["start_ns"].to_numpy()
    if len(start) > 1 and np.any(np.diff(start) < 0):
        raise TraceError("add_features: the trace must be sorted by start_ns")
    g = out.groupby(list(key), sort=False, dropna=False)
    gap = out["start_ns"] - g["start_ns"].shift(1)
    out["gap_ns"] = gap.fillna(MISSING).astype(np.int64)
    sizes = g["size_bytes"]
    for k, col in enumerate(HISTORY_COLUMNS, start=1):
        out[col] = sizes.shift(k).fillna(MISSING).astype(np.int64)
    return out


#: Named feature sets: ``paper`` is §4.1 as written (with the absolute start time); ``default`` leaves the start
#: time out. A forest cannot extrapolate in time: every test flow starts after every training flow, so each split
#: on start_ns sends all of them to the side of the latest training flows, and they are judged by whatever the
#: cluster ran last. Measured on generated traces (40,000 flows, 30 trees, seeds 1 and 2), the bounded share with /
#: without the start time: kmeans 95.4 / 96.2% and 95.7 / 99.8%, pagerank 99.67 / 99.71% and 98.5 / 99.74%, sgd
#: 99.79 / 99.78% and 91.2 / 99.85%, tensorflow 99.84 / 99.78% and 99.88 / 99.88%.
FEATURE_SETS = ("default", "paper")


def feature_columns(df: pd.DataFrame, which: str = "default") -> list[str]:
    """The predictor's features for this trace (see :data:`FEATURE_SETS`): [start time,] gap, last sizes, then the
    5-tuple fields (or, for a FLUX trace, its own columns)."""
    if which not in FEATURE_SETS:
        raise TraceError(f"feature set must be one of {', '.join(FEATURE_SETS)}, got {which!r}")
    cols = ["start_ns", "gap_ns", *HISTORY_COLUMNS] if which == "paper" else ["gap_ns", *HISTORY_COLUMNS]
    if df.attrs.get("format") == "flux" or all(c in df.columns for c in FLUX_FEATURES):
        cols += [c for c in FLUX_FEATURES if c in df.columns]
    else:
        cols += [c for c in TUPLE_COLUMNS if c in df.columns]
    missing = [c for c in cols if c not in df.columns]
    if missing:
        raise TraceError(f"trace: missing feature column {missing[0]!r} (run add_features first)")
    return cols


def split_by_time(df: pd.DataFrame, train_fraction: float = 0.8) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The first ``train_fraction`` of the flows by start time, and the rest (§5.1: train on 80%, test on 20%).

    The trace is sorted by start time, so this is a cut at one instant: every training flow starts no later than
    every test flow. Both parts keep their features (a test flow's history may lie in the training part, as it
    would on a live host)."""
    if not (isinstance(train_fraction, (int, float)) and 0 < train_fraction < 1):
        raise TraceError(f"train_fraction must be within (0, 1), got {train_fraction!r}")
    n = len(df)
    if n < 2:
        raise TraceError(f"trace: {n} flow(s); at least 2 are needed to split into training and test parts")
    cut = min(n - 1, max(1, int(round(train_fraction * n))))
    start = df["start_ns"].to_numpy()
    if np.any(np.diff(start) < 0):
        raise TraceError("trace: not sorted by start_ns")
    return df.iloc[:cut].copy(), df.iloc[cut:].copy()


# --------------------------------------------------------------------------------------------------------------
# FLUX traces
# --------------------------------------------------------------------------------------------------------------


def load_flux(path: str | Path, *, time_unit_ns: float = 1e9) -> pd.DataFrame:
    """Read FLUX per-flow CSV files (one file, or every ``*.csv`` under a directory, in name order) into the
    trace shape of this module.

    Each file is one sequence of flows in time order (the FLUX code builds its 5-row windows per file), so the
    history features are computed per file: the "connection" of a row is its file. ``flow_size`` becomes
    ``size_bytes`` (rounded; a size below 1 B becomes 1 B, counted in ``attrs["clipped_sizes"]``), ``time`` x
    ``time_unit_ns`` becomes ``start_ns`` (units undocumented: seconds assumed). ``machine`` (if numeric, else its
    category code) becomes ``src``. FLUX rows do not name a receiver: ``dst`` is a placeholder, the next machine
    (``(src + 1) mod max(2, machines)``), so that the rows can be written as an fctlab trace; it is not a feature.
    The other FLUX columns are kept under their names and are features (:data:`FLUX_FEATURES`); ``index`` is
    dropped. Required: ``time`` and ``flow_size``; a missing other column is filled with 0.
    """
    path = Path(path)
    if path.is_dir():
        files = sorted(p for p in path.rglob("*.csv") if p.is_file())
        if not files:
            raise TraceError(f"{path}: no .csv files under this directory")
    elif path.is_file():
        files = [path]
    else:
        raise TraceError(f"{path}: no such file or directory")
    if not (isinstance(time_unit_ns, (int, float)) and math.isfinite(time_unit_ns) and time_unit_ns > 0):
        raise TraceError(f"time_unit_ns must be a positive number, got {time_unit_ns!r}")
    parts = []
    for seq, f in enumerate(files):
        try:
            raw = pd.read_csv(f, index_col=False, skipinitialspace=True)
        except Exception as exc:  # pandas raises many types for a malformed file
            raise TraceError(f"{f}: cannot read FLUX CSV: {exc}") from None
        raw.columns = [str(c).strip() for c in raw.columns]
        for c in ("time", "flow_size"):
            if c not in raw.columns:
                raise TraceError(f"{f}: missing FLUX column {c!r} (columns: {', '.join(FLUX_COLUMNS)})")
        unknown = [c for c in raw.columns if c not in FLUX_COLUMNS]
        if unknown:
            raise TraceError(f"{f}: unknown column {unknown[0]!r}; FLUX columns are {', '.join(FLUX_COLUMNS)}")
        part = pd.DataFrame(index=raw.index)
        for c in FLUX_COLUMNS:
            if c == "index":
                continue
            if c in raw.columns:
                num = pd.to_numeric(raw[c], errors="coerce")
                bad = num.isna() & raw[c].notna()
                if c == "machine" and bad.any():  # machine names: numbered in sorted order
                    num = pd.Series(pd.Categorical(raw[c].astype(str)).codes, index=raw.index).astype(float)
                    bad = pd.Series(False, index=raw.index)
                if bad.any() or (c in ("time", "flow_size") and num.isna().any()):
                    i = int(np.flatnonzero((bad | num.isna()).to_numpy())[0])
                    raise TraceError(f"{f}: column {c!r}, row {i + 1} (line {i + 2}): not a number: {raw[c].iloc[i]!r}")
                part[c] = num.fillna(0.0).to_numpy(dtype=np.float64)
            else:
                part[c] = 0.0
        part["_seq"] = seq
        part = part.sort_values("time", kind="stable")
        parts.append(part)
    df = pd.concat(parts, ignore_index=True)
    size = np.rint(df["flow_size"].to_numpy())
    clipped = int(np.sum(size < 1))
    machines = df["machine"].to_numpy()
    src = np.rint(machines).astype(np.int64)
    if np.any(src < 0):
        raise TraceError(f"{files[0] if len(files) == 1 else path}: column 'machine': negative machine index")
    n_mach = max(2, int(src.max()) + 1)
    out = pd.DataFrame({
        "src": src,
        "dst": (src + 1) % n_mach,
        "size_bytes": np.maximum(size, 1).astype(np.int64),
        "start_ns": np.rint(df["time"].to_numpy() * time_unit_ns).astype(np.int64),
        "_seq": df["_seq"].to_numpy(dtype=np.int64),
    })
    for c in FLUX_FEATURES:
        out[c] = df[c].to_numpy(dtype=np.float64)
    if np.any(out["start_ns"] < 0):
        raise TraceError(f"{path}: column 'time': negative time")
    out = out.sort_values("start_ns", kind="stable").reset_index(drop=True)
    out = add_features(out, key=("_seq",)).drop(columns="_seq")
    out.attrs["format"] = "flux"
    out.attrs["clipped_sizes"] = clipped
    out.attrs["files"] = len(files)
    return out


# --------------------------------------------------------------------------------------------------------------
# Files
# --------------------------------------------------------------------------------------------------------------


def features_path(path: str | Path) -> Path:
    """The side file of a trace: ``trace.parquet`` -> ``trace.features.parquet``."""
    p = Path(path)
    return p.with_name(p.stem + FEATURES_TAG + p.suffix)


def _check_suffix(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix not in (".csv", ".parquet"):
        raise TraceError(f"{path}: trace files must end in .csv or .parquet")
    return suffix


def write_table(df: pd.DataFrame, path: Path) -> None:
    """Write a table to .csv or .parquet (zstd), atomically."""
    from fctlab.results import atomic_write

    if path.suffix.lower() == ".csv":
        atomic_write(path, lambda f: f.write(df.to_csv(index=False).encode("utf-8")))
    else:
        import pyarrow as pa
        import pyarrow.parquet as pq

        table = pa.Table.from_pandas(df, preserve_index=False)
        atomic_write(path, lambda f: pq.write_table(table, f, compression="zstd"))


def save_trace(df: pd.DataFrame, path: str | Path) -> tuple[Path, Path]:
    """Write a trace: ``path`` with ``src, dst, size_bytes, start_ns`` (read by ``workloads.read_trace``) and the
    side file :func:`features_path` with every column. Each file is written atomically (side file first).
    Returns both paths."""
    path = Path(path)
    _check_suffix(path)
    for c in TRACE_COLUMNS:
        if c not in df.columns:
            raise TraceError(f"trace: missing column {c!r}")
    full = df.copy()
    if "kind" in full.columns:
        full["kind"] = full["kind"].astype(str)
    side = features_path(path)
    write_table(full, side)
    write_table(df[list(TRACE_COLUMNS)], path)
    return path, side


def _read_table(path: Path) -> pd.DataFrame:
    try:
        if path.suffix.lower() == ".csv":
            return pd.read_csv(path, skipinitialspace=True)
        return pd.read_parquet(path)
    except FileNotFoundError:
        raise TraceError(f"{path}: no such file") from None
    except Exception as exc:  # pandas/pyarrow raise many types for a malformed file
        raise TraceError(f"{path}: cannot read: {exc}") from None


def load_trace(path: str | Path, *, time_unit_ns: float = 1e9) -> pd.DataFrame:
    """Read a trace with features, whatever its kind:

    * a trace written by :func:`save_trace` (give either file): the side file, checked against the trace beside it;
    * a FLUX CSV file or a directory of them (:func:`load_flux`);
    * a plain fctlab trace (``workloads.read_trace``): features computed with the (src, dst) pair as the
      connection, and ``MISSING`` ports and protocol.
    """
    from fctlab.workloads import WorkloadError, read_trace

    path = Path(path)
    if path.is_dir():
        return load_flux(path, time_unit_ns=time_unit_ns)
    _check_suffix(path)
    if not path.exists():
        raise TraceError(f"{path}: no such trace file")
    if path.stem.endswith(FEATURES_TAG):
        side, main = path, path.with_name(path.stem[: -len(FEATURES_TAG)] + path.suffix)
    else:
        side, main = features_path(path), path
    if side.exists():
        df = _read_table(side)
        missing = [c for c in (*TRACE_COLUMNS, "sport", "dport", "proto") if c not in df.columns]
        if missing:
            raise TraceError(f"{side}: missing column {missing[0]!r}")
        df = df.sort_values("start_ns", kind="stable").reset_index(drop=True)
        if main.exists() and main != side:
            base = _read_table(main)
            same = len(base) == len(df) and all(
                c in base.columns and np.array_equal(base[c].to_numpy(np.int64), df[c].to_numpy(np.int64))
                for c in TRACE_COLUMNS
            )
            if not same:
                raise TraceError(f"{main}: its flows differ from those of its features file {side.name}")
        if "kind" in df.columns:
            df["kind"] = pd.Categorical(df["kind"].astype(str))
        for c in ("src", "dst", "size_bytes", "start_ns", "sport", "dport", "proto"):
            df[c] = df[c].astype(np.int64)
        return add_features(df.drop(columns=[c for c in ("gap_ns", *HISTORY_COLUMNS) if c in df.columns]))
    if path.suffix.lower() == ".csv":
        with open(path, encoding="utf-8", errors="replace") as f:
            header = f.readline()
        cols = {c.strip() for c in header.split(",")}
        if "flow_size" in cols and "time" in cols:
            return load_flux(path, time_unit_ns=time_unit_ns)
    try:
        flows = read_trace(path)
    except WorkloadError as e:
        raise TraceError(str(e)) from None
    df = pd.DataFrame({
        "src": flows["src"].to_numpy(np.int64),
        "dst": flows["dst"].to_numpy(np.int64),
        "size_bytes": flows["size_bytes"].to_numpy(np.int64),
        "start_ns": (flows["start_ps"].to_numpy(np.int64) + 500) // 1000,
        "sport": MISSING,
        "dport": MISSING,
        "proto": MISSING,
    })
    return add_features(df, key=("src", "dst"))

