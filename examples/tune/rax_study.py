"""RAX's E (``scheme.rax_base``) and Q_1 (``scheme.rax_q1_us``) tuned by simulation on the RAX paper's testbed
(fctlab's ``reproduce rax`` setting: 10 hosts on one 1 GbE switch, nine senders to one receiver, file-server
generation rates, web search), at the packet level (the flow level has no generation rates).

The search runs on seed 1; the tuned knobs, the paper's (E = 2, Q_1 = 1,280 us, under the recipe's "span"
reading of Eq. 3) and PIAS with its derived thresholds then run on seed 2, flows the search never saw.

    PYTHONPATH=python .venv/bin/python examples/tune/rax_study.py [--budget 20] [--load 0.9] [--flows 1500]

About 5 minutes on a quiet 2-core machine. The numbers of a run are in docs/tuning.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import fctlab
from fctlab.config import experiment_from_dict
from fctlab.recipes import rax
from fctlab.tune import toml_document, tune

SPACE = {"scheme": {"rax_base": {"kind": "float", "low": 1.5, "high": 6.0},
                    "rax_q1_us": {"kind": "log-float", "low": 400.0, "high": 4000.0}}}


def mean_us(exp: fctlab.Experiment) -> dict[str, float]:
    s = fctlab.simulate(exp).summary
    return {b: s["bins"][b]["mean_fct_ns"] / 1e3 for b in ("small", "medium", "large", "all")} | {
        "small_p99": s["bins"]["small"]["p99_fct_ns"] / 1e3, "unfinished": s["unfinished_flows"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=20)
    ap.add_argument("--load", type=float, default=0.9)
    ap.add_argument("--flows", type=int, default=1500)
    ap.add_argument("--out", default="out/tune-rax")
    args = ap.parse_args()
    sc = rax.RaxScale(testbed_loads=(args.load,), sim_loads=(0.5,), testbed_flows=args.flows, sim_flows=args.flows)
    raw = rax._point("testbed", rax.TESTBED_VARIANTS[2], "websearch", args.load, sc)
    raw["name"] = "tune-rax-testbed"
    raw.pop("label", None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "rax-testbed.toml").write_text(toml_document(raw, ["RAX on the RAX paper's testbed (fctlab.recipes.rax)"]))
    report = tune(out / "rax-testbed.toml", SPACE, "mean_fct", args.budget, study_dir=out / "study", sampler_seed=1,
                  best_run=False,
                  progress=lambda e: print(f"  [{e.done}/{e.total}] trial {e.number}: {e.values}", flush=True))
    held = dict(raw, seed=2)
    pias_raw = rax._point("testbed", rax.TESTBED_VARIANTS[1], "websearch", args.load, sc) | {"seed": 2}
    runs = {
        "RAX paper (E=2, Q1=1280us)": held,
        "RAX tuned": dict(held, scheme=dict(held["scheme"], rax_base=report.best["scheme.rax_base"],
                                             rax_q1_us=report.best["scheme.rax_q1_us"])),
        f"{rax.TESTBED_VARIANTS[1].label}": pias_raw,
    }
    results = {name: mean_us(experiment_from_dict(r)) for name, r in runs.items()}
    row = {"load": args.load, "flows": args.flows, "best": report.best, "best_search_mean_us": report.best_values,
           "held_out_seed2": results}
    print(json.dumps(row, indent=1))
    (out / "study_result.json").write_text(json.dumps(row, indent=1))


if __name__ == "__main__":
    main()
