"""Old home of the PDQ paper's optimal references, kept for one release: they now live in
:mod:`fctlab.theory.pdq_optimum`."""

from fctlab.theory.pdq_optimum import (
    latency_from_ideal,
    moore_hodgson,
    optimal_application_throughput,
    srpt_fct_ns,
    transmission_ns,
)

__all__ = [
    "transmission_ns",
    "latency_from_ideal",
    "srpt_fct_ns",
    "moore_hodgson",
    "optimal_application_throughput",
]
