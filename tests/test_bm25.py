"""Each backend's BM25 is Okapi BM25 summed over every posting.

The scores and the order ``Storage.lexical`` returns are checked against a
sum computed here from the raw postings, lexicon and statistics, on a store
whose words are shared by many memories at varied lengths.
"""

from __future__ import annotations

import random
from collections import Counter

import pytest
from helpers import raw_sql

from unrecall import Memory
from unrecall.storage import postings


def _part(w: float, tf: int, length: int, avg: float) -> float:
    return (
        w
        * tf
        * (postings.K1 + 1)
        / (tf + postings.K1 * (1 - postings.B + postings.B * length / avg))
    )


def _same_ranking(got: list[tuple[int, float]], every: dict[int, float], limit: int) -> None:
    """``got`` is the ``limit`` best of ``every`` (document -> score): the
    same scores in order, each document's own score, and the same document
    wherever no other scores within float rounding of it."""
    want = sorted(every.items(), key=lambda h: (-h[1], h[0]))[:limit]
    assert len(got) == len(want)
    for (gd, gs), (wd, ws) in zip(got, want, strict=True):
        assert abs(gs - ws) <= 1e-9 * max(1.0, abs(ws))
        assert abs(every[gd] - gs) <= 1e-9 * max(1.0, abs(gs))
        if sum(abs(s - ws) <= 1e-9 for s in every.values()) == 1:
            assert gd == wd


def _brute(mem: Memory, tenant_id: int, terms: list[str]) -> dict[int, float]:
    """BM25 summed over every posting of the query's words, from raw rows."""
    lex = {
        bytes(d).hex(): (i, f)
        for i, d, f in raw_sql(
            mem, "SELECT id, digest, mdf FROM lexicon WHERE tenant_id = ? AND mdf > 0", (tenant_id,)
        )
    }
    found = [lex[t] for t in dict.fromkeys(terms) if t in lex]
    n, total = raw_sql(
        mem, "SELECT docs, length FROM term_stats WHERE tenant_id = ? AND kind = 'm'", (tenant_id,)
    )[0]
    weights = dict(postings.weights(found, n, drop_floor=True))
    scores: dict[int, float] = {}
    for term, first, docs, tfs, lens in raw_sql(
        mem, "SELECT term, first, docs, tfs, lens FROM memory_postings"
    ):
        block = postings.Block.decode(first, bytes(docs), bytes(tfs), bytes(lens))
        for doc, tf, length in zip(*block.arrays(), strict=True):
            if term in weights:
                scores[int(doc)] = scores.get(int(doc), 0.0) + _part(
                    weights[term], int(tf), int(length), total / n
                )
    return scores


def test_each_backend_returns_the_full_sums_top_k(fast_mem: Memory) -> None:
    # Words shared by many memories, in varied numbers and lengths.
    rng = random.Random(7)
    common = ["harbour", "crane", "painted", "ledger", "violet", "orchard"]
    rare = ["zephyr", "quartz", "nimbus"]
    texts = []
    for i in range(400):
        words = rng.sample(common, rng.randint(1, 4)) + rng.sample(rare, rng.randint(0, 1))
        words += [f"filler{rng.randint(0, 300)}" for _ in range(rng.randint(0, 8))]
        texts.append(" ".join(words) + f" item{i}")
    fast_mem.add([{"role": "user", "content": t} for t in texts], user_id="u")
    storage, hasher = fast_mem.storage, fast_mem.recall.hasher
    tenant_id = storage.tenant("user:u", False)
    assert tenant_id is not None
    for query in ["harbour crane zephyr", "violet ledger orchard painted", "quartz nimbus crane"]:
        terms = [hasher.term(w) for w in query.split()]
        every = _brute(fast_mem, tenant_id, terms)
        for limit in (1, 3, 10, 40):
            _same_ranking(storage.lexical(tenant_id, terms, limit), every, limit)


def _held(mem: Memory, prefix: str) -> dict[tuple[int, int], tuple[int, int]]:
    """(term id, document) -> (tf, length), from every block."""
    out: dict[tuple[int, int], tuple[int, int]] = {}
    for term, first, docs, tfs, lens in raw_sql(
        mem, f"SELECT term, first, docs, tfs, lens FROM {prefix}_postings"
    ):
        block = postings.Block.decode(first, bytes(docs), bytes(tfs), bytes(lens))
        held = block.arrays()
        assert 0 < block.size <= postings.BLOCK and block.first <= held[0][0]
        assert held[0].tolist() == sorted(set(held[0].tolist()))
        for doc, tf, length in zip(*held, strict=True):
            assert (term, int(doc)) not in out
            out[(term, int(doc))] = (int(tf), int(length))
    return out


def test_blocks_hold_exactly_the_terms_of_what_is_indexed(
    fast_mem: Memory, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Small blocks, so adds split them and deletes empty them; turns whose
    # text changes are taken out and put back in the middle of a block.
    monkeypatch.setattr(postings, "BLOCK", 3)
    rng = random.Random(11)
    words = ["otter", "kettle", "meadow", "copper", "lantern", "saffron"]
    ids = []
    for i in range(60):
        text = " ".join(rng.choices(words, k=rng.randint(1, 5))) + f" note{i % 7}"
        ids += fast_mem.add(text, user_id="u").ids
    for mid in rng.sample(ids, 25):
        fast_mem.purge(mid, user_id="u")
    for m in rng.sample(fast_mem.get_all(user_id="u"), 5):
        fast_mem.update(m.id, "a copper otter in the meadow again", user_id="u")
    storage, hasher = fast_mem.storage, fast_mem.recall.hasher
    tenant_id = storage.tenant("user:u", False)
    lexicon = {
        bytes(d).hex(): i
        for i, d in raw_sql(
            fast_mem, "SELECT id, digest FROM lexicon WHERE tenant_id = ?", (tenant_id,)
        )
    }
    want: dict[tuple[int, int], tuple[int, int]] = {}
    for m in storage.memories(tenant_id, ["active"]):
        digests = hasher.document(m.text).split()
        for digest, tf in Counter(digests).items():
            want[(lexicon[digest], m.id)] = (tf, len(digests))
    assert _held(fast_mem, "memory") == want
    held_turns = _held(fast_mem, "turn")
    for t in storage.turns(tenant_id):
        digests = hasher.document(t.text).split()
        for digest, tf in Counter(digests).items():
            assert held_turns.pop((lexicon[digest], t.id)) == (tf, len(digests))
    assert held_turns == {}


def test_a_rolled_back_savepoint_keeps_the_outer_levels_postings(fast_mem: Memory) -> None:
    # Postings wait in a buffer until a read or the commit. A savepoint that
    # read the blocks (and so wrote the outer level's buffered postings) and
    # then rolled back must not take the outer level's postings with it.
    storage, recall = fast_mem.storage, fast_mem.recall
    tenant_id = storage.tenant("user:u", True)
    assert tenant_id is not None
    kept = fast_mem.add("the harbour crane is painted violet", user_id="u").ids

    class Undo(Exception):
        pass

    with storage.transaction():
        turn = storage.add_turn(tenant_id, "user", "a quartz lantern", None, 0.0, {})
        storage.index_turn(turn, recall.hasher.document(turn.text))
        try:
            with storage.transaction():
                term = recall.hasher.term("quartz")
                assert [d for d, _ in storage.lexical(tenant_id, [term], 5, turns=True)] == [
                    turn.id
                ]
                other = storage.add_turn(tenant_id, "user", "a quartz kettle", None, 0.0, {})
                storage.index_turn(other, recall.hasher.document(other.text))
                raise Undo
        except Undo:
            pass
    term = recall.hasher.term("quartz")
    assert [d for d, _ in storage.lexical(tenant_id, [term], 5, turns=True)] == [turn.id]
    assert [h.id for h in fast_mem.search("violet crane", user_id="u", mode="lexical")] == kept


def test_ties_at_the_edge_go_to_the_first_documents() -> None:
    # 300 documents of one score and 5 above it: the top 20 are the 5, then
    # the 15 smallest ids of the tied, as a full sort would give.
    rng = random.Random(3)
    docs = sorted(rng.sample(range(10_000), 305))
    best = set(rng.sample(docs, 5))
    rows = [
        (1, *postings.Block.of(docs, [1] * len(docs), [10] * len(docs)).encode()),
        (2, *postings.Block.of(sorted(best), [1] * 5, [10] * 5).encode()),
    ]
    got = postings.top_k(rows, [(1, 0.5), (2, 2.0)], 10.0, 20)
    want = sorted(best) + sorted(set(docs) - best)[:15]
    assert [d for d, _ in got] == want
