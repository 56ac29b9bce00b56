"""PIAS's demotion thresholds tuned by simulation against the PIAS paper's derivation (web search, 8 queues).

For each load: tune the seven thresholds for the mean FCT of all flows, screening at the flow level and
confirming the best few at the packet level (seed 1); then run the tuned and the derived thresholds at the
packet level on flows the search never saw (seed 2) and print both. Results go to out/tune-pias/load=L/.

    PYTHONPATH=python .venv/bin/python examples/tune/pias_study.py [--budget 60] [--confirm 5] [--loads 0.5,0.8]

About 3 minutes a load on a quiet 2-core machine. The numbers of a run are in docs/tuning.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import fctlab
from fctlab.config import load_experiment
from fctlab.tune import tune

HERE = Path(__file__).resolve().parent


def stats(exp: fctlab.Experiment) -> dict[str, float]:
    s = fctlab.simulate(exp).summary
    b = s["bins"]
    return {"all_mean_us": b["all"]["mean_fct_ns"] / 1e3, "small_mean_us": b["small"]["mean_fct_ns"] / 1e3,
            "small_p99_us": b["small"]["p99_fct_ns"] / 1e3, "large_mean_us": b["large"]["mean_fct_ns"] / 1e3,
            "unfinished": s["unfinished_flows"]}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=60)
    ap.add_argument("--confirm", type=int, default=5)
    ap.add_argument("--loads", default="0.5,0.8")
    ap.add_argument("--out", default="out/tune-pias")
    args = ap.parse_args()
    rows = []
    for load in [float(x) for x in args.loads.split(",")]:
        study = Path(args.out) / f"load={load}"
        report = tune(HERE / "pias-websearch.toml", HERE / "pias-thresholds.toml", "mean_fct", args.budget,
                      study_dir=study, overrides=[f"workload.load={load}"], screen="flow", confirm=args.confirm,
                      sampler_seed=1, best_run=False,
                      progress=lambda e: print(f"  load {load}: [{e.done}/{e.total}] {e.level} trial {e.number}: "
                                               f"{e.values}", flush=True))
        base = load_experiment(HERE / "pias-websearch.toml", [f"workload.load={load}", "seed=2"])
        derived = list(base.derived_thresholds["thresholds_bytes"])
        tuned = report.best["scheme.thresholds_bytes"]
        held_out = {name: stats(base.with_overrides([f"scheme.thresholds_bytes={json.dumps(t)}"]))
                    for name, t in (("derived", derived), ("tuned", tuned))}
        # the derived thresholds on the search's own flows (seed 1), at both levels, beside the search's best
        seed1 = load_experiment(HERE / "pias-websearch.toml", [f"workload.load={load}"])
        derived_seed1 = {lvl: stats(seed1.with_overrides([f"run.level={lvl}"])) for lvl in ("flow", "packet")}
        row = {"load": load, "derived": derived, "tuned": tuned, "agreement": report.agreement,
               "best_screen": report.trials[report.trials["stage"] == "search"]["objective"].min(),
               "best_packet": report.best_values[0], "derived_seed1": derived_seed1, "held_out": held_out}
        rows.append(row)
        print(json.dumps(row, indent=1, default=str), flush=True)
        (study / "study_result.json").write_text(json.dumps(row, indent=1, default=str))
    print("\nload | thresholds | all mean (us) | small mean | small p99 | large mean   (packet level, seed 2)")
    for r in rows:
        for name in ("derived", "tuned"):
            h = r["held_out"][name]
            print(f"{r['load']} | {name} {r[name]} | {h['all_mean_us']:.1f} | {h['small_mean_us']:.1f} | "
                  f"{h['small_p99_us']:.1f} | {h['large_mean_us']:.1f}")


if __name__ == "__main__":
    main()
