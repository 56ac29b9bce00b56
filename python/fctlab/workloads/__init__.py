"""Flow-size distributions, traffic patterns and flow traces.

A workload is a table of flows (who sends how many bytes to whom, and when) handed to the core. This module
reads the published flow-size CDFs shipped in ``fctlab/data/workloads`` (each file's ``#`` header names its
source), draws flow sizes from them exactly as the ns-2 scripts of pFabric and PIAS did, turns them into
arrival processes whose offered load is the load on the host links (docs/experiment.md gives the definition
per pattern), and reads user traces.

Sampling semantics (``Cdf.sample``): ns-2's ``RandomVariable/Empirical`` with ``interpolation_ 2``, followed by
the scripts' ``ceil``:

1. draw ``u ~ U[0, 1)``;
2. if ``u <= probs[0]``, the value is ``sizes[0]`` (so a table whose first probability is above 0, like
   ``homa_w3_google_all_rpc``, puts that much mass on its first size);
3. otherwise take the first ``i`` with ``u <= probs[i]`` (segment ``(probs[i-1], probs[i]]``; segments of zero
   width are never chosen) and interpolate linearly: ``x = sizes[i-1] + (u - probs[i-1]) / (probs[i] -
   probs[i-1]) * (sizes[i] - sizes[i-1])``. A repeated size (a vertical step of the CDF) gives a constant;
4. round ``x`` up to a whole number of ``unit_bytes``, and to at least one unit.

``unit_bytes`` is 1460 for the ns-2 tables kept in packets (their header says "original units: packets"; sizes
in the file are already packets x 1460) and 1 for byte tables. For the packet tables this reproduces
``ceil(value) * 1460`` of ``tcp-common-opt.tcl`` exactly, because the interpolation is done in packets.

Flow tables (DataFrames) returned here have the columns ``flow_id`` (uint32, 0..n-1 in start order), ``src``,
``dst`` (uint32 host indices), ``size_bytes`` (uint64), ``start_ps`` (uint64 picoseconds: the core's clock is
an integer) and ``priority`` (uint8), plus pattern-specific columns. Every generator takes a
``numpy.random.Generator`` and draws from it in a fixed order, so a seed fixes the table; that order is part of
the contract (changing it changes every seeded experiment).

The package's rooms: :mod:`~fctlab.workloads.cdf` (flow-size distributions), :mod:`~fctlab.workloads.patterns`
(one generator per pattern in :data:`PATTERNS`, and :func:`generate`), :mod:`~fctlab.workloads.extras`
(deadlines, data generation rates), :mod:`~fctlab.workloads.trace` (flow traces), :mod:`~fctlab.workloads.table`
(the flow table) and :mod:`~fctlab.workloads.checks` (argument checks, :class:`WorkloadError`). Every name
below is importable from ``fctlab.workloads`` itself.

The package imports nothing else from fctlab, so it can be used and tested without the compiled core. pandas is
imported only when a DataFrame is made: the generators in :data:`PATTERNS` (and :func:`generate`) return
:class:`FlowColumns`, which needs numpy alone.
"""

from __future__ import annotations

from fctlab.workloads.cdf import (
    CDF_SUFFIX,
    DATA_DIR,
    NS2_PACKET_BYTES,
    SMALL_FLOW_BYTES,
    Cdf,
    UniformSizes,
    cdf_names,
    describe,
    list_cdfs,
    load_cdf,
)
from fctlab.workloads.checks import WorkloadError
from fctlab.workloads.extras import (
    GEN_RATE_DISTS,
    RATE_DIR,
    deadlines,
    gen_rates,
    list_rate_cdfs,
    load_rate_cdf,
    wire_bytes,
)
from fctlab.workloads.patterns import (
    PATTERNS,
    Pattern,
    aggregation,
    all_to_all,
    generate,
    incast,
    permutation,
    staggered,
    stride,
)
from fctlab.workloads.table import FlowColumns, check_hosts, column
from fctlab.workloads.trace import MAX_START_NS, TRACE_OPTIONAL, TRACE_REQUIRED, read_trace

__all__ = [
    "Cdf",
    "WorkloadError",
    "NS2_PACKET_BYTES",
    "SMALL_FLOW_BYTES",
    "DATA_DIR",
    "RATE_DIR",
    "CDF_SUFFIX",
    "list_cdfs",
    "cdf_names",
    "load_cdf",
    "all_to_all",
    "permutation",
    "incast",
    "aggregation",
    "stride",
    "staggered",
    "PATTERNS",
    "Pattern",
    "generate",
    "UniformSizes",
    "deadlines",
    "GEN_RATE_DISTS",
    "gen_rates",
    "load_rate_cdf",
    "list_rate_cdfs",
    "wire_bytes",
    "read_trace",
    "TRACE_REQUIRED",
    "TRACE_OPTIONAL",
    "MAX_START_NS",
    "check_hosts",
    "describe",
    "FlowColumns",
    "column",
]
