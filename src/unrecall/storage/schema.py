"""SQLite schema: the current layout for a new store, and the migrations
that bring an older store to it, keyed by ``PRAGMA user_version``.

A store written by a newer unrecall (higher version) is refused rather than
guessed. A migration that needs the planes (re-deriving full-text rows,
re-chaining the audit) leaves its name in ``meta.upgrade``; ``Memory`` runs
it on open. ``tests/test_schema_migration.py`` checks that a migrated store
ends with exactly the layout of a new one.
"""

from __future__ import annotations

SCHEMA_VERSION = 9

_TENANTS = """CREATE TABLE tenants(
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    key TEXT NOT NULL UNIQUE,
    handle TEXT,
    version INTEGER NOT NULL DEFAULT 0)"""

# The tables schema v1 made and v3 keeps as they were.
_CORE = [
    "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
    "CREATE TABLE secrets(name TEXT PRIMARY KEY, value BLOB NOT NULL)",
    """CREATE TABLE turns(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uid TEXT NOT NULL UNIQUE,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        role TEXT NOT NULL,
        text TEXT NOT NULL,
        session_id TEXT,
        at REAL NOT NULL,
        metadata TEXT NOT NULL DEFAULT '{}')""",
    "CREATE INDEX turns_tenant ON turns(tenant_id, at)",
    """CREATE TABLE memories(
        id INTEGER PRIMARY KEY AUTOINCREMENT,
        uid TEXT NOT NULL UNIQUE,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        agent_id TEXT,
        run_id TEXT,
        text TEXT NOT NULL,
        kind TEXT NOT NULL,
        state TEXT NOT NULL CHECK (state IN ('active', 'released', 'superseded')),
        created_at REAL NOT NULL,
        updated_at REAL NOT NULL,
        expires_at REAL,
        metadata TEXT NOT NULL DEFAULT '{}',
        superseded_by INTEGER REFERENCES memories(id) ON DELETE SET NULL)""",
    "CREATE INDEX memories_tenant_state ON memories(tenant_id, state)",
    "CREATE INDEX memories_expiry ON memories(expires_at) WHERE expires_at IS NOT NULL",
    "CREATE INDEX memories_successor ON memories(superseded_by) WHERE superseded_by IS NOT NULL",
    """CREATE TABLE provenance(
        memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
        turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
        PRIMARY KEY (memory_id, turn_id)) WITHOUT ROWID""",
    "CREATE INDEX provenance_turn ON provenance(turn_id, memory_id)",
    """CREATE TABLE audit(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        at REAL NOT NULL,
        tenant TEXT NOT NULL,
        op TEXT NOT NULL,
        detail TEXT NOT NULL,
        refs TEXT NOT NULL,
        prev TEXT NOT NULL,
        hash TEXT NOT NULL)""",
    """CREATE TABLE audit_refs(
        ref TEXT NOT NULL,
        seq INTEGER NOT NULL REFERENCES audit(seq),
        PRIMARY KEY (ref, seq)) WITHOUT ROWID""",
]


def _postings(table: str) -> list[str]:
    # (Schemas v3 to v5; v6 keeps postings in blocks, ``_blocks``.)
    # One row per (term, document): a delete removes exactly the document's
    # rows from an ordinary b-tree, and secure_delete zeroes their bytes. The
    # document length rides in each row, so BM25 needs no second lookup.
    # (Counters are kept by the storage code, not by triggers: a trigger per
    # row made a large ingest transaction in WAL mode 25 times slower.)
    return [
        f"""CREATE TABLE {table}(
            term INTEGER NOT NULL,
            doc INTEGER NOT NULL,
            tf INTEGER NOT NULL,
            len INTEGER NOT NULL,
            PRIMARY KEY (term, doc)) WITHOUT ROWID""",
        f"CREATE INDEX {table}_doc ON {table}(doc)",
    ]


# What schema v3 added: the full-text index as plain b-tree rows over a
# per-tenant lexicon (the only place a word's keyed digest is, gone with the
# word's last use: ``mdf`` and ``tdf`` count the memories and turns using
# it), vectors in a plain table, and tenant versions (moved by every write
# transaction that changes what the tenant holds).
_V3 = [
    """CREATE TABLE lexicon(
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL REFERENCES tenants(id),
        digest BLOB NOT NULL,
        mdf INTEGER NOT NULL DEFAULT 0,
        tdf INTEGER NOT NULL DEFAULT 0,
        UNIQUE (tenant_id, digest))""",
    # BM25's collection statistics, per tenant and table (m, t).
    """CREATE TABLE term_stats(
        tenant_id INTEGER NOT NULL,
        kind TEXT NOT NULL,
        docs INTEGER NOT NULL,
        length INTEGER NOT NULL,
        PRIMARY KEY (tenant_id, kind)) WITHOUT ROWID""",
    # Each memory's float32 vector, for the exact rescore (and, from v7,
    # the vector list it is in); a plain table deletes a row in O(log n).
    """CREATE TABLE memory_vectors(
        id INTEGER PRIMARY KEY,
        tenant_id INTEGER NOT NULL,
        embedding BLOB NOT NULL)""",
    "CREATE INDEX memory_vectors_tenant ON memory_vectors(tenant_id)",
]


# What schema v5 added: the ids of memories whose vectors each commit added
# or removed (``memory_id`` 0: the tenant was erased), so a process keeps
# its in-memory vector matrices in step with another's commits instead of
# reloading them (``SQLiteStorage``). Ids only, no text and no vector; old
# rows are pruned, and an erased tenant's rows go with it (AUTOINCREMENT: a
# seq is never reused after those deletes, so no reader takes a new row for
# one it has seen).
_V5 = [
    """CREATE TABLE vector_log(
        seq INTEGER PRIMARY KEY AUTOINCREMENT,
        tenant_id INTEGER NOT NULL,
        memory_id INTEGER NOT NULL)""",
]


def _blocks(kind: str) -> list[str]:
    # A term's postings in blocks of up to storage.postings.BLOCK documents
    # (doc ids, tfs, lengths as packed arrays, under the block's first doc),
    # and per document its length and the ids of its terms, to find its
    # blocks again when it goes. Removing a document rewrites those blocks;
    # secure_delete zeroes what they held.
    return [
        f"""CREATE TABLE {kind}_postings(
            term INTEGER NOT NULL,
            first INTEGER NOT NULL,
            docs BLOB NOT NULL,
            tfs BLOB NOT NULL,
            lens BLOB NOT NULL,
            UNIQUE (term, first))""",
        f"""CREATE TABLE {kind}_docs(
            doc INTEGER PRIMARY KEY,
            len INTEGER NOT NULL,
            terms BLOB NOT NULL)""",
    ]


# What schema v6 changed: postings in blocks (issues #16, #17: BM25 summed a
# row per posting, ~0.35 us each, and a query reads ~80,000 of them in a
# tenant of a million memories).
_V6 = [*_blocks("memory"), *_blocks("turn")]


# What schema v7 changed: vectors in lists (issue #17, storage.vector_lists).
# A list's size and centroid, and its members' int8 codes in chunks of up to
# vector_lists.CHUNK (ids, codes and per-row scales as packed arrays). A
# member leaving rewrites its list's chunks and centroid; secure_delete
# zeroes what they held. Replaces v5's vector_log: with no in-process copy
# of the vectors, there is nothing to keep in step.
_LISTS = [
    """CREATE TABLE vector_lists(
        tenant_id INTEGER NOT NULL,
        list INTEGER NOT NULL,
        size INTEGER NOT NULL,
        centroid BLOB NOT NULL,
        UNIQUE (tenant_id, list))""",
    """CREATE TABLE vector_chunks(
        tenant_id INTEGER NOT NULL,
        list INTEGER NOT NULL,
        chunk INTEGER NOT NULL,
        ids BLOB NOT NULL,
        codes BLOB NOT NULL,
        meta BLOB NOT NULL,
        UNIQUE (tenant_id, list, chunk))""",
]
_V7 = ["ALTER TABLE memory_vectors ADD COLUMN list INTEGER", *_LISTS]


# What schema v8 changed: a vector in a large tenant is also in a second
# list (SOAR, storage.vector_lists), named by ``spill``.
_V8 = ["ALTER TABLE memory_vectors ADD COLUMN spill INTEGER"]

# The lists set aside, to be made again. Their tables are renamed to
# ``OLD_LISTS`` at once and new empty ones made; ``SQLiteStorage.relist``
# deletes the old rows a batch a transaction (a single DELETE of 1.3 GB of
# chunks held the write lock 7.1-12.2 s at 1M), then lists the vectors stored so
# far (ids after the first number of ``relist``, up to the second) anew, a
# batch a transaction.
OLD_LISTS = ("old_vector_chunks", "old_vector_lists")
RELIST = [
    # every tenant's lists change: whatever a process holds of them, by the
    # tenant's version, is stale (storage.list_cache, the cached centroids)
    "UPDATE tenants SET version = version + 1",
    "ALTER TABLE vector_chunks RENAME TO old_vector_chunks",
    "ALTER TABLE vector_lists RENAME TO old_vector_lists",
    *_LISTS,
    "INSERT OR REPLACE INTO meta SELECT 'relist',"
    " (coalesce(min(id), 1) - 1) || ' ' || coalesce(max(id), 0) FROM memory_vectors",
]


def schema() -> list[str]:
    """Statements that make a new store of the current version."""
    return [_TENANTS, *_CORE, *_V3, *_V6, *_V7, *_V8]


def migrations() -> dict[int, list[str]]:
    """Statements that bring a store from version ``n - 1`` to ``n``; the
    vec0 virtual table of versions 1 and 2 needs sqlite-vec loaded."""
    return {
        # v2 gave vec0 smaller chunks; v3 moves the vectors out of vec0, so a
        # v1 store goes straight there.
        2: [],
        # Erasure an attacker cannot undo (issue #12). v2's FTS5 rows held
        # keyed digests of words, and the key sits in the file: a digest an
        # index page kept after a delete (a tombstoned posting, a page
        # separator) was the word. The audit named a tenant by a keyed hash of
        # its user id; now by a random handle that dies with the tenant row.
        # vec0 deleted a tenant row by row at ~5 ms a row. The old tables are
        # dropped (secure_delete zeroes their pages); ``reindex`` and
        # ``rechain`` finish the move.
        3: [
            "DROP TABLE memory_fts",
            "DROP TABLE turn_fts",
            "ALTER TABLE tenants ADD COLUMN handle TEXT",
            "ALTER TABLE tenants ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
            *_V3,
            *_postings("memory_terms"),  # until v6
            *_postings("turn_terms"),
            "INSERT INTO memory_vectors(id, tenant_id, embedding)"
            " SELECT rowid, tenant_id, embedding FROM memory_vec",
            "DROP TABLE memory_vec",
            "INSERT OR REPLACE INTO meta VALUES ('upgrade', 'reindex rechain')",
        ],
        # The full-text index keeps word stems (issue #13): its postings are
        # written again from the texts by ``reindex``.
        4: [
            "DELETE FROM memory_terms",
            "DELETE FROM turn_terms",
            "DELETE FROM lexicon",
            "DELETE FROM term_stats",
            "INSERT OR REPLACE INTO meta VALUES ('upgrade', trim(coalesce("
            "(SELECT value FROM meta WHERE key = 'upgrade'), '') || ' reindex'))",
        ],
        # Served by several processes (issue #15): the vector change log.
        5: _V5,
        # Postings in blocks: the rows of memory_terms and turn_terms are
        # packed into them by ``SQLiteStorage._pack_postings``, which then
        # drops those tables (the lexicon and statistics stay as they are).
        6: _V6,
        # Vectors in lists (listed by v8's step); the vector log goes.
        7: [*_V7, "DROP TABLE vector_log"],
        # Second lists: the lists are made again.
        8: [*_V8, *RELIST],
        # Page gaps zeroed at each checkpoint (``storage.page_gaps``): the
        # pages of a store made before are zeroed once, by
        # ``SQLiteStorage.scrub``, a batch a transaction.
        9: [
            "INSERT OR REPLACE INTO meta SELECT 'scrub', '0 ' || page_count FROM pragma_page_count"
        ],
    }
