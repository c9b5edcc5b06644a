"""The request pipeline: from a user's words to what is forgotten.

Every request goes through the same stages, each a module with a typed
input and output:

* ``read`` - is the turn a request, of which kind (the learned
  ``detector`` over ``features``; the exact rules as a feature and, when
  they parse, as the literal span);
* ``resolve`` - which memories it describes (a model over general signals;
  or the optional ``interpret``-er, the agent's own LLM);
* ``plan`` - the strategy: literal, described, replacement, trail;
* ``execute`` - carried out on the deterministic control plane (closure,
  erasure, a content-free audit), which returns the report.

``Memory.add`` runs it for each user turn, ``Memory.forget`` (and the CLI's
``forget``) for a request said outright. Training: ``bench/train_detector.py``
and ``bench/train_resolver.py``.
"""
