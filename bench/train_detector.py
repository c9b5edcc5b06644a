"""Train the learned request detector and measure it; one command.

    python bench/train_detector.py            # cross-validate, train, write, report
    python bench/train_detector.py --report   # measure the packaged model only

Training data (all in the repository): the labelled turns of the briefed
authors (``bench/requests/authors/author_*.jsonl``), the early labelled
corpora (``tests/data/forget_requests*.jsonl``), the user turns of the
development unlearning suites (request turns vs the rest), 3,000 plain
statements of the perf corpus, and ordinary chat of long conversations
(LoCoMo's development conversations, the development trail episodes, 2,000
generated trail turns), where updates abound. The user turns of the Memora
development personas are hard negatives too; each persona's false alarms
are measured by a model trained without it. Held out of training and of
every choice made here: author F (``bench/heldout/requests_author_f.jsonl``),
5,000 other perf statements, and the user turns of the held-out dialogues
(``bench/heldout/trails_fresh_b.json``, ``unlearning_fresh_b.json``).

The regularisation strength and the decision threshold are chosen by
leave-one-author-out cross-validation over the briefed authors, so they are
picked for an author the model has not seen. The threshold is the lowest
that keeps cross-validated precision at ``--precision`` (0.95).

Reported, beside the exact rules (``unrecall.dialogue.requests.detect``) on
the same turns: precision, recall and kind accuracy on author F; false
alarms on the Memora personas and the held-out perf statements.
Needs the ``train`` extra (scikit-learn).
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import numpy as np

from unrecall.bench.trails_episodes import generate, load_episodes
from unrecall.dialogue.requests import detect
from unrecall.pipeline.detector import CLASSES, Detector, load
from unrecall.pipeline.features import BUCKETS, featurize

ROOT = Path(__file__).resolve().parents[1]
ALONE_FALSE_ALARMS = 0.005
AUTHORS = ROOT / "bench/requests/authors"
HELDOUT = ROOT / "bench/heldout/requests_author_f.jsonl"
SUITES = ROOT / "src/unrecall/bench/data"
MEMORA = ROOT.parent / "shared/datasets/memora/weekly"
ASSET = ROOT / "src/unrecall/pipeline/assets/detector.npz"
LOCOMO = ROOT.parent / "shared/datasets/locomo/locomo_dev5.json"
TRAILS_DEV = ROOT / "bench/devsets/trails_fresh_a.json"
FRESH_DEV = ROOT / "bench/devsets/unlearning_fresh_a.json"
# Measured only, never trained on or chosen by: held-out dialogues of outside authors.
TRAILS_HELD = ROOT / "bench/heldout/trails_fresh_b.json"
FRESH_HELD = ROOT / "bench/heldout/unlearning_fresh_b.json"
sys.path.insert(0, str(ROOT / "bench"))
from perf import make_corpus  # noqa: E402  (the sibling script's statements)

Row = tuple[str, str | None, str]  # text, previous turn, class ("none" or a kind)


def rule_features(text: str, previous: str | None) -> tuple[str, ...]:
    """What the exact rules say about a turn, as features."""
    found = detect(text, previous) if previous else detect(text)
    return ("none",) if found is None else (found.kind,)


def jsonl(path: Path) -> list[Row]:
    """Labelled turns of one file."""
    rows = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.strip():
            r = json.loads(line)
            label = r["kind"] if r["is_request"] else "none"
            if label not in CLASSES:
                raise ValueError(f"{path.name}: unknown kind {label!r}")
            rows.append((r["text"], r.get("previous"), label))
    return rows


def suite_rows(path: Path) -> list[Row]:
    """User turns of an unlearning suite: the first turn of each request
    takes its request's type, the others are statements. The later turns of
    a request are left out: they are often the user's answer to a
    clarifying question ("no, keep the office one"), not a request, and the
    suites do not say which."""
    suite = json.loads(path.read_text(encoding="utf-8"))
    rows: list[Row] = []
    for d in suite["dialogues"]:
        kinds = {r["id"]: r["type"] for r in d["requests"]}
        previous, seen = None, set()
        for s in d["sessions"]:
            for t in s["turns"]:
                if "u" not in t:
                    continue
                if t.get("request") not in seen:
                    label = kinds[t["request"]] if t.get("request") else "none"
                    rows.append((t["u"], previous, label))
                if t.get("request"):
                    seen.add(t["request"])
                previous = t["u"]
    return rows


def chat_negatives() -> list[Row]:
    """Ordinary chat of long conversations, where most turns are statements
    and many are updates ("my op moved again", "now it's 42 mil"), not
    requests: every turn of the LoCoMo development conversations, the user
    turns of the development trail episodes written by an outside author,
    and those of 2,000 generated trail turns."""
    rows: list[Row] = []
    for conv in json.loads(LOCOMO.read_text(encoding="utf-8")):
        c = conv["conversation"]
        rows += [(t["text"], None, "none") for k, v in c.items()
                 if k.startswith("session_") and isinstance(v, list) for t in v]  # fmt: skip
    rows += [(t.text, None, "none") for ep in load_episodes(TRAILS_DEV) for t in ep.turns()
             if t.role == "user"]  # fmt: skip
    generated = [t.text for ep in generate(8, seed=11) for t in ep.turns() if t.role == "user"]
    rows += [(t, None, "none") for t in generated[:2000]]
    return rows


def memora_turns() -> tuple[dict[str, list[Row]], dict[str, list[Row]]]:
    """Per Memora persona, its user turns as rows: the ordinary ones (every
    user turn of a session that adds or changes nothing) and the requests
    (the first turn a delete or update session marks as shared: "I don't
    like Nicholas Ray's films anymore", "please remove 'X' from the
    agenda"). A shared turn after it may only elaborate, so it is left out."""
    ordinary: dict[str, list[Row]] = {}
    requests: dict[str, list[Row]] = {}
    for f in sorted(MEMORA.glob("*/conversations/*.json")):
        d = json.loads(f.read_text(encoding="utf-8"))
        persona, user = f.parts[-3], [t for t in d["conversation"] if t["speaker"] == "user_agent"]
        if d.get("operation") in (None, "add"):
            ordinary.setdefault(persona, []).extend((t["message"], None, "none") for t in user)
        elif shared := [t["message"] for t in user if t.get("share_memory")]:
            kind = "replacement" if d["operation"] == "update" else "factual"
            requests.setdefault(persona, []).append((shared[0], None, kind))
    return ordinary, requests


_FEATURES: dict[tuple[str, str | None], np.ndarray] = {}


def features(text: str, previous: str | None) -> np.ndarray:
    """A turn's buckets, rules included (computed once per turn)."""
    key = (text, previous)
    if key not in _FEATURES:
        _FEATURES[key] = featurize(text, previous, rule_features(text, previous))
    return _FEATURES[key]


def matrix(rows: list[Row]):  # type: ignore[no-untyped-def]
    """CSR rows of unit norm, as the detector scores them."""
    from scipy.sparse import csr_matrix

    indices = [features(text, previous) for text, previous, _ in rows]
    indptr = np.concatenate([[0], np.cumsum([len(f) for f in indices])])
    data = np.repeat(1 / np.sqrt(np.diff(indptr)), np.diff(indptr))
    return csr_matrix((data, np.concatenate(indices), indptr), shape=(len(rows), BUCKETS))


def fit(rows: list[Row], c: float):  # type: ignore[no-untyped-def]
    """A multinomial logistic regression on ``rows``."""
    from sklearn.linear_model import LogisticRegression

    y = np.array([CLASSES.index(label) for *_, label in rows])
    x = matrix(rows)
    cols = np.unique(x.indices)  # only the buckets seen: ~10x fewer weights to fit
    model = LogisticRegression(C=c, max_iter=300, class_weight="balanced")
    model.fit(x[:, cols], y)
    model.cols_ = cols
    return model


def p_request(model, rows: list[Row]) -> np.ndarray:  # type: ignore[no-untyped-def]
    """P(not none) for each row."""
    proba = model.predict_proba(matrix(rows)[:, model.cols_])
    none = list(model.classes_).index(0)
    return 1 - proba[:, none]


def to_detector(model, threshold: float, alone: float) -> Detector:  # type: ignore[no-untyped-def]
    """The sparse detector of a fitted model (only buckets with weight)."""
    coef = np.zeros((len(CLASSES), BUCKETS), dtype=np.float32)
    bias = np.zeros(len(CLASSES), dtype=np.float32)
    for row, cls in enumerate(model.classes_):
        coef[cls, model.cols_], bias[cls] = model.coef_[row], model.intercept_[row]
    bias[[c for c in range(len(CLASSES)) if c not in model.classes_]] = -30.0
    used = np.flatnonzero(np.abs(coef).max(axis=0) > 1e-4)
    return Detector(used, coef[:, used].T, bias, threshold, alone)


def prf(found: np.ndarray, truth: np.ndarray) -> tuple[float, float, int, int]:
    """Precision, recall, true and false positives."""
    tp, fp = int((found & truth).sum()), int((found & ~truth).sum())
    fn = int((~found & truth).sum())
    return tp / max(tp + fp, 1), tp / max(tp + fn, 1), tp, fp


def report(det: Detector, held: list[Row], perf: list[str]) -> None:
    """Detector and rules side by side on the held-out turns."""
    truth = np.array([label != "none" for *_, label in held])
    rules = [rule_features(t, p)[0] for t, p, _ in held]
    readings = [det.read(t, p, (r,)) for (t, p, _), r in zip(held, rules, strict=True)]
    learned = np.array(
        [r.p_request >= det.bar(rule != "none") for r, rule in zip(readings, rules, strict=True)]
    )
    by_rules = np.array([r != "none" for r in rules])
    for name, found, kinds in (
        ("rules", by_rules, rules),
        ("learned", learned, [r.kind for r in readings]),
    ):
        p, r, tp, fp = prf(found, truth)
        ok = sum(k == label for k, (*_, label), f in zip(kinds, held, found, strict=True) if f)
        print(f"author F, {name}: precision {p:.3f} recall {r:.3f} ({tp} found of "
              f"{int(truth.sum())}, {fp} false alarms of {int((~truth).sum())}); "
              f"kind right {ok}/{tp}")  # fmt: skip
    dialogue = [(t.text, None, "none") for ep in load_episodes(TRAILS_HELD) for t in ep.turns()
                if t.role == "user"] + suite_rows(FRESH_HELD)  # fmt: skip
    truth = np.array([label != "none" for *_, label in dialogue])
    said = np.array([
        det.read(t, p, rule_features(t, p)).p_request >= det.bar(rule_features(t, p)[0] != "none")
        for t, p, _ in dialogue
    ])  # fmt: skip
    rules_said = np.array([rule_features(t, p)[0] != "none" for t, p, _ in dialogue])
    for name, found in (("rules", rules_said), ("learned", said)):
        print(f"held-out dialogues (trails B, unlearning fresh B), {name}: "
              f"{int((found & truth).sum())} of {int(truth.sum())} request turns found, "
              f"{int((found & ~truth).sum())} false alarms of {int((~truth).sum())} other "
              f"user turns")  # fmt: skip
    fa = sum(det.read(t, None, rule_features(t, None)).p_request
             >= det.bar(rule_features(t, None)[0] != "none") for t in perf)  # fmt: skip
    fr = sum(detect(t) is not None for t in perf)
    print(f"held-out perf statements: learned {fa}/{len(perf)} false alarms, "
          f"rules {fr}/{len(perf)}")  # fmt: skip
    # What the detector adds to a turn: the rules already run on every turn.
    took = []
    for t in perf[:2000]:
        start = time.perf_counter()
        det.read(t, None, ("none",))
        took.append((time.perf_counter() - start) * 1000)
    print(f"added per ordinary turn: p50 {np.percentile(took, 50):.3f} ms, "
          f"p95 {np.percentile(took, 95):.3f} ms")  # fmt: skip


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--report", action="store_true", help="measure the packaged model only")
    ap.add_argument("--precision", type=float, default=0.95)
    ap.add_argument("--c", type=float, help="skip the grid: this regularisation strength")
    args = ap.parse_args()
    statements, _ = make_corpus(20_000, 20_240_601)
    held, perf = jsonl(HELDOUT), statements[3000:8000]
    if args.report:
        report(load(), held, perf)
        return 0
    authors = {p.stem: jsonl(p) for p in sorted(AUTHORS.glob("author_*.jsonl"))}
    common: list[Row] = [r for p in sorted((ROOT / "tests/data").glob("forget_requests*.jsonl"))
                         for r in jsonl(p)]  # fmt: skip
    for name in ("unlearning_suite", "unlearning_dev2", "unlearning_dev3", "unlearning_dev4"):
        common += suite_rows(SUITES / f"{name}.json")
    common += suite_rows(FRESH_DEV) + chat_negatives()
    common += [(s, None, "none") for s in statements[:3000]]
    memora, memora_requests = memora_turns()
    every_memora = [r for rows in (*memora.values(), *memora_requests.values()) for r in rows]
    print(f"{sum(map(len, authors.values()))} author turns ({len(authors)} authors), "
          f"{len(common)} other training turns, {len(every_memora)} Memora turns "
          f"({len(memora)} personas)")  # fmt: skip
    best = None
    for c in [args.c] if args.c else (2.0, 8.0, 32.0):
        scores, truth = [], []
        for out in authors:
            train = common + every_memora
            train += [r for a, rows in authors.items() if a != out for r in rows]
            scores.append(p_request(fit(train, c), authors[out]))
            truth.append(np.array([label != "none" for *_, label in authors[out]]))
        s, t = np.concatenate(scores), np.concatenate(truth)
        for th in np.arange(0.30, 0.96, 0.01):
            p, r, *_ = prf(s >= th, t)
            if p >= args.precision:
                print(f"C {c}: cross-validated recall {r:.3f} at threshold {th:.2f} "
                      f"(precision {p:.3f})", flush=True)  # fmt: skip
                if best is None or r > best[0]:
                    # a reading only the detector makes needs more: in a chat,
                    # most turns are not requests (false alarms on the authors'
                    # other turns at most ALONE_FALSE_ALARMS of them)
                    negatives = s[~t]
                    alone = next(
                        float(a) for a in np.arange(th, 1.0, 0.01)
                        if (negatives >= a).mean() <= ALONE_FALSE_ALARMS
                    )  # fmt: skip
                    print(f"  alone threshold {alone:.2f}: cross-validated recall "
                          f"{(s[t] >= alone).mean():.3f}", flush=True)  # fmt: skip
                    best = (r, c, float(th), alone)
                break
        else:
            print(f"C {c}: precision {args.precision} not reached", flush=True)
    if best is None:
        print("no setting reached the precision; nothing written")
        return 1
    _, c, th, alone = best
    authored = [r for rows in authors.values() for r in rows]
    # Each Memora persona scored by a model trained without it: false alarms
    # on its ordinary chat, and its requests found.
    for persona, rows in memora.items():
        asks = memora_requests.get(persona, [])
        others = [r for p in memora if p != persona
                  for r in memora[p] + memora_requests.get(p, [])]  # fmt: skip
        model = fit(common + others + authored, c)
        fa = int((p_request(model, rows) >= th).sum())
        found = int((p_request(model, asks) >= th).sum()) if asks else 0
        print(f"Memora {persona}, persona held out: {fa}/{len(rows)} false alarms, "
              f"{found}/{len(asks)} requests found; rules "
              f"{sum(detect(t) is not None for t, *_ in rows)} false alarms, "
              f"{sum(detect(t) is not None for t, *_ in asks)} found", flush=True)  # fmt: skip
    det = to_detector(fit(common + every_memora + authored, c), th, alone)
    ASSET.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(ASSET, **det.to_arrays())
    print(f"wrote {ASSET.relative_to(ROOT)} (C {c}, threshold {th:.2f}, "
          f"{len(det.index)} buckets, {ASSET.stat().st_size // 1024} KB)")  # fmt: skip
    load.cache_clear()
    report(load(), held, perf)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
