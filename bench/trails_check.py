"""Check a hand-written trail-episode file against the benchmark's rules:
``python bench/trails_check.py FILE``. Prints each problem, or a summary."""

from __future__ import annotations

import sys

from unrecall.bench.trails_episodes import (
    AnnotationError,
    episode_from_json,
    minimal_cut,
    validate_episode,
)


def main(path: str) -> int:
    import json

    with open(path, encoding="utf-8") as fh:
        raw = json.load(fh)
    items = raw["episodes"] if isinstance(raw, dict) else raw
    problems: list[str] = []
    facts = turns = 0
    for item in items:
        try:
            ep = episode_from_json(item)
        except AnnotationError as e:
            problems.append(str(e))
            continue
        problems += validate_episode(ep)
        facts += len(ep.facts)
        turns += len(ep.turns())
        for f in ep.facts:
            size, _ = minimal_cut(f.sufficient_sets)
            print(f"{f.id}: {f.type}, {len(f.evidence)} evidence, minimal cut {size}")
    for p in problems:
        print("PROBLEM:", p)
    print(f"{len(items)} episodes, {facts} facts, {turns} turns, {len(problems)} problems")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
