"""Score forget-request detection on the labelled corpus.

Prints precision, recall and F1 of ``unrecall.dialogue.requests.detect``
(is this turn a forget/correction request?) and the kind accuracy on the true
requests it detected, overall and per language, then per-kind confusion
counts (gold kind -> predicted kind, "none" when missed) and every error.

    /tmp/venv/bin/python bench/requests_eval.py [corpus.jsonl]
"""

from __future__ import annotations

import json
import sys
from collections import Counter
from pathlib import Path

from unrecall.dialogue.requests import KINDS, LANGUAGES, detect

CORPUS = Path(__file__).resolve().parent.parent / "tests" / "data" / "forget_requests.jsonl"


def load(path: Path) -> list[dict]:
    """The labelled turns, one JSON object per line."""
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def score(rows: list[dict]) -> dict[str, float | int]:
    """Detection precision/recall/F1 and kind accuracy over ``rows``."""
    tp = fp = fn = tn = kind_ok = 0
    for row in rows:
        found = detect(row["text"])
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
        found = detect(row["text"])
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
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv))
