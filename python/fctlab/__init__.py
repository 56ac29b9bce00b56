"""fctlab: a packet-level simulator and experiment toolkit for data-center flow scheduling.

The engine is Rust (``fctlab._core``); this package is its front: experiments as TOML files or dicts
(:func:`load_experiment`), runs (:func:`simulate` -> :class:`Result` with a per-flow DataFrame and a summary),
result files (:func:`write_results`), sweeps (:func:`load_sweep`, :func:`run_sweep`), the DuckDB catalog of a
results folder (``fctlab.catalog(DIR)`` -> runs and flows DataFrames), workloads (:mod:`fctlab.workloads`),
statistics (:mod:`fctlab.analyze`) and plots (:mod:`fctlab.plot`).

Imports here are lazy: ``import fctlab`` loads neither numpy, pandas nor the engine, so the command line starts
fast; each public name is imported on first use.

    >>> import fctlab
    >>> exp = fctlab.load_experiment("examples/quick.toml", overrides=["scheme.name=tcp"])
    >>> result = fctlab.simulate(exp)
    >>> result.flows.groupby("size_bin").fct_ns.mean()
    >>> fctlab.write_results(result, "out/quick-tcp")
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    __version__: str
    from fctlab.config import ConfigError, Experiment, experiment_from_dict, load_experiment
    from fctlab.results import read_results, write_results
    from fctlab.simulation import Result, build_flows, simulate
    from fctlab.sweep import load_sweep, run_sweep
    from fctlab import catalog as catalog

# public name -> module that defines it
_LAZY = {
    "ConfigError": "fctlab.config",
    "Experiment": "fctlab.config",
    "load_experiment": "fctlab.config",
    "experiment_from_dict": "fctlab.config",
    "Result": "fctlab.simulation",
    "simulate": "fctlab.simulation",
    "build_flows": "fctlab.simulation",
    "write_results": "fctlab.results",
    "read_results": "fctlab.results",
    "load_sweep": "fctlab.sweep",
    "run_sweep": "fctlab.sweep",
}
# public name -> submodule that is itself the public object (fctlab.catalog is a callable module)
_LAZY_MODULES = {"catalog": "fctlab.catalog"}

__all__ = ["__version__", *_LAZY, *_LAZY_MODULES]


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("fctlab")
    except PackageNotFoundError:  # a source tree that was never installed
        return "0.0.0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        value = globals()["__version__"] = _version()
        return value
    if name in _LAZY_MODULES:
        value = globals()[name] = import_module(_LAZY_MODULES[name])
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'fctlab' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY) | set(_LAZY_MODULES))
