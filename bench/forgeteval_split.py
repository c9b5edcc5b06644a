"""Where unrecall's ForgetEval time goes: milliseconds per adapter call.

Runs the adversarial suite (or ``--cases FILE``) through the unrecall
adapter with a timer around each of its six methods and prints calls per
case, ms per call and ms per case for each. Usage::

    python bench/forgeteval_split.py [--cases FILE]
"""

from __future__ import annotations

import argparse
import time
from collections import Counter

from unrecall.bench.cases import adversarial_path, load_cases
from unrecall.bench.forgeteval import UnrecallAdapter
from unrecall.bench.forgeteval_harness import score_case

METHODS = ("reset", "inscribe", "recall_texts", "supersede", "release", "purge")


def main() -> None:
    """Time every adapter call over the suite and print the split."""
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--cases", default=str(adversarial_path()))
    cases = load_cases(p.parse_args().cases)
    adapter = UnrecallAdapter()
    seconds: Counter[str] = Counter()
    calls: Counter[str] = Counter()
    for name in METHODS:
        method = getattr(adapter, name)

        def timed(*args: str, _method=method, _name=name):  # type: ignore[no-untyped-def]
            start = time.perf_counter()
            try:
                return _method(*args)
            finally:
                seconds[_name] += time.perf_counter() - start
                calls[_name] += 1

        setattr(adapter, name, timed)
    for case in cases:
        score_case(adapter, case)
    adapter.close()
    n = len(cases)
    print(f"{n} cases")
    for name in METHODS:
        if calls[name]:
            print(
                f"{name:13s} calls/case {calls[name] / n:5.2f}"
                f"  ms/call {seconds[name] / calls[name] * 1000:6.2f}"
                f"  ms/case {seconds[name] / n * 1000:6.2f}"
            )
    print(f"total ms/case {sum(seconds.values()) / n * 1000:.1f}")


if __name__ == "__main__":
    main()
