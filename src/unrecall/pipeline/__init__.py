"""The request pipeline: from a user's words to what is forgotten (issue #14).

So far this holds the learned reader's detector (``detector``, over the
features of ``features``), trained by ``bench/train_detector.py`` and
measured there. It is not yet the gate of ``Memory.add``: the rules still
read requests, because a request that the detector alone reads has no span
naming its fact, and resolving the whole turn lost preservation on every
suite tried (docs/benchmarks.md, "Issue #14, first round").
"""
