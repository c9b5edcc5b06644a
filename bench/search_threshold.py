"""Choose ``Memory.search``'s similarity threshold on real conversations.

    python bench/search_threshold.py [--out DIR]

Two corpora, each in its own tenants of one store: LoCoMo's development
conversations (every turn; a question's evidence turns are its relevant
hits) and the development dialogue suites (every user turn but the
requests, as notes; a request's question must find the statements holding
its target values). Each question is asked with no threshold of its own
tenant and, off topic, of the next one, where nothing is about it (like
"quantum chromodynamics lecture" against notes on kiwis). Per threshold:
the share of relevant hits found in the top 5 that it keeps, recall@5 with
it, and the share of off-topic queries that then return nothing. MiniLM's
default is the highest threshold that drops none (``KEEP``) of the relevant
hits in either corpus.
"""

from __future__ import annotations

import argparse
import json
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from unrecall.bench.locomo import load_locomo
from unrecall.memory import CALIBRATED_THRESHOLDS, Memory

ROOT = Path(__file__).resolve().parent.parent
LOCOMO = ROOT.parent / "shared/datasets/locomo/locomo_dev5.json"
DATA = ROOT / "src/unrecall/bench/data"
SUITES = [DATA / f"unlearning_{n}.json" for n in ("suite", "dev2", "dev3", "dev4")]
THRESHOLDS = [round(t, 2) for t in np.arange(0.0, 0.46, 0.05)]
KEEP = 1.0


def locomo(mem: Memory) -> Corpus:
    """LoCoMo: each question's evidence turns, asked of its conversation and
    (off topic) of the next one."""
    convs, _ = load_locomo(LOCOMO)
    out = Corpus("LoCoMo dev", [], [], [])
    turn_of: dict[str, str] = {}
    for i, c in enumerate(convs):
        for t in c.turns:
            for mid in mem.add(t.doc, user_id=f"c{i}", timestamp=t.timestamp).ids:
                turn_of[mid] = t.dia_id
    for i, c in enumerate(convs):
        for q in c.qas:
            n = len(out.wanted)
            out.wanted.append(len(set(q.evidence)))
            found: set[str] = set()
            for h in mem.search(q.question, user_id=f"c{i}", k=5, threshold=None):
                turns = {turn_of.get(m) for m in h.ids} & set(q.evidence) - found
                if turns and h.similarity is not None:
                    found |= turns
                    out.evidence += [(n, h.similarity)] * len(turns)
            out.off_topic.append(_similarities(mem, q.question, f"c{(i + 1) % len(convs)}"))
    return out


def dialogues(mem: Memory) -> Corpus:
    """The development dialogue suites: every user turn but the requests,
    stored as notes; each request's question must find the statements that
    hold its target values (its retention probe), and asked of the next
    dialogue it is off topic."""
    out = Corpus("dialogue suites (dev)", [], [], [])
    suites = [json.loads(p.read_text(encoding="utf-8"))["dialogues"] for p in SUITES]
    every = [d for dialogues in suites for d in dialogues]
    for i, d in enumerate(every):
        for s in d["sessions"]:
            for t in s["turns"]:
                if "u" in t and "request" not in t:
                    mem.add(t["u"], user_id=f"d{i}")
    for i, d in enumerate(every):
        for r in d["requests"]:
            values = [v.casefold() for v in r["targets"]]
            n = len(out.wanted)
            out.wanted.append(len(values))
            left = set(values)
            for h in mem.search(r["question"], user_id=f"d{i}", k=5, threshold=None):
                said = {v for v in left if v in h.text.casefold()}
                if said and h.similarity is not None:
                    left -= said
                    out.evidence += [(n, h.similarity)] * len(said)
            out.off_topic.append(_similarities(mem, r["question"], f"d{(i + 1) % len(every)}"))
    return out


@dataclass
class Corpus:
    """Similarities measured on one corpus (see the module)."""

    name: str
    evidence: list[tuple[int, float]]  # (query number, similarity) of each relevant hit
    wanted: list[int]  # relevant items per query
    off_topic: list[list[float]]  # similarities of the top 5 of each off-topic query


def _similarities(mem: Memory, query: str, user: str) -> list[float]:
    return [
        h.similarity
        for h in mem.search(query, user_id=user, k=5, threshold=None)
        if h.similarity is not None
    ]


def table(c: Corpus) -> dict[str, object]:
    """Per threshold: relevant hits kept, recall@5, off-topic queries empty."""
    total = sum(c.wanted)
    evidence, off_topic, wanted = c.evidence, c.off_topic, c.wanted
    rows = []
    for th in THRESHOLDS:
        kept = sum(s >= th for _, s in evidence)
        rows.append(
            {
                "threshold": th,
                "evidence_kept": round(kept / len(evidence), 4),
                "recall_at_5": round(kept / total, 4),
                "off_topic_empty": round(
                    float(np.mean([not any(s >= th for s in o) for o in off_topic])), 4
                ),
                "off_topic_hits": round(
                    float(np.mean([sum(s >= th for s in o) for o in off_topic])), 3
                ),
            }
        )
    return {
        "corpus": c.name,
        "questions": len(wanted),
        "relevant": total,
        "relevant_found_top5": len(evidence),
        "rows": rows,
    }


def measure() -> dict[str, object]:
    """Both corpora's tables, and the highest threshold that keeps ``KEEP``
    of the relevant hits in each."""
    folder = Path(tempfile.mkdtemp(prefix="unrecall-threshold-"))
    try:
        with Memory(folder / "t.db") as mem:
            tables = [table(locomo(mem)), table(dialogues(mem))]
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    keep = [
        th
        for th in THRESHOLDS
        if all(
            next(r for r in t["rows"] if r["threshold"] == th)["evidence_kept"] >= KEEP
            for t in tables  # type: ignore[attr-defined]
        )
    ]
    return {
        "tables": tables,
        "chosen": max(keep),
        "default": CALIBRATED_THRESHOLDS["minilm-l6-v2-int8"],
    }


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "bench/results/search-threshold")
    args = ap.parse_args()
    result = measure()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "summary.json").write_text(json.dumps(result, indent=2))
    lines: list[str] = []
    for t in result["tables"]:  # type: ignore[attr-defined]
        lines += [
            f"{t['corpus']} ({t['questions']} questions, {t['relevant']} relevant items, "
            f"{t['relevant_found_top5']} found in the top 5 with no threshold)",
            "",
            "| threshold | relevant kept | recall@5 | off-topic empty | off-topic hits of 5 |",
            "| --- | --- | --- | --- | --- |",
        ]
        for r in t["rows"]:
            lines.append(
                f"| {r['threshold']:.2f} | {100 * r['evidence_kept']:.1f} % "
                f"| {r['recall_at_5']:.3f} | {100 * r['off_topic_empty']:.1f} % "
                f"| {r['off_topic_hits']:.2f} |"
            )
        lines.append("")
    lines.append("")
    lines.append(
        f"Highest threshold keeping {100 * KEEP:.1f} % of the relevant hits in both: "
        f"{result['chosen']:.2f} "
        f"(MiniLM's default in unrecall.memory.CALIBRATED_THRESHOLDS is {result['default']})."
    )
    (args.out / "summary.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
