"""``unrecall bench forgeteval``: ForgetEval for unrecall and its peers.

Scoring follows the paper's protocol (Yang 2026, sections 3-4) with top-5
recall. Per case: ``reset()``, inscribe the setup facts in order, apply the
mutations in order, recall the top 5 for the final query. The case passes
iff every ``must_contain`` string is a casefold substring of the joined
top-5, and no ``must_not_contain`` string is a casefold substring of the
joined top-5 of the final query *nor* of the joined top-5 of a query made of
that forbidden string itself (so a fact that merely ranks low for the final
query still counts as remembered). A primitive raising
``NotImplementedError`` makes the case N/A; any other exception fails it and
is recorded. Totals are reported *strict* (N/A counts as a failure) and
*evaluable* (N/A cases left out).

Outputs, in ``--out``: ``cases.json`` (one row per system and case: result
and milliseconds), ``summary.json``, ``summary.md`` (also printed; ready for
docs/benchmarks.md) and ``forgeteval.png`` (pass rate per family or
category per system). While the systems run, every outbound socket
connection and DNS lookup is refused and counted, so the summary can state
that nothing reached the network.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from unrecall.bench.cases import (
    CATEGORIES,
    FAMILIES,
    Case,
    CaseFileError,
    adversarial_path,
    load_cases,
)
from unrecall.bench.common import (
    chosen_systems,
    finish,
    merge_kept,
    network_guard,
    reporter,
    wilson,
)
from unrecall.bench.peers import (
    COMPOSITION_NOTE,
    DEFAULT_SYSTEMS,
    NOTES,
    SYSTEMS,
    Adapter,
    make_adapter,
    start_system,
    system_version,
)
from unrecall.bench.templates import DEFAULT_SEED, DEFAULT_SIZE, generate_template_suite
from unrecall.progress import steps

TOP_K = 5
DEFAULT_OUT = Path("bench/results/forgeteval")
PASS, FAIL, NA = "pass", "fail", "na"


@dataclass
class CaseResult:
    """The verdict on one case for one system.

    ``missing`` are expected strings not recalled; ``leaked`` forbidden
    strings in the final query's top-k; ``probe_leaked`` forbidden strings
    found only by querying the string itself.
    """

    system: str
    suite: str
    case_id: str
    category: str
    family: str
    result: str
    ms: float
    missing: list[str] = field(default_factory=list)
    leaked: list[str] = field(default_factory=list)
    probe_leaked: list[str] = field(default_factory=list)
    error: str | None = None

    def to_row(self) -> dict[str, Any]:
        """A compact JSON row: empty diagnostics are left out."""
        row = asdict(self)
        for key in ("missing", "leaked", "probe_leaked", "error"):
            if not row[key]:
                del row[key]
        return row


def _blob(texts: Sequence[str]) -> str:
    # Joined with newlines so a string can never match across two facts.
    return "\n".join(texts).casefold()


def _mutate(adapter: Adapter, mutation: Sequence[str]) -> None:
    op, query = mutation[0], mutation[1]
    if op == "supersede":
        adapter.supersede(query, mutation[2])
    elif op == "release":
        adapter.release(query)
    elif op == "purge":
        adapter.purge(query)
    else:  # the case loader refuses other ops; a hand-built Case might not
        raise ValueError(f"unknown mutation op {op!r}")


def score_case(adapter: Adapter, case: Case, *, k: int = TOP_K, suite: str = "") -> CaseResult:
    """Run one case on ``adapter`` and score it (rules in the module docstring)."""
    result = CaseResult(adapter.name, suite, case.id, case.category, case.family, FAIL, 0.0)
    start = time.perf_counter()
    try:
        adapter.reset()
        for fact in case.setup_facts:
            adapter.inscribe(fact)
        for mutation in case.mutations:
            _mutate(adapter, mutation)
        blob = _blob(adapter.recall_texts(case.final_query, k))
        result.missing = [s for s in case.must_contain if s.casefold() not in blob]
        result.leaked = [s for s in case.must_not_contain if s.casefold() in blob]
        for s in case.must_not_contain:
            if s not in result.leaked and s.casefold() in _blob(adapter.recall_texts(s, k)):
                result.probe_leaked.append(s)
        ok = not (result.missing or result.leaked or result.probe_leaked)
        result.result = PASS if ok else FAIL
    except NotImplementedError:
        result.result = NA
        result.missing, result.leaked, result.probe_leaked = [], [], []
    except Exception as exc:  # a crash fails this case, not the run
        result.result = FAIL
        result.error = f"{type(exc).__name__}: {exc}"[:300]
    result.ms = round((time.perf_counter() - start) * 1000, 2)
    return result


# -- aggregation ---------------------------------------------------------------
def tally(results: Sequence[CaseResult]) -> dict[str, Any]:
    """Counts, strict and evaluable pass rates, Wilson interval (strict),
    errors and median milliseconds per case for a group of results."""
    n = len(results)
    passed = sum(r.result == PASS for r in results)
    na = sum(r.result == NA for r in results)
    evaluable = n - na
    return {
        "n": n,
        "pass": passed,
        "fail": n - passed - na,
        "na": na,
        "errors": sum(r.error is not None for r in results),
        "strict": round(100 * passed / n, 2) if n else None,
        "evaluable": round(100 * passed / evaluable, 2) if evaluable else None,
        "evaluable_n": evaluable,
        "wilson_strict": wilson(passed, n),
        "median_ms": round(statistics.median(r.ms for r in results), 1) if n else None,
    }


def _group_key(suite: str) -> str:
    return "family" if suite == "template" else "category"


def _group_order(suite: str, results: Sequence[CaseResult]) -> list[str]:
    key = _group_key(suite)
    seen = list(dict.fromkeys(getattr(r, key) for r in results))
    known = FAMILIES if key == "family" else CATEGORIES
    return [g for g in known if g in seen] + [g for g in seen if g not in known]


@dataclass
class SystemRun:
    """One system's run: its status ("ok", "not installed ...", or a start
    error), package version and results per suite."""

    name: str
    status: str
    version: str | None
    results: dict[str, list[CaseResult]] = field(default_factory=dict)
    seconds: float = 0.0


@dataclass
class BenchReport:
    """Everything a run produced, ready to be written and rendered."""

    suites: dict[str, list[Case]]
    sources: dict[str, str]
    systems: list[SystemRun]
    k: int
    seed: int
    network_attempts: list[str]

    def summary(self) -> dict[str, Any]:
        """Aggregates per suite, system and family/category, JSON-ready."""
        out: dict[str, Any] = {
            "k": self.k,
            "seed": self.seed,
            "network_attempts": len(self.network_attempts),
            "suites": {},
        }
        for suite, cases in self.suites.items():
            block: dict[str, Any] = {
                "source": self.sources[suite],
                "cases": len(cases),
                "group_by": _group_key(suite),
                "systems": {},
            }
            for run in self.systems:
                res = run.results.get(suite)
                if res is None:
                    block["systems"][run.name] = {"status": run.status, "version": run.version}
                    continue
                key = _group_key(suite)
                block["systems"][run.name] = {
                    "status": run.status,
                    "version": run.version,
                    "total": tally(res),
                    "groups": {
                        g: tally([r for r in res if getattr(r, key) == g])
                        for g in _group_order(suite, res)
                    },
                }
            out["suites"][suite] = block
        return out


# -- running -------------------------------------------------------------------
def run_system(
    name: str,
    suites: dict[str, list[Case]],
    *,
    k: int = TOP_K,
    factory: Callable[[str], Adapter] = make_adapter,
    progress: Callable[[str], None] | None = None,
) -> SystemRun:
    """Build one system's adapter and score every suite on it. A missing
    peer yields status "not installed ..." and no results; the run goes on."""
    started = time.perf_counter()
    adapter, status, installed = start_system(factory, name)
    if adapter is None:
        return SystemRun(name, status, system_version(name) if installed else None)
    run = SystemRun(name, "ok", system_version(name))
    try:
        for suite, cases in suites.items():
            rows: list[CaseResult] = []
            for i, case in enumerate(steps(progress, cases, f"{name} {suite}", "case"), 1):
                rows.append(score_case(adapter, case, k=k, suite=suite))
                if progress and (i % 100 == 0 or i == len(cases)):
                    done = sum(r.result == PASS for r in rows)
                    progress(f"{name} {suite}: {i}/{len(cases)} cases, {done} passed")
            run.results[suite] = rows
    finally:
        close = getattr(adapter, "close", None)
        if callable(close):
            close()
    run.seconds = round(time.perf_counter() - started, 1)
    return run


def limit_cases(cases: Sequence[Case], n: int | None, key: str = "category") -> list[Case]:
    """At most ``n`` cases, taken round-robin over ``key`` groups in file
    order, so a small limit still covers every category."""
    if n is None or n >= len(cases):
        return list(cases)
    groups: dict[str, list[Case]] = {}
    for c in cases:
        groups.setdefault(getattr(c, key), []).append(c)
    picked: list[Case] = []
    depth = 0
    while len(picked) < n:
        for g in groups.values():
            if depth < len(g) and len(picked) < n:
                picked.append(g[depth])
        depth += 1
    order = {c.id: i for i, c in enumerate(cases)}
    return sorted(picked, key=lambda c: order[c.id])


def run_benchmark(
    suites: dict[str, list[Case]],
    systems: Sequence[str],
    *,
    sources: dict[str, str] | None = None,
    k: int = TOP_K,
    seed: int = DEFAULT_SEED,
    factory: Callable[[str], Adapter] = make_adapter,
    progress: Callable[[str], None] | None = None,
    guard: bool = True,
) -> BenchReport:
    """Score every system on every suite, one system at a time (so each one
    has both CPU cores), with the network guard on unless ``guard`` is off."""
    runs: list[SystemRun] = []
    attempts: list[str] = []
    for name in systems:
        if guard:
            with network_guard() as seen:
                runs.append(run_system(name, suites, k=k, factory=factory, progress=progress))
            attempts += [f"{name}: {a}" for a in seen]
        else:
            runs.append(run_system(name, suites, k=k, factory=factory, progress=progress))
        if progress:
            progress(f"{name}: {runs[-1].status} ({runs[-1].seconds} s)")
    return BenchReport(suites, sources or {s: s for s in suites}, runs, k, seed, attempts)


# -- rendering -----------------------------------------------------------------
def _frac(t: dict[str, Any], which: str = "evaluable") -> str:
    if which == "strict":
        return f"{t['pass']}/{t['n']} ({t['strict']:.1f}%)" if t["n"] else "–"
    if not t["evaluable_n"]:
        return "N/A"
    return f"{t['pass']}/{t['evaluable_n']} ({t['evaluable']:.1f}%)"


def render_markdown(report: BenchReport, chart: str | None = "forgeteval.png") -> str:
    """The markdown summary: per suite an overall table and a per-family
    (template) or per-category (adversarial) table per system."""
    s = report.summary()
    lines = [
        "## ForgetEval",
        "",
        f"`unrecall bench forgeteval`: top-{report.k} recall, deterministic casefold "
        "substring scoring (forbidden strings are also probed with a query made of the "
        "string itself). *Strict* counts N/A (a missing primitive) as a failure; "
        "*evaluable* leaves N/A cases out. Every system embeds with the same local int8 "
        "all-MiniLM-L6-v2; systems run one after another on "
        f"{os.cpu_count()} CPU cores, Python {platform.python_version()}. "
        f"Network attempts during the run: {s['network_attempts']}.",
        "",
    ]
    for suite, block in s["suites"].items():
        group = block["group_by"]
        lines += [
            f"### {suite.capitalize()} suite ({block['cases']} cases)",
            "",
            f"Source: {block['source']}.",
            "",
            "| System | Version | Strict pass | Wilson 95% | Evaluable pass | N/A | Errors "
            "| Median ms/case |",
            "| --- | --- | --- | --- | --- | --- | --- | --- |",
        ]
        ran = []
        for name, sysb in block["systems"].items():
            ver = sysb.get("version") or "–"
            if "total" not in sysb:
                lines.append(f"| {name} | {ver} | {sysb['status']} | | | | | |")
                continue
            ran.append(name)
            t = sysb["total"]
            lo, hi = t["wilson_strict"]
            lines.append(
                f"| {name} | {ver} | {_frac(t, 'strict')} | [{lo:.1f}, {hi:.1f}] | "
                f"{_frac(t)} | {t['na']} | {t['errors']} | {t['median_ms']} |"
            )
        if ran:
            groups = list(block["systems"][ran[0]]["groups"])
            for name in ran[1:]:
                groups += [g for g in block["systems"][name]["groups"] if g not in groups]
            lines += [
                "",
                f"Evaluable pass per {group} (N/A: the system lacks the primitive):",
                "",
                f"| {group.capitalize()} | " + " | ".join(ran) + " |",
                "| --- |" + " --- |" * len(ran),
            ]
            for g in groups:
                cells = []
                n = 0
                for name in ran:
                    t = block["systems"][name]["groups"].get(g)
                    n = max(n, t["n"] if t else 0)
                    cells.append(_frac(t) if t else "–")
                lines.append(f"| {g} (n={n}) | " + " | ".join(cells) + " |")
        lines.append("")
    if chart:
        lines += [f"![ForgetEval pass rate per family / category]({chart})", ""]
    lines += ["How each system runs (ms/case covers reset, inscribes, mutations, the final "
              "query and the forbidden-string probes):", ""]  # fmt: skip
    lines += [f"- **{r.name}**: {NOTES.get(r.name, 'custom adapter.')}" for r in report.systems]
    if any(r.name in ("langgraph", "mem0", "chroma") for r in report.systems):
        lines.append(f"- {COMPOSITION_NOTE}")
    lines.append("")
    return "\n".join(lines)


def render_chart(report: BenchReport, path: Path) -> bool:
    """Heatmaps of evaluable pass rate (systems × family/category), one per
    suite, into a PNG; returns False when matplotlib is not installed."""
    try:
        import matplotlib

        matplotlib.use("Agg")  # no display; must precede the pyplot import
        import matplotlib.pyplot as plt
        import numpy as np
    except ImportError:
        return False
    s = report.summary()["suites"]
    panels = []
    for suite, block in s.items():
        ran = [n for n, b in block["systems"].items() if "total" in b]
        if not ran:
            continue
        groups: list[str] = []
        for n in ran:
            groups += [g for g in block["systems"][n]["groups"] if g not in groups]
        panels.append((suite, block, ran, groups))
    if not panels:
        return False
    width = max(6.0, 1.1 * max(len(p[3]) for p in panels) + 2.5)
    height = sum(1.0 + 0.55 * len(p[2]) for p in panels) + 0.6 * len(panels)
    fig, axes = plt.subplots(len(panels), 1, figsize=(width, height), squeeze=False)
    cmap = matplotlib.colormaps["RdYlGn"].with_extremes(bad="#d9d9d9")  # grey = N/A
    for ax, (suite, block, ran, groups) in zip(axes[:, 0], panels, strict=True):
        grid = [
            [
                (t["evaluable"] if (t := block["systems"][n]["groups"].get(g)) else None)
                for g in groups
            ]
            for n in ran
        ]
        data = np.ma.masked_invalid(np.array(grid, dtype=float))
        ax.imshow(data, cmap=cmap, vmin=0, vmax=100, aspect="auto")
        for i, row in enumerate(grid):
            for j, v in enumerate(row):
                ax.text(j, i, "N/A" if v is None else f"{v:.0f}", ha="center", va="center",
                        fontsize=8)  # fmt: skip
        ax.set_xticks(range(len(groups)), [g.replace("_", "\n") for g in groups], fontsize=8)
        ax.set_yticks(range(len(ran)), ran, fontsize=9)
        ax.set_title(
            f"ForgetEval {suite} ({block['cases']} cases): evaluable pass rate %, top-{report.k}",
            fontsize=10,
        )
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)
    return True


def write_outputs(report: BenchReport, out: Path) -> dict[str, Path]:
    """Write cases.json, summary.json, summary.md and the chart into ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    paths = {
        "cases": out / "cases.json",
        "summary_json": out / "summary.json",
        "summary_md": out / "summary.md",
        "chart": out / "forgeteval.png",
    }
    rows = [r.to_row() for run in report.systems for res in run.results.values() for r in res]
    # One row per line: small enough to keep in git, readable in a diff.
    body = ",\n".join(json.dumps(r, ensure_ascii=False, separators=(",", ":")) for r in rows)
    paths["cases"].write_text("[\n" + body + "\n]\n", encoding="utf-8")
    summary = report.summary()
    summary["systems"] = [
        {"name": r.name, "status": r.status, "version": r.version, "seconds": r.seconds}
        for r in report.systems
    ]
    summary["network_attempt_list"] = report.network_attempts[:50]
    paths["summary_json"].write_text(json.dumps(summary, indent=1) + "\n", encoding="utf-8")
    charted = render_chart(report, paths["chart"])
    if not charted:
        del paths["chart"]
    md = render_markdown(report, "forgeteval.png" if charted else None)
    paths["summary_md"].write_text(md, encoding="utf-8")
    return paths


def load_previous(out: Path, suites: dict[str, list[Case]], k: int) -> list[SystemRun]:
    """Earlier runs stored in ``out`` (cases.json + summary.json), keeping a
    system's suite only when it covered exactly the same case ids at the same
    ``k``; anything missing or stale is simply left out."""
    try:
        rows = json.loads((out / "cases.json").read_text(encoding="utf-8"))
        summary = json.loads((out / "summary.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    if summary.get("k") != k:
        return []
    by_system: dict[str, dict[str, list[CaseResult]]] = {}
    for row in rows:
        by_system.setdefault(row["system"], {}).setdefault(row["suite"], []).append(
            CaseResult(**row)
        )
    runs: list[SystemRun] = []
    for meta in summary.get("systems", []):
        run = SystemRun(meta["name"], meta["status"], meta["version"], {}, meta["seconds"])
        for suite, results in by_system.get(run.name, {}).items():
            wanted = [c.id for c in suites.get(suite, [])]
            if wanted and [r.case_id for r in results] == wanted:
                run.results[suite] = results
        if run.results or run.status != "ok":
            runs.append(run)
    return runs


# -- command line --------------------------------------------------------------
def add_arguments(p: argparse.ArgumentParser) -> None:
    """The options of ``unrecall bench forgeteval``."""
    p.add_argument(
        "--suite",
        choices=["template", "adversarial", "both"],
        default=None,
        help="which suites to run (default: both; with --cases, only that file)",
    )
    p.add_argument(
        "--cases",
        default=None,
        metavar="FILE",
        help="a case file in the ForgetEval schema, run as the adversarial suite",
    )
    p.add_argument(
        "--systems",
        default=",".join(DEFAULT_SYSTEMS),
        help=f"comma-separated systems (default: {','.join(DEFAULT_SYSTEMS)})",
    )
    p.add_argument("--limit", type=int, default=None, help="at most N cases per suite")
    p.add_argument("--seed", type=int, default=DEFAULT_SEED, help="template suite seed")
    p.add_argument(
        "--size", type=int, default=DEFAULT_SIZE, help="template suite size before --limit"
    )
    p.add_argument("-k", type=int, default=TOP_K, help="recall depth (the protocol uses 5)")
    p.add_argument(
        "--out", default=str(DEFAULT_OUT), help=f"output folder (default: {DEFAULT_OUT})"
    )
    p.add_argument("--quiet", action="store_true", help="no progress lines or bars on stderr")
    p.add_argument(
        "--merge",
        action="store_true",
        help="keep the results of systems not in --systems from --out (same cases, same k)",
    )


def _load_suites(args: argparse.Namespace) -> tuple[dict[str, list[Case]], dict[str, str]]:
    suite = args.suite or ("adversarial" if args.cases else "both")
    suites: dict[str, list[Case]] = {}
    sources: dict[str, str] = {}
    if suite in ("template", "both"):
        cases = generate_template_suite(args.seed, args.size)
        suites["template"] = limit_cases(cases, args.limit, key="category")
        sources["template"] = f"generated, seed {args.seed}, {args.size} cases"
    if suite in ("adversarial", "both"):
        path = Path(args.cases) if args.cases else adversarial_path()
        if not path.exists():
            if args.cases or suite == "adversarial":
                raise CaseFileError(f"{path}: no such case file")
            print(f"note: {path} does not exist yet; skipping the adversarial suite",
                  file=sys.stderr)  # fmt: skip
        else:
            cases = load_cases(path)
            suites["adversarial"] = limit_cases(cases, args.limit, key="category")
            sources["adversarial"] = f"`{path.name}`, {len(cases)} cases"
    return suites, sources


def run_cli(args: argparse.Namespace) -> int:
    """Run ``unrecall bench forgeteval`` from parsed arguments; 0 on
    success, 2 on bad input (unknown system, invalid case file)."""
    systems = chosen_systems(args.systems, SYSTEMS)
    if systems is None:
        return 2
    if args.limit is not None and args.limit < 1:
        print("error: --limit must be at least 1", file=sys.stderr)
        return 2
    if args.k < 1 or args.size < 0:
        print("error: -k must be at least 1 and --size not negative", file=sys.stderr)
        return 2
    try:
        suites, sources = _load_suites(args)
    except CaseFileError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if not suites:
        print("error: nothing to run", file=sys.stderr)
        return 2

    progress = reporter(args)
    report = run_benchmark(
        suites, systems, sources=sources, k=args.k, seed=args.seed, progress=progress
    )
    if args.merge:
        kept = [r for r in load_previous(Path(args.out), suites, args.k) if r.name not in systems]
        report.systems = merge_kept(report.systems, kept, SYSTEMS, progress)
    return finish(report, Path(args.out), write_outputs, progress)
