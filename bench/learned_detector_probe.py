"""Probe: would a learned request detector generalise where the rules do not?

A throwaway-sized experiment kept so its numbers can be re-made: logistic
regression (L2, class-balanced, Newton steps in numpy) over the MiniLM
embedding of whole user turns, trained on the labelled corpora, the user
turns of the first three unlearning suites, 3,000 perf-corpus statements and
the Memora user turns of every other persona; scored on the fourth suite's
user turns (dev4: request turns vs other turns), the other Memora personas
and 5,000 unseen perf statements. Nothing here is used by unrecall.

    python bench/learned_detector_probe.py
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import numpy as np

from unrecall.recall.embedder import make_embedder

ROOT = Path(__file__).resolve().parents[1]
DATA = ROOT / "src/unrecall/bench/data"
MEMORA = ROOT.parent / "shared/datasets/memora/weekly"
sys.path.insert(0, str(ROOT / "bench"))
from perf import make_corpus  # noqa: E402  (the sibling script's statements)


def suite_turns(name: str) -> tuple[list[str], list[str]]:
    """User turns of a suite that belong to a request, and the others."""
    suite = json.loads((DATA / f"{name}.json").read_text(encoding="utf-8"))
    turns = [t for d in suite["dialogues"] for s in d["sessions"] for t in s["turns"] if "u" in t]
    return [t["u"] for t in turns if t.get("request")], [
        t["u"] for t in turns if not t.get("request")
    ]


def fit(x: np.ndarray, y: np.ndarray, lam: float, steps: int = 30) -> np.ndarray:
    """Class-balanced L2 logistic regression by Newton's method; bias last."""
    xb = np.hstack([x, np.ones((len(x), 1))])
    w = np.zeros(xb.shape[1])
    cw = np.where(y == 1, len(y) / (2 * y.sum()), len(y) / (2 * (len(y) - y.sum())))
    reg = lam * np.r_[np.ones(len(w) - 1), 0.0]
    for _ in range(steps):
        p = 1 / (1 + np.exp(-xb @ w))
        grad = xb.T @ (cw * (p - y)) + reg * w
        hess = (xb * (cw * p * (1 - p))[:, None]).T @ xb + np.diag(reg)
        w -= np.linalg.solve(hess, grad)
    return w


def main() -> int:
    emb = make_embedder("minilm")
    texts: list[str] = []
    labels: list[int] = []
    for name in ("forget_requests", "forget_requests_extra", "forget_requests_dev2"):
        for line in (ROOT / f"tests/data/{name}.jsonl").read_text(encoding="utf-8").splitlines():
            row = json.loads(line)
            texts.append(row["text"])
            labels.append(int(row["is_request"]))
    for name in ("unlearning_suite", "unlearning_dev2", "unlearning_dev3"):
        pos, neg = suite_turns(name)
        texts += pos + neg
        labels += [1] * len(pos) + [0] * len(neg)
    statements, _ = make_corpus(20_000, 20_240_601)
    texts += statements[:3000]
    labels += [0] * 3000
    by_persona: dict[str, list[str]] = {}
    for f in sorted(MEMORA.glob("*/conversations/*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        if d["operation"] in (None, "add"):
            by_persona.setdefault(f.parts[-3], []).extend(
                t["message"] for t in d["conversation"] if t["speaker"] == "user_agent"
            )
    personas = sorted(by_persona)
    train = [t for p in personas[::2] for t in by_persona[p]]
    held = [t for p in personas[1::2] for t in by_persona[p]]
    texts += train
    labels += [0] * len(train)
    y = np.array(labels)
    x = emb.embed(texts)
    pos4, neg4 = suite_turns("unlearning_dev4")
    dev4 = emb.embed(pos4 + neg4)
    truth = np.array([1] * len(pos4) + [0] * len(neg4))
    memora, perf = emb.embed(held), emb.embed(statements[3000:8000])
    print(f"trained on {len(y)} turns ({y.sum()} requests)")
    for lam in (0.1, 1.0):
        w = fit(x, y, lam)

        def score(v: np.ndarray, w: np.ndarray = w) -> np.ndarray:
            return 1 / (1 + np.exp(-(v @ w[:-1] + w[-1])))

        p4, pm, ps = score(dev4), score(memora), score(perf)
        for th in (0.8, 0.9, 0.95):
            hit = p4 >= th
            print(
                f"lambda {lam} threshold {th}: dev4 request turns {int((hit & (truth == 1)).sum())}"
                f"/{len(pos4)}, other dev4 turns flagged {int((hit & (truth == 0)).sum())}"
                f"/{len(neg4)}; Memora (held personas) {int((pm >= th).sum())}/{len(pm)}; "
                f"perf {int((ps >= th).sum())}/{len(ps)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
