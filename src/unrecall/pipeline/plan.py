"""Plan stage: which strategy carries out a request that was read and
resolved.

* ``literal`` - the exact rules parsed the turn and their span (a value, a
  quoted item, an identifier, a slot, a topic, a time, a conclusion) names
  something stored: the rule executor cuts exactly that
  (``control.forget_requests``), with span-level removal. A span that
  names nothing stored was a description: the resolve stage reads it;
* ``described`` - the turn describes the fact in its own words: the
  memories the resolve stage found go whole, with their copies;
* ``replacement`` - as ``described`` for the old value, and the turn,
  which says the new one, is stored as a statement;
* ``none`` - a request the rules read, naming nothing stored: the turn is
  stored redacted and nothing else changes. (When only the detector read a
  request and its description matches nothing, the turn is stored as said.)

``Memory.forget`` is the ``trail`` cut (``control.trails``): the disclosure
and the evidence its fact can be pieced together from. A request said in
the chat does not cut a trail: tried (a trail cut after the request when
the trail forgetter read the same fact), it lifted the outside authors'
trail sets from 0 to 8 % and cost the development dialogues a third of
their passing requests in look-alikes (docs/benchmarks.md, issue #14).
"""

from __future__ import annotations

from dataclasses import dataclass

from unrecall.pipeline.read import Reading
from unrecall.pipeline.resolve import Resolution

STRATEGIES = ("literal", "described", "replacement", "trail", "none")


@dataclass(frozen=True)
class Plan:
    """The strategy chosen for one request, with what it acts on."""

    strategy: str
    reading: Reading
    resolution: Resolution


def plan(reading: Reading, resolution: Resolution) -> Plan:
    """Choose the strategy for a request (see the module)."""
    if reading.parse is not None:  # the resolve stage kept the rules' span
        return Plan("literal", reading, resolution)
    if not resolution.targets:
        return Plan("none", reading, resolution)
    if reading.kind == "replacement":
        return Plan("replacement", reading, resolution)
    return Plan("described", reading, resolution)
