"""HyLine's threshold H (``scheme.hyline_threshold_bytes``) tuned by simulation against the §IV-E band, on the
HyLine paper's fabric (fctlab's ``reproduce hyline`` setting: a k = 8 fat-tree of 128 hosts at 1 Gbps, web
search at nominal load 0.6, HyLine with PFC on its second queue), at the packet level (the flow level does not
model HyLine). Trial 0 is the paper's H = 1 MB (--baseline).

    PYTHONPATH=python .venv/bin/python examples/tune/hyline_study.py [--budget 10] [--flows 2000]

About a minute a trial on a quiet 2-core machine at 2,000 flows. The numbers of a run are in docs/tuning.md.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from fctlab.recipes import hyline
from fctlab.theory.hyline_band import band
from fctlab.tune import toml_document, tune

SPACE = {"scheme": {"hyline_threshold_bytes": {"kind": "log-int", "low": 50_000, "high": 10_000_000}}}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--budget", type=int, default=10)
    ap.add_argument("--flows", type=int, default=2000)
    ap.add_argument("--out", default="out/tune-hyline")
    args = ap.parse_args()
    sc = hyline.HYLINE_SCALES["small"]
    series = next(s for s in hyline.SCHEMES if s.scheme == "hyline")
    raw = hyline._raw(series, "websearch", 0.6, sc, 1)
    raw["workload"].update(flows=args.flows, warmup_flows=args.flows // 10, cooldown_flows=args.flows // 10)
    raw["name"] = "tune-hyline-websearch"
    raw.pop("label", None)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    (out / "hyline.toml").write_text(toml_document(raw, ["HyLine on the HyLine paper's fabric (fctlab.recipes.hyline)"]))
    report = tune(out / "hyline.toml", SPACE, "mean_slowdown", args.budget, study_dir=out / "study", baseline=True,
                  sampler_seed=1, best_run=False,
                  progress=lambda e: print(f"  [{e.done}/{e.total}] trial {e.number}: {e.values}", flush=True))
    t = report.trials
    row = {"flows": args.flows, "best": report.best, "best_mean_slowdown": report.best_values,
           "trials": [[int(r["trial"]), int(r["scheme.hyline_threshold_bytes"]), r["objective"]]
                      for _, r in t.iterrows()]}
    # the paper's §IV-E band of H for this workload, load (the offered one), link and T_cost (100 us)
    b = band("websearch", raw["workload"]["load"], 1e9, 100e-6)
    row["band_bytes"] = [b.lower, b.upper]
    print(json.dumps(row, indent=1, default=str))
    (out / "study_result.json").write_text(json.dumps(row, indent=1, default=str))


if __name__ == "__main__":
    main()
