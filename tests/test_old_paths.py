"""Module paths users may import from the flat layout still work for one release, as thin re-exports of the
packages that now hold the code."""

from __future__ import annotations

import importlib

import pytest


@pytest.mark.parametrize("old, new, names", [
    ("fctlab.cli_sweep", "fctlab.cli.sweep", ["register", "sweep", "signals_interrupt", "Terminated"]),
    ("fctlab.cli_report", "fctlab.cli.report", ["register", "report", "thresholds", "hyline_band"]),
    ("fctlab.cli_predict", "fctlab.cli.predict", ["register", "predict_app", "generate", "train", "annotate"]),
    ("fctlab.hyline", "fctlab.theory.hyline_band",
     ["Band", "BandError", "band", "first_class_share", "waiting_time", "plot_band", "FIRST_CLASS_SHARE"]),
    ("fctlab.optimal", "fctlab.theory.pdq_optimum",
     ["transmission_ns", "latency_from_ideal", "srpt_fct_ns", "moore_hodgson", "optimal_application_throughput"]),
])
def test_old_module_reexports_the_new_one(old, new, names):
    old_module, new_module = importlib.import_module(old), importlib.import_module(new)
    for name in names:
        assert getattr(old_module, name) is getattr(new_module, name), f"{old}.{name}"
    assert set(old_module.__all__) >= set(names)


def test_package_level_names_of_the_split_modules():
    import fctlab.predict as predict
    import fctlab.workloads as wl
    from fctlab.predict import evaluation, model
    from fctlab.workloads import cdf, patterns, trace

    assert wl.load_cdf is cdf.load_cdf and wl.read_trace is trace.read_trace and wl.generate is patterns.generate
    assert predict.Model is model.Model and predict.evaluate is evaluation.evaluate
    for name in wl.__all__:
        assert hasattr(wl, name), name
    for name in predict.__all__:
        assert hasattr(predict, name), name


def test_every_pattern_generator_has_its_public_dataframe_form():
    import inspect

    import fctlab.workloads as wl

    for name, pattern in wl.PATTERNS.items():
        public = getattr(wl, name)
        assert public.__name__ == name and public.__doc__ == pattern.columns.__doc__
        assert list(inspect.signature(public).parameters) == list(inspect.signature(pattern.columns).parameters)
