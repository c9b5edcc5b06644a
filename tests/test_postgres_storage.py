"""What is particular to the PostgreSQL backend: a server database shared by
many store objects, someone else's database refused untouched, keys laid
out for distribution by tenant, and erasure never claimed while the bytes
remain. Everything else runs on both backends through the ``mem`` and
``fast_mem`` fixtures."""

from __future__ import annotations

import psycopg
import pytest
from conftest import BACKENDS, new_postgres_url
from helpers import erases, token

from unrecall import Memory, StoreError

# Tables that hold rows of one tenant (the rest are reference tables).
TENANT_TABLES = {
    "turns",
    "memories",
    "provenance",
    "lexicon",
    "memory_terms",
    "turn_terms",
    "term_stats",
    "memory_vectors",
}


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    """An empty database (when PostgreSQL is among the tested backends)."""
    if "postgres" not in BACKENDS:
        pytest.skip("PostgreSQL is not among $UNRECALL_TEST_BACKENDS")
    return new_postgres_url(request.getfixturevalue("postgres_server"))


def test_two_store_objects_on_one_database_see_each_others_commits(url: str) -> None:
    with Memory(url, embedder="hashing") as a, Memory(url, embedder="hashing") as b:
        secret = token()
        mid = a.add(f"the locker code is {secret}", user_id="u").ids[0]
        assert [h.id for h in b.search(secret, user_id="u")] == [mid]
        b.purge(mid, user_id="u")
        assert a.search(secret, user_id="u") == []
        assert a.verify_audit().ok and b.verify_audit().ok


def test_a_database_with_tables_of_its_own_is_refused_untouched(url: str) -> None:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute("CREATE TABLE orders(id int PRIMARY KEY, item text)")
        conn.execute("INSERT INTO orders VALUES (1, 'tea')")
    with pytest.raises(StoreError, match="did not make"):
        Memory(url, embedder="hashing")
    with psycopg.connect(url, autocommit=True) as conn:
        tables = conn.execute(
            "SELECT table_name FROM information_schema.tables WHERE table_schema = 'public'"
        ).fetchall()
        assert tables == [("orders",)]
        assert conn.execute("SELECT * FROM orders").fetchall() == [(1, "tea")]


def test_a_store_made_with_another_embedder_is_refused(url: str) -> None:
    Memory(url, embedder="hashing").close()
    with pytest.raises(StoreError, match="embedder"):
        Memory(url)


def test_tenant_id_leads_every_key_of_a_tenants_tables(url: str) -> None:
    # What lets each table be distributed by tenant_id in one co-location
    # group: the primary key, every unique key and every foreign key between
    # tenant tables start with it.
    Memory(url, embedder="hashing").close()
    with psycopg.connect(url, autocommit=True) as conn:
        rows = conn.execute(
            "SELECT c.conrelid::regclass::text, c.contype, a.attname"
            " FROM pg_constraint c JOIN pg_attribute a"
            " ON a.attrelid = c.conrelid AND a.attnum = c.conkey[1]"
            " WHERE c.contype IN ('p', 'u', 'f') AND c.conrelid::regclass::text = ANY(%s)",
            (sorted(TENANT_TABLES),),
        ).fetchall()
    assert {table for table, kind, _ in rows if kind == "p"} == TENANT_TABLES
    assert [(table, kind, first) for table, kind, first in rows if first != "tenant_id"] == []


def test_a_report_never_claims_erasure_while_the_bytes_remain(fast_mem: Memory) -> None:
    # On both backends: either the purge says erased and a scan proves it,
    # or it says not erased. PostgreSQL says not erased (issue 16, part 3).
    secret = token()
    mid = fast_mem.add(f"my PIN is {secret}", user_id="u").ids[0]
    report = fast_mem.purge(mid, user_id="u")
    assert report.erased is erases(fast_mem)
    if report.erased:
        assert fast_mem.verify_erased([secret]).clean
    assert fast_mem.search(secret, user_id="u", mode="lexical") == []
