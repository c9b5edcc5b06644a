"""Score forget-request detection on the labelled corpus.

Prints precision, recall and F1 of ``unrecall.dialogue.requests.detect``
(is this turn a forget/correction request?) and the kind accuracy on the true
requests it detected, overall and per language, then per-kind confusion
counts (gold kind -> predicted kind, "none" when missed) and every error.

The corpus was written alongside the detector, so it also reports two
checks on text it was not written for: false positives on every user turn of
the Memora development sessions that add or change nothing (the dataset
beside this repository, skipped when absent), and detection of the request
turns of the unlearning suite and of the held-out dialogues written later by
someone who had not read the detector, and the plain statements of the perf
corpus (`bench/perf.py`), none of which is a request.

    python bench/requests_eval.py [corpus.jsonl]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from unrecall.dialogue.requests import KINDS, LANGUAGES, detect

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "forget_requests.jsonl"
MEMORA = ROOT.parent / "shared" / "datasets" / "memora" / "weekly"
SUITE = ROOT / "src" / "unrecall" / "bench" / "data" / "unlearning_suite.json"
HELDOUT = ROOT / "src" / "unrecall" / "bench" / "data" / "unlearning_heldout.json"


def load(path: Path) -> list[dict]:
    """The labelled turns, one JSON object per line."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def score(rows: list[dict]) -> dict[str, float | int]:
    """Detection precision/recall/F1 and kind accuracy over ``rows``."""
    tp = fp = fn = tn = kind_ok = 0
    for row in rows:
        previous = row.get("previous")  # a request split over two turns
        found = detect(row["text"], previous) if previous else detect(row["text"])
        if row["is_request"] and found is not None:
            tp += 1
            kind_ok += found.kind == row["kind"]
        elif row["is_request"]:
            fn += 1
        elif found is not None:
            fp += 1
        else:
            tn += 1
    precision = tp / (tp + fp) if tp + fp else 1.0
    recall = tp / (tp + fn) if tp + fn else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return {
        "n": len(rows),
        "tp": tp,
        "fp": fp,
        "fn": fn,
        "tn": tn,
        "precision": precision,
        "recall": recall,
        "f1": f1,
        "kind_accuracy": kind_ok / tp if tp else 1.0,
    }


def _line(name: str, s: dict[str, float | int]) -> str:
    return (
        f"{name:<8} n={s['n']:<4} tp={s['tp']:<4} fp={s['fp']:<3} fn={s['fn']:<3} "
        f"precision={s['precision']:.3f} recall={s['recall']:.3f} f1={s['f1']:.3f} "
        f"kind_acc={s['kind_accuracy']:.3f}"
    )


def main(argv: list[str]) -> int:
    """Print the report; exit status 0."""
    rows = load(Path(argv[1]) if len(argv) > 1 else CORPUS)
    print(f"corpus: {len(rows)} turns, {sum(r['is_request'] for r in rows)} requests")
    print(_line("overall", score(rows)))
    for lang in LANGUAGES:
        print(_line(lang, score([r for r in rows if r["language"] == lang])))

    confusion: Counter[tuple[str, str]] = Counter()
    errors: list[str] = []
    for row in rows:
        previous = row.get("previous")  # a request split over two turns
        found = detect(row["text"], previous) if previous else detect(row["text"])
        predicted = found.kind if found is not None else "none"
        if row["is_request"]:
            confusion[(row["kind"], predicted)] += 1
        if (found is not None) != row["is_request"] or (
            found is not None and found.kind != row["kind"]
        ):
            errors.append(
                f"  [{row['language']}] gold={row['kind']} got={predicted}: {row['text']}"
            )

    columns = [*KINDS, "none"]
    print("\nkind confusion (rows gold, columns predicted)")
    print(f"{'':<14}" + "".join(f"{c[:6]:>8}" for c in columns))
    for gold in KINDS:
        cells = "".join(f"{confusion[(gold, c)]:>8}" for c in columns)
        print(f"{gold:<14}{cells}")
    print(f"\nerrors ({len(errors)})")
    print("\n".join(errors) if errors else "  none")
    external()
    return 0


def external() -> None:
    """Detection on text the corpus was not written for."""
    for name, path in (("unlearning suite", SUITE), ("held-out dialogues", HELDOUT)):
        _suite_detection(name, path)
    from perf import make_corpus  # the sibling script's statements, its default seed

    statements, _ = make_corpus(20_000, 20_240_601)
    hits = sum(detect(t) is not None for t in statements)
    print(f"perf corpus statements: {hits}/{len(statements)} detected as requests")
    if MEMORA.is_dir():
        turns = [
            t["message"]
            for f in sorted(MEMORA.glob("*/conversations/*.json"))
            if (d := json.loads(f.read_text(encoding="utf-8")))["operation"] in (None, "add")
            for t in d["conversation"]
            if t["speaker"] == "user_agent"
        ]
        hits = [t for t in turns if detect(t) is not None]
        print(
            f"\nMemora user turns of sessions that delete or update nothing: {len(turns)}, "
            f"detected as requests: {len(hits)} ({len(hits) / len(turns):.2%})"
        )
        for t in hits:
            print(f"  {t}")


def _suite_detection(name: str, path: Path) -> None:
    """Request turns detected (and with their type) in a dialogue suite."""
    suite = json.loads(path.read_text(encoding="utf-8"))
    asks = [
        (t["u"], r["type"])
        for dl in suite["dialogues"]
        for s in dl["sessions"]
        for t in s["turns"]
        if "u" in t and t.get("request")
        for r in dl["requests"]
        if r["id"] == t["request"]
    ]
    plain = [
        t["u"]
        for dl in suite["dialogues"]
        for s in dl["sessions"]
        for t in s["turns"]
        if "u" in t and not t.get("request")
    ]
    found = [(detect(u), kind) for u, kind in asks]
    print(
        f"{name}: {sum(f is not None for f, _ in found)}/{len(asks)} request turns "
        f"detected, {sum(f is not None and f.kind == k for f, k in found)} with their type; "
        f"{sum(detect(u) is not None for u in plain)}/{len(plain)} other user turns detected"
    )


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
