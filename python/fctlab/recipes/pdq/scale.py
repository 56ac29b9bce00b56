"""Figure 8 of the PDQ paper (section 5.5, "Impact of network scale"), part of ``fctlab reproduce pdq``.

The paper runs PDQ, D3 and RCP on three scalable topologies at growing size, with random permutation traffic, at
the flow level (its own flow-level simulator, checked against its packet level at small sizes), and reports
(a) the deadline-constrained case on the fat-tree, (b-d) the deadline-unconstrained case with 10 sending flows
per server on the fat-tree, BCube with dual-port servers and Jellyfish with 24-port switches at a 2:1 ratio of
network to server ports, and (e) the distribution of the per-flow ratio of PDQ's FCT to RCP's at about 128
servers: about 40% of the flows finish in at most half RCP's time, 5-15% take longer, under 0.9% twice as long.

Setup (what the paper gives, and what fctlab chose where it is silent; the surviving text has no axes):

* topologies: ``fat_tree`` (k = 4, 8, ...: k^3/4 servers), ``bcube`` with k = 1 (dual-port servers: n^2 servers,
  2n switches of n ports), ``jellyfish`` with 24-port switches and 16 network ports (8 servers per switch);
  every link 1 Gbps with the recipe's 10 us of propagation, one FIFO queue of 150,000 B per port, as the rest of
  the recipe;
* traffic: random permutation (each server sends to one other and receives from exactly one), 10 flows per
  server, all starting at t = 0, sizes uniform on [0.02, 1.98] x 100 KB (query aggregation's sizes);
* the deadline-constrained case (Figure 8a): the same flows with deadlines exponential with mean 20 ms (at
  least the transmission time), reported as application throughput; the paper's y axis is not in the surviving
  text, and application throughput at a fixed load is fctlab's choice;
* the unconstrained case (Figures 8b-8d): the mean FCT;
* levels: every point at the flow level (``run.level = "flow"``), and the sizes up to
  :attr:`ScaleSizes.packet_max_servers` servers at the packet level too, so the table shows how far apart the
  two levels are (the paper's own check);
* Figure 8e: PDQ(Full) against RCP on the same flows (the same seed) on the k = 8 fat-tree (128 servers), flow
  level, no deadlines: the CDF of the per-flow ratio of FCTs.

A series whose scheme, topology or level the engine refuses is left out with a note.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from fctlab.claims import Claim, above, all_of, below, in_range, near, on
from fctlab.recipes.common import Points, available, figure, save_figure
from fctlab.recipes.pdq.series import DEADLINE_MS, LINK_DELAY_NS, MEAN_KB, SCHEMES, load_runs

FIGURE = "8"
SRC = "Hong, Caesar, Godfrey, PDQ, SIGCOMM 2012, section 5.5"
FLOWS_PER_SERVER = 10
#: Jellyfish as the paper: 24-port switches, network ports : server ports = 2 : 1.
JELLYFISH_PORTS = 24
JELLYFISH_NETWORK_PORTS = 16
#: Figure 8e's fabric: the fat-tree with k = 8 (128 servers; the paper: "about 128").
RATIO_FAT_TREE_K = 8
TOPOLOGIES = ("fat_tree", "bcube", "jellyfish")
TOPOLOGY_NAMES = {"fat_tree": "Fat-tree", "bcube": "BCube (dual-port servers)",
                  "jellyfish": "Jellyfish (24-port switches, 2:1)"}


@dataclass(frozen=True)
class ScaleSizes:
    """Figure 8's sizes at one scale: the fat-tree's k, BCube's n (k = 1), Jellyfish's switch counts."""

    fat_tree: tuple[int, ...]
    bcube: tuple[int, ...]
    jellyfish: tuple[int, ...]
    seeds: tuple[int, ...]
    #: packet-level runs too, up to this many servers
    packet_max_servers: int

    def sizes(self, kind: str) -> tuple[int, ...]:
        return getattr(self, kind)


SIZES = {
    "tiny": ScaleSizes(fat_tree=(4,), bcube=(4,), jellyfish=(17,), seeds=(1,), packet_max_servers=16),
    "small": ScaleSizes(fat_tree=(4, 8), bcube=(4, 8, 12), jellyfish=(17, 34), seeds=(1,), packet_max_servers=144),
    "paper": ScaleSizes(fat_tree=(4, 8, 12, 16), bcube=(4, 8, 16, 32), jellyfish=(17, 32, 64, 128),
                        seeds=(1, 2, 3), packet_max_servers=144),
}


def topology(kind: str, size: int) -> dict[str, Any]:
    """The topology keys of one of Figure 8's fabrics, every link 1 Gbps with :data:`LINK_DELAY_NS`."""
    links = {"link_gbps": 1, "link_delay_ns": LINK_DELAY_NS}
    if kind == "fat_tree":
        return {"kind": "fat_tree", "k": int(size), **links}
    if kind == "bcube":
        return {"kind": "bcube", "n": int(size), "k": 1, **links}
    if kind == "jellyfish":
        return {"kind": "jellyfish", "switches": int(size), "ports": JELLYFISH_PORTS,
                "network_ports": JELLYFISH_NETWORK_PORTS, **links}
    raise ValueError(f"topology: one of {', '.join(TOPOLOGIES)} (got {kind!r})")


def servers(kind: str, size: int) -> int:
    """How many servers :func:`topology` has."""
    if kind == "fat_tree":
        return size**3 // 4
    if kind == "bcube":
        return size * size
    if kind == "jellyfish":
        return size * (JELLYFISH_PORTS - JELLYFISH_NETWORK_PORTS)
    raise ValueError(f"topology: one of {', '.join(TOPOLOGIES)} (got {kind!r})")


def workload(n_servers: int, deadlines: bool) -> dict[str, Any]:
    """Random permutation, :data:`FLOWS_PER_SERVER` flows per server at t = 0, sizes uniform with mean 100 KB."""
    w: dict[str, Any] = {"pattern": "permutation", "flows": FLOWS_PER_SERVER * n_servers,
                         "size_uniform_mean_bytes": MEAN_KB * 1000.0}
    if deadlines:
        w["deadline_mean_ms"] = DEADLINE_MS
    return w


def _raw(series: Any, kind: str, size: int, deadlines: bool, level: str, seed: int) -> dict[str, Any]:
    return {
        "name": "reproduce-pdq-scale",
        "label": series.label,
        "seed": int(seed),
        "topology": topology(kind, size),
        "switch": {"queues": 1, "buffer_bytes": 150_000},
        "scheme": {"name": series.scheme, **dict(series.keys)},
        "workload": workload(servers(kind, size), deadlines),
        "run": {"level": level},
    }


def values(kind: str, n_servers: int, deadlines: bool, level: str, label: str, seed: int) -> dict[str, Any]:
    """A Figure 8 point's sweep values."""
    return {"figure": FIGURE, "topology": kind, "x": n_servers, "deadlines": "yes" if deadlines else "no",
            "level": level, "variant": label, "seed": seed}


#: Figure 8's series, by label from :data:`fctlab.recipes.pdq.series.SCHEMES`: the schemes the paper's
#: flow-level simulator has.
SERIES = ("PDQ(Full)", "D3", "RCP")


def scale_series(schemes: Sequence[Any] = SCHEMES) -> list[Any]:
    """Figure 8's series (:data:`SERIES`) as the recipe's series constant (or ``schemes``) defines them."""
    return [s for s in schemes if s.label in SERIES]


def scale_sweep(scale: str, schemes: Sequence[Any] | None = None) -> Any:
    """Figure 8 as one sweep (see the module docs); a (series, topology, level) the engine refuses is left out
    with a note naming the reason."""
    sc = SIZES[scale]
    series, notes = available(scale_series() if schemes is None else schemes)
    notes = list(notes)
    b = Points()
    for kind in TOPOLOGIES:
        for level in ("flow", "packet"):
            for s in series:
                items = []
                for size in sc.sizes(kind):
                    n = servers(kind, size)
                    if level == "packet" and n > sc.packet_max_servers:
                        continue
                    cases = (False, True) if kind == "fat_tree" else (False,)
                    for seed in sc.seeds:
                        for dl in cases:
                            items.append((values(kind, n, dl, level, s.label, seed),
                                          _raw(s, kind, size, dl, level, seed)))
                if not items:
                    continue
                why = b.try_add(items)
                if why is not None:
                    notes.append(f"figure 8: {s.label} on {kind} at the {level} level left out ({why})")
    return b.sweep(f"reproduce-pdq-{scale}-scale", notes)


# --------------------------------------------------------------------------------------------------------------
# Reading the results


def _runs(results_dir: str | Path) -> list[Any]:
    return [r for r in load_runs(results_dir) if r.values["figure"] == FIGURE]


def _mean(xs: Sequence[float | None]) -> float | None:
    """The mean over the seeds, or None when any seed has no value (a run with unfinished flows): a mean of the
    seeds that finished would favour them."""
    if not xs or any(x is None or (isinstance(x, float) and math.isnan(x)) for x in xs):
        return None
    return sum(xs) / len(xs)  # type: ignore[arg-type]


def scale_data(results_dir: str | Path) -> dict[tuple[str, str], dict[str, dict[int, float | None]]]:
    """(topology, deadlines) -> "<series> (<level>)" -> servers -> the figure's value averaged over seeds:
    application throughput with deadlines, mean FCT in ms without (None while a flow is unfinished)."""
    acc: dict[tuple[str, str], dict[str, dict[int, list[float | None]]]] = {}
    for r in _runs(results_dir):
        v, s = r.values, r.summary
        if v["deadlines"] == "yes":
            val = s.get("application_throughput")
        else:
            fct = (s.get("bins") or {}).get("all", {}).get("mean_fct_ns")
            val = None if fct is None or s.get("unfinished_flows") else fct / 1e6
        key = f"{v['variant']} ({v['level']})"
        acc.setdefault((v["topology"], v["deadlines"]), {}).setdefault(key, {}).setdefault(int(v["x"]), []).append(val)
    return {k: {label: {x: _mean(vs) for x, vs in xs.items()} for label, xs in by.items()} for k, by in acc.items()}


def fct_ratios(results_dir: str | Path) -> Any:
    """Figure 8e: PDQ(Full)'s FCT / RCP's per flow, on the k = 8 fat-tree at the flow level without deadlines,
    pooled over the seeds run at both (a numpy array, empty when a run is missing)."""
    import numpy as np
    import pandas as pd

    want = servers("fat_tree", RATIO_FAT_TREE_K)
    by: dict[tuple[str, int], Path] = {}
    for r in _runs(results_dir):
        v = r.values
        if (v["topology"], int(v["x"]), v["deadlines"], v["level"]) == ("fat_tree", want, "no", "flow"):
            by[(v["variant"], int(v["seed"]))] = r.path
    out = []
    for (label, seed), path in sorted(by.items()):
        if label != "PDQ(Full)" or ("RCP", seed) not in by:
            continue
        cols = ["flow_id", "fct_ns"]
        a = pd.read_parquet(path / "flows.parquet", columns=cols)
        b = pd.read_parquet(by[("RCP", seed)] / "flows.parquet", columns=cols)
        m = a.merge(b, on="flow_id", suffixes=("_pdq", "_rcp")).dropna()
        out.append((m["fct_ns_pdq"] / m["fct_ns_rcp"]).to_numpy(dtype=float))
    return np.concatenate(out) if out else np.zeros(0)


def ratio_shares(ratios: Any) -> dict[str, float] | None:
    """The shares of flows Figure 8e's text names: ratio <= 0.5 (halved or better), > 1 (slower under PDQ), >= 2."""
    n = len(ratios)
    if not n:
        return None
    return {"halved": float((ratios <= 0.5).sum()) / n, "slower": float((ratios > 1.0 + 1e-9).sum()) / n,
            "twice": float((ratios >= 2.0).sum()) / n}


def _order(labels: Sequence[str]) -> list[str]:
    series = [s.label for s in scale_series()]

    def key(label: str) -> tuple[int, int, str]:
        name, _, level = label.rpartition(" (")
        return (series.index(name) if name in series else len(series), 0 if level == "flow)" else 1, label)

    return sorted(labels, key=key)


def scale_tables(results_dir: str | Path) -> list[tuple[str, str]]:
    """Figure 8's tables (one per topology and case, and 8e's shares); its plots: :func:`scale_figures`."""
    from fctlab.analyze import format_table

    data = scale_data(results_dir)
    tables = []
    for kind in TOPOLOGIES:
        for dl in ("yes", "no"):
            d = data.get((kind, dl))
            if not d:
                continue
            labels = _order(list(d))
            xs = sorted({x for by in d.values() for x in by})
            what = "application throughput [%]" if dl == "yes" else "mean FCT [ms]"

            def cell(v: float | None) -> str:
                return "-" if v is None else (f"{100 * v:.1f}" if dl == "yes" else f"{v:.3f}")

            rows = [[str(x)] + [cell(d[label].get(x)) for label in labels] for x in xs]
            title = (f"Figure 8 ({TOPOLOGY_NAMES[kind]}): {what} vs servers, random permutation, "
                     f"{FLOWS_PER_SERVER} flows per server" + (f", deadlines exp. mean {DEADLINE_MS:g} ms"
                                                               if dl == "yes" else ", no deadlines"))
            tables.append((title, format_table(["servers", *labels], rows, "l" + "r" * len(labels))))
    ratios = fct_ratios(results_dir)
    shares = ratio_shares(ratios)
    if shares:
        rows = [["flows with PDQ/RCP <= 0.5", f"{100 * shares['halved']:.1f}%", "about 40%"],
                ["flows with PDQ/RCP > 1", f"{100 * shares['slower']:.1f}%", "5-15%"],
                ["flows with PDQ/RCP >= 2", f"{100 * shares['twice']:.1f}%", "under 0.9%"],
                ["flows", str(len(ratios)), ""]]
        tables.append((f"Figure 8e: PDQ(Full)'s FCT / RCP's per flow, fat-tree k = {RATIO_FAT_TREE_K} "
                       f"({servers('fat_tree', RATIO_FAT_TREE_K)} servers), flow level, no deadlines",
                       format_table(["share", "fctlab", "paper"], rows, "lrr")))
    return tables


def scale_figures(results_dir: str | Path) -> list[tuple[str, Path]]:
    """Figure 8's plots, drawn into ``results_dir/report/figures/pdq-8*.png`` (and .svg): per topology and case,
    application throughput or mean FCT against the servers; 8e's CDF of PDQ's FCT over RCP's. Returns (caption,
    PNG path) pairs."""
    data = scale_data(results_dir)
    out = []
    for kind in TOPOLOGIES:
        for dl in ("yes", "no"):
            d = data.get((kind, dl))
            if not d:
                continue
            labels = _order(list(d))
            xs = sorted({x for by in d.values() for x in by})
            what = "application throughput [%]" if dl == "yes" else "mean FCT [ms]"
            title = (f"Figure 8 ({TOPOLOGY_NAMES[kind]}): {what} vs servers, random permutation, "
                     f"{FLOWS_PER_SERVER} flows per server" + (f", deadlines exp. mean {DEADLINE_MS:g} ms"
                                                               if dl == "yes" else ", no deadlines"))
            out.append((title, _plot(Path(results_dir), f"8-{kind}-{'deadlines' if dl == 'yes' else 'fct'}", title,
                                     what, d, labels, xs, 100.0 if dl == "yes" else 1.0)))
    ratios = fct_ratios(results_dir)
    if len(ratios):
        out.append((f"Figure 8e: CDF over flows of PDQ(Full)'s FCT / RCP's, fat-tree k = {RATIO_FAT_TREE_K}, flow "
                    "level (paper: about 40% of flows at most 0.5, 5-15% above 1)", _plot_cdf(Path(results_dir), ratios)))
    return out


def _plot(root: Path, name: str, title: str, vlabel: str, d: dict[str, dict[int, float | None]],
          labels: list[str], xs: list[int], scale: float) -> Path:
    from fctlab.plot import value_axis

    fig = figure()
    ax = fig.add_subplot()
    values: list[float] = []
    for i, label in enumerate(labels):
        pts = [(x, d[label][x]) for x in xs if d[label].get(x) is not None]
        values.extend(p[1] * scale for p in pts)  # type: ignore[operator]
        if pts:
            ax.plot([p[0] for p in pts], [p[1] * scale for p in pts], marker="o", label=label,  # type: ignore[operator]
                    linestyle="-" if label.endswith("(flow)") else ":", color=f"C{i // 2}")
    ax.set_xscale("log")
    value_axis(ax, values)
    ax.grid(alpha=0.3)
    ax.set_xlabel("servers")
    ax.set_ylabel(vlabel)
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=7)
    return save_figure(fig, root, f"pdq-{name}")


def _plot_cdf(root: Path, ratios: Any) -> Path:
    import numpy as np

    fig = figure()
    ax = fig.add_subplot()
    x = np.sort(ratios)
    ax.plot(x, np.arange(1, len(x) + 1) / len(x))
    ax.axvline(1.0, color="grey", linewidth=0.8)
    ax.set_xscale("log")
    ax.set_xlabel("FCT under PDQ(Full) / FCT under RCP (per flow)")
    ax.set_ylabel("CDF of flows")
    ax.set_title(f"Figure 8e: fat-tree k = {RATIO_FAT_TREE_K}, random permutation, flow level", fontsize=8)
    return save_figure(fig, root, "pdq-8e")


def scale_claims(results_dir: str | Path) -> list[Claim]:
    """Figure 8's statements with fctlab's numbers."""
    data = scale_data(results_dir)
    claims = []
    # PDQ keeps its lead over RCP and D3 at every size and topology (no deadlines: mean FCT)
    leads, ratios = [], []
    for kind in TOPOLOGIES:
        d = data.get((kind, "no"), {})
        pdq = d.get("PDQ(Full) (flow)", {})
        for other in ("RCP (flow)", "D3 (flow)"):
            o = d.get(other, {})
            for x, v in pdq.items():
                if v and o.get(x):
                    r = o[x] / v  # type: ignore[operator]
                    leads.append(f"{kind} {x}: {other.split(' ')[0]} {r:.2f}x")
                    ratios.append(r)
    claims.append(Claim(
        id="fig8-scales-any-topology", statement="PDQ scales well to large data centers, regardless of topology "
        "(Fig. 8b-8d)", source=f"{SRC}, Fig. 8", paper_value="PDQ ahead at every size and topology",
        value=ratios or None, unit="x",
        how="per topology, size and rival (RCP, D3): the rival's mean FCT / PDQ(Full)'s, flow level, no deadlines; "
            "every one above 1.05", check=above(1.0, 0.05), cause="unexplained",
        note="; ".join(leads) or "no flow-level runs of PDQ(Full) with RCP or D3"))
    # the flow level agrees with the packet level where both ran
    gaps = []
    for (kind, dl), d in data.items():
        for label in d:
            if not label.endswith("(flow)"):
                continue
            pkt = d.get(label.replace("(flow)", "(packet)"), {})
            for x, v in d[label].items():
                if v and pkt.get(x):
                    gaps.append((abs(v / pkt[x] - 1), f"{kind}{' deadlines' if dl == 'yes' else ''} {x} "  # type: ignore[operator]
                                 f"{label.split(' (')[0]}: {100 * (v / pkt[x] - 1):+.1f}%"))  # type: ignore[operator]
    gaps.sort()
    claims.append(Claim(
        id="fig8-flow-level-accuracy", statement="The flow-level simulation does not compromise the accuracy "
        "significantly (section 5.5)", source=SRC, paper_value="not significantly",
        value=100 * gaps[-1][0] if gaps else None, unit="%",
        how="the largest |flow level / packet level - 1| of the figure's value where both levels ran; "
            "\"not significantly\" read as under 10%", check=below(10.0, 0.0),
        mechanism="fctlab's flow level omits the packet level's start-up and hand-over losses",
        cause="fctlab_option", note="; ".join(g for _, g in gaps) or "no point ran at both levels"))
    shares = ratio_shares(fct_ratios(results_dir))
    claims.append(Claim(
        id="fig8e-fct-ratio-shares", statement="About 40% of flows finish in at most half their time under RCP; "
        "only 5-15% take longer; no more than 0.9% twice as long (Fig. 8e)", source=f"{SRC}, Fig. 8e",
        paper_value="40% halved, 5-15% slower, <= 0.9% twice",
        value=None if shares is None else [100 * shares["halved"], 100 * shares["slower"], 100 * shares["twice"]],
        unit="%", how=f"PDQ(Full)'s / RCP's FCT per flow on the k = {RATIO_FAT_TREE_K} fat-tree, flow level, no "
        "deadlines: [share at most 0.5, share above 1, share at least 2]",
        check=all_of(on(0, near(40.0, 5.0), "halved"), on(1, in_range(5.0, 15.0, 2.0), "slower"),
                     on(2, in_range(0.0, 0.9, 0.1), "twice")),
        cause="unexplained",
        note="no runs of PDQ(Full) and RCP on that fabric" if shares is None else ""))
    return claims
