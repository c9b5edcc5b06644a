"""What is particular to the PostgreSQL backend: a server database shared by
many store objects, someone else's database refused untouched, keys laid
out for distribution by tenant, and erasure claimed only when the server
keeps no copy of the purged rows. Everything else runs on both backends through the ``mem`` and
``fast_mem`` fixtures."""

from __future__ import annotations

import time

import psycopg
import pytest
from conftest import BACKENDS, new_postgres_url
from helpers import erases, posting_rows, raw_hits, raw_sql, token
from pgvector.psycopg import register_vector

from unrecall import Memory, StoreError

# Tables that hold rows of one tenant (the rest are reference tables).
TENANT_TABLES = {
    "turns",
    "memories",
    "provenance",
    "lexicon",
    "memory_postings",
    "turn_postings",
    "memory_docs",
    "turn_docs",
    "term_stats",
    "memory_vectors",
}


@pytest.fixture
def url(request: pytest.FixtureRequest) -> str:
    """An empty database (when PostgreSQL is among the tested backends)."""
    if "postgres" not in BACKENDS:
        pytest.skip("PostgreSQL is not among $UNRECALL_TEST_BACKENDS")
    return new_postgres_url(request.getfixturevalue("postgres_server"), request)


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
    # or it says not erased.
    secret = token()
    mid = fast_mem.add(f"my PIN is {secret}", user_id="u").ids[0]
    report = fast_mem.purge(mid, user_id="u")
    assert report.erased is erases(fast_mem)
    if report.erased:
        assert fast_mem.verify_erased([secret]).clean
    assert fast_mem.search(secret, user_id="u", mode="lexical") == []


def _set_server(server: object, **settings: str) -> None:
    """ALTER SYSTEM and reload, then wait until a new session sees it (a
    reload reaches the server's processes asynchronously)."""
    uri = server.get_uri()  # type: ignore[attr-defined]
    with psycopg.connect(uri, autocommit=True) as conn:
        for name, value in settings.items():
            conn.execute(f"ALTER SYSTEM SET {name} = {value}")
        conn.execute("SELECT pg_reload_conf()")
    for _ in range(200):
        with psycopg.connect(uri) as conn:
            if all(conn.execute(f"SHOW {n}").fetchone()[0] == v for n, v in settings.items()):  # type: ignore[index]
                return
        time.sleep(0.01)
    raise AssertionError(f"the server did not take {settings}")


def test_a_server_that_keeps_wal_gets_no_erasure_claim(url: str, postgres_server: object) -> None:
    server = postgres_server
    with Memory(url, embedder="hashing") as mem:
        assert mem.storage.erasure_gaps() == []
        _set_server(server, wal_recycle="on")
        try:
            secret = token()
            mem.add(f"my PIN is {secret}", user_id="u")
            report = mem.purge(secret, user_id="u")
            assert report.erased is False
            assert [g.split()[0] for g in mem.storage.erasure_gaps()] == ["wal_recycle"]
        finally:
            _set_server(server, wal_recycle="off")
        # a replication slot holds WAL back, whatever the settings say
        with psycopg.connect(url, autocommit=True) as conn:
            conn.execute("SELECT pg_create_physical_replication_slot('unrecall_test', true)")
        try:
            assert any("replication slot" in g for g in mem.storage.erasure_gaps())
            assert mem.storage.erase() is False
        finally:
            with psycopg.connect(url, autocommit=True) as conn:
                conn.execute("SELECT pg_drop_replication_slot('unrecall_test')")
        assert mem.storage.erase() is True


def test_a_server_that_logs_statement_values_gets_no_erasure_claim(url: str) -> None:
    # The server log is a file of the data directory that no rewrite
    # reaches: with statements logged, their parameters (the text) stay.
    name = url.split("?", 1)[0].rsplit("/", 1)[1]
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"ALTER DATABASE \"{name}\" SET log_statement = 'all'")
    with Memory(url, embedder="hashing") as mem:  # new sessions take it
        secret = token()
        mem.add(f"my PIN is {secret}", user_id="u")
        assert mem.purge(secret, user_id="u").erased is False
        assert [g.split(":")[0] for g in mem.storage.erasure_gaps()] == [
            "log_statement is mod or all"
        ]
        assert raw_hits(mem, secret) > 0  # in the server log, as the gap says
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f'ALTER DATABASE "{name}" SET log_parameter_max_length = 0')
    with Memory(url, embedder="hashing") as mem:
        assert mem.storage.erasure_gaps() == []
        other = token()
        mem.add(f"my PIN is {other}", user_id="u")
        assert mem.purge(other, user_id="u").erased is True
        assert mem.verify_erased([other]).clean


def _bm25_statistics_drift(url: str) -> list[tuple[object, ...]]:
    """Where lexicon's document frequencies or term_stats differ from what
    the postings hold, per kind: empty when they agree."""
    drift: list[tuple[object, ...]] = []
    with psycopg.connect(url) as conn:
        for kind, prefix, df in (("m", "memory", "mdf"), ("t", "turn", "tdf")):
            # a document's postings: one per term its row names, in blocks
            drift += conn.execute(
                f"SELECT %s, l.tenant_id, l.id, l.{df}, coalesce(p.n, 0) FROM lexicon l"
                f" LEFT JOIN (SELECT tenant_id, term, sum(length(docs) / 8) AS n"
                f" FROM {prefix}_postings GROUP BY 1, 2) p"
                f" ON p.tenant_id = l.tenant_id AND p.term = l.id WHERE l.{df} <> coalesce(p.n, 0)",
                (kind,),
            ).fetchall()
            stats = conn.execute(
                "SELECT tenant_id, docs, length FROM term_stats WHERE kind = %s AND docs > 0"
                " ORDER BY 1",
                (kind,),
            ).fetchall()
            real = conn.execute(
                f"SELECT tenant_id, count(*), sum(len) FROM {prefix}_docs GROUP BY 1 ORDER BY 1"
            ).fetchall()
            if stats != real:
                drift.append((kind, stats, real))
    return drift


def test_bm25_statistics_stay_exact_through_one_transaction_with_rollbacks(url: str) -> None:
    # Document frequencies and lengths are counted once per transaction
    # (pending_docs), not per document: a rolled-back savepoint, a search
    # and a forget inside the transaction must each see exact counts.
    with Memory(url, embedder="hashing") as mem:
        with mem.storage.transaction():
            mem.add("the amber harbor lamp", user_id="u")
            with pytest.raises(RuntimeError), mem.storage.transaction():
                mem.add("amber fjord basil", user_id="u")
                raise RuntimeError("rolled back")
            mem.add("amber dune at dusk", user_id="u")
            hits = mem.search("amber", user_id="u", mode="lexical")
            assert len(hits) == 2  # its own uncommitted documents, counted
            mem.purge(hits[0].id, user_id="u")
            mem.add("cedar amber", user_id="v")
        assert _bm25_statistics_drift(url) == []
        assert len(mem.search("amber", user_id="u", mode="lexical")) == 1
        assert mem.search("fjord", user_id="u", mode="lexical") == []


def _part_of(mem: Memory, user: str) -> int:
    tid = mem.storage.tenant(f"user:{user}", False)
    query = "SELECT tableoid::regclass::text FROM memories WHERE tenant_id = %s"
    (name,) = raw_sql(mem, query, (tid,))[0]
    return int(name.rsplit("_p", 1)[1])


def _files(url: str) -> dict[str, int]:
    with psycopg.connect(url) as conn:
        return dict(
            conn.execute(
                "SELECT relname::text, relfilenode::bigint FROM pg_class"
                " WHERE relname ~ '^(memories|memory_vectors)_p[0-9]+$'"
            ).fetchall()
        )


def test_a_forget_rewrites_its_tenants_parts_only(url: str) -> None:
    # Tenant tables are hash-partitioned by tenant: erase() rewrites the
    # parts that hold the forgotten rows, and leaves the others' files be.
    with Memory(url, embedder="hashing") as mem:
        users = [f"user{i}" for i in range(6)]
        for user in users:
            mem.add(f"{user} keeps a heron notebook", user_id=user)
        parts = {user: _part_of(mem, user) for user in users}
        gone = users[0]
        others = {p for u, p in parts.items() if p != parts[gone]}
        assert others  # six tenants do not all hash to one part of sixteen
        before = _files(url)
        secret = token()
        mem.add(f"my PIN is {secret}", user_id=gone)
        assert mem.purge(secret, user_id=gone).erased is True
        after = _files(url)
        changed = {name for name in before if before[name] != after[name]}
        assert changed == {f"memories_p{parts[gone]}", f"memory_vectors_p{parts[gone]}"}
        assert mem.verify_erased([secret]).clean
        assert raw_sql(mem, "SELECT count(*) FROM erasure_queue") == [(0,)]


def test_an_erasure_left_undone_is_finished_by_any_later_erase(url: str) -> None:
    # The parts to rewrite are queued in the forget's own transaction: when
    # its erase() cannot finish, another store object's (or process's) does.
    with Memory(url, embedder="hashing") as mem:
        secret = token()
        mem.add(f"my PIN is {secret}", user_id="u")
        part = _part_of(mem, "u")
        mem.storage._lock_ms = 200  # type: ignore[attr-defined]
        with psycopg.connect(url) as holder:
            holder.execute(f"LOCK TABLE memories_p{part} IN ACCESS SHARE MODE")
            assert mem.purge(secret, user_id="u").erased is False
            assert raw_hits(mem, secret) > 0  # its erase() fails again meanwhile
            holder.rollback()
    with Memory(url, embedder="hashing") as later:
        assert raw_sql(later, "SELECT part FROM erasure_queue") == [(part,)]
        assert later.storage.erase() is True
        assert later.verify_erased([secret]).clean
        assert raw_sql(later, "SELECT count(*) FROM erasure_queue") == [(0,)]


def test_a_snapshot_older_than_the_purge_holds_the_claim_back(url: str) -> None:
    with Memory(url, embedder="hashing") as mem:
        secret = token()
        mem.add(f"my PIN is {secret}", user_id="u")
        with psycopg.connect(url) as reader:
            # a repeatable-read transaction that began before the purge may
            # still read the row, so VACUUM FULL copies it into the new file
            reader.execute("BEGIN ISOLATION LEVEL REPEATABLE READ")
            reader.execute("SELECT count(*) FROM memories").fetchone()
            report = mem.purge(secret, user_id="u")
            assert report.erased is False
            assert raw_hits(mem, secret) > 0
            reader.rollback()
        assert mem.storage.erase() is True
        assert mem.verify_erased([secret]).clean


def test_a_url_in_unrecall_db_stays_a_url_and_help_never_shows_it(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # default_path() made a Path of it: "//" folded, and Memory() made a
    # SQLite file named after the URL, password included, in the cwd
    from unrecall.interfaces.cli import main
    from unrecall.memory import default_path

    url = "postgresql://ana:hunter2secret@db.example/mem"
    monkeypatch.setenv("UNRECALL_DB", url)
    assert default_path() == url
    with pytest.raises(SystemExit):
        main(["search", "--help"])
    assert "hunter2secret" not in capsys.readouterr().out


def test_deferred_erasure_leaves_the_rewrite_to_an_explicit_erase(url: str) -> None:
    # erasure="deferred": a forget is out of recall at once, says erased=False
    # and rewrites nothing; one erase() later (this process or another, here
    # the CLI) rewrites for every forget since.
    from unrecall.interfaces.cli import main

    with Memory(url, embedder="hashing", erasure="deferred") as mem:
        secrets_ = [token() for _ in range(3)]
        for secret in secrets_:
            mem.add(f"my PIN is {secret}", user_id="u")
        mem.add("I like herons", user_id="u")
        reports = [mem.purge(secret, user_id="u") for secret in secrets_]
        assert [r.erased for r in reports] == [False] * 3
        assert all(mem.search(s, user_id="u", mode="lexical") == [] for s in secrets_)
        assert all(raw_hits(mem, s) > 0 for s in secrets_)  # still in the files
        assert raw_sql(mem, "SELECT count(*) FROM erasure_queue")[0][0] >= 3
    assert main(["erase", "--db", url, "--embedder", "hashing", "--quiet"]) == 0
    with Memory(url, embedder="hashing") as mem:
        assert raw_sql(mem, "SELECT count(*) FROM erasure_queue") == [(0,)]
        assert mem.verify_erased(secrets_).clean
        assert [h.text for h in mem.search("herons", user_id="u")] == ["I like herons"]


def test_a_store_of_the_row_per_posting_layout_is_upgraded_on_open(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Schema v5 kept one row per posting (memory_terms, turn_terms). Made
    # here from a current store by hand, as v5 left it: opening it packs
    # those rows into blocks and drops them, and recall ranks as before.
    with Memory(url, embedder="hashing") as mem:
        for i in range(40):
            mem.add(f"the heron {i} waits by the copper kettle near lantern {i % 3}", user_id="u")
        mem.add("an otter swims past", user_id="v")
        before = [
            [(h.id, round(h.score, 9)) for h in mem.search(q, user_id="u", k=8, mode="lexical")]
            for q in ("copper kettle", "lantern 2 heron", "otter")
        ]
    with psycopg.connect(url, autocommit=True) as conn:
        for kind, table in (("memory", "memory_terms"), ("turn", "turn_terms")):
            rows = posting_rows(
                conn.execute(f"SELECT tenant_id, term, first, docs, tfs, lens FROM {kind}_postings")
            )
            assert rows
            conn.execute(f"DROP TABLE {kind}_postings, {kind}_docs")
            conn.execute(
                f"CREATE TABLE {table}(tenant_id bigint NOT NULL, term bigint NOT NULL,"
                " doc bigint NOT NULL, tf integer NOT NULL, len integer NOT NULL,"
                " PRIMARY KEY (tenant_id, term, doc)) PARTITION BY HASH (tenant_id)"
            )
            for r in range(16):
                conn.execute(
                    f"CREATE TABLE {table}_p{r} PARTITION OF {table}"
                    f" FOR VALUES WITH (MODULUS 16, REMAINDER {r})"
                )
            with conn.cursor() as cur:
                cur.executemany(f"INSERT INTO {table} VALUES (%s, %s, %s, %s, %s)", rows)
        conn.execute("UPDATE meta SET value = '5' WHERE key = 'schema_version'")
    # read in batches that cut through terms' postings
    monkeypatch.setattr("unrecall.storage.postgres._PACK_BATCH", 7)
    with Memory(url, embedder="hashing") as mem:
        assert mem.storage.upgrades() == []
        after = [
            [(h.id, round(h.score, 9)) for h in mem.search(q, user_id="u", k=8, mode="lexical")]
            for q in ("copper kettle", "lantern 2 heron", "otter")
        ]
        assert after == before and after[0] and after[2] == []
        assert _bm25_statistics_drift(url) == []
        tables = {r[0] for r in raw_sql(mem, "SELECT tablename FROM pg_tables")}
        assert "memory_terms" not in tables and "memory_postings" in tables


def test_a_small_tenant_is_scanned_exactly_and_a_large_one_in_the_index(
    url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    # In a part shared with other tenants, HNSW walks their neighbours too:
    # at a million memories over 1,000 tenants it was 10x slower than an
    # exact scan of the tenant's rows and agreed with it in 24 of 60 top-20
    # lists. What the planner makes of each statement vector() sends is
    # checked with sorting disabled, where it takes the index if it can.
    sent: list[tuple[str, tuple[object, ...]]] = []
    execute = psycopg.Connection.execute

    def recording(self: psycopg.Connection, query: str, params: object = None, **kw: object):  # type: ignore[no-untyped-def]
        if "FROM memory_vectors" in str(query) and "ORDER BY" in str(query):
            sent.append((str(query), params))  # type: ignore[arg-type]
        return execute(self, query, params, **kw)  # type: ignore[arg-type]

    with Memory(url, embedder="hashing") as mem:
        for i in range(12):
            mem.add(f"the heron {i} waits by lantern {i % 5}", user_id="u")
        monkeypatch.setattr(psycopg.Connection, "execute", recording)
        monkeypatch.setattr("unrecall.storage.postgres.EXACT_UP_TO", 100)
        exact = mem.search("heron lantern", user_id="u", k=3)
        monkeypatch.setattr("unrecall.storage.postgres.EXACT_UP_TO", 5)
        indexed = mem.search("heron lantern", user_id="u", k=3)
        monkeypatch.setattr(psycopg.Connection, "execute", execute)
    assert [h.id for h in exact] == [h.id for h in indexed]
    plans = []
    with psycopg.connect(url, autocommit=True) as conn:
        register_vector(conn)
        conn.execute("SET enable_sort = off")
        for query, params in sent:
            plan = conn.execute(f"EXPLAIN {query}", params).fetchall()
            plans.append(" ".join(r[0] for r in plan))
    assert len(plans) == 2
    assert "embedding_idx" not in plans[0] and "Sort" in plans[0]
    assert "embedding_idx" in plans[1]
