"""SQLite schema and its migrations, keyed by ``PRAGMA user_version``.

Each migration is a list of statements applied in one transaction; a store
written by a newer unrecall (higher version) is refused rather than guessed.
A migration that needs the planes (re-deriving full-text rows, re-chaining
the audit) leaves its name in ``meta.upgrade``; ``Memory`` runs it on open.
"""

from __future__ import annotations

SCHEMA_VERSION = 3
# vec0 gives every tenant (partition) its own chunks, allocated whole: at
# sqlite-vec's default of 1024 rows a tenant with one memory took 1.5 MB.
VEC_CHUNK_ROWS = 32


def _fts(table: str) -> list[str]:
    # The table keeps its own content (random lexicon tokens, never words
    # or digests), so a DELETE tells FTS5 which postings to remove, and
    # secure-delete removes them from the index pages at once instead of
    # leaving them behind a tombstone until a merge.
    return [
        f"CREATE VIRTUAL TABLE {table} USING fts5(terms)",
        f"INSERT INTO {table}({table}, rank) VALUES('secure-delete', 1)",
    ]


def _bump(table: str, event: str, tenant: str) -> str:
    # Every change to what a tenant holds moves its version, so a plan made
    # outside the write lock can prove at apply time that what it read still
    # stands (``SQLiteStorage.tenant_version``).
    return (
        f"CREATE TRIGGER {table}_{event.lower()}_bump AFTER {event} ON {table} BEGIN"
        f" UPDATE tenants SET version = version + 1 WHERE id = {tenant}; END"
    )


def migrations(dim: int) -> dict[int, list[str]]:
    """Statements that bring a store from version ``n - 1`` to ``n``."""
    return {
        1: [
            "CREATE TABLE meta(key TEXT PRIMARY KEY, value TEXT NOT NULL)",
            "CREATE TABLE secrets(name TEXT PRIMARY KEY, value BLOB NOT NULL)",
            """CREATE TABLE tenants(
                id INTEGER PRIMARY KEY AUTOINCREMENT,
                key TEXT NOT NULL UNIQUE)""",
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
            "CREATE INDEX memories_successor ON memories(superseded_by)"
            " WHERE superseded_by IS NOT NULL",
            """CREATE TABLE provenance(
                memory_id INTEGER NOT NULL REFERENCES memories(id) ON DELETE CASCADE,
                turn_id INTEGER NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
                PRIMARY KEY (memory_id, turn_id)) WITHOUT ROWID""",
            "CREATE INDEX provenance_turn ON provenance(turn_id, memory_id)",
            "CREATE VIRTUAL TABLE memory_fts USING fts5(terms, content='', contentless_delete=1)",
            "CREATE VIRTUAL TABLE turn_fts USING fts5(terms, content='', contentless_delete=1)",
            f"CREATE VIRTUAL TABLE memory_vec USING vec0("
            f"tenant_id integer partition key, embedding float[{dim}] distance_metric=cosine)",
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
        ],
        # Smaller vec0 chunks (see VEC_CHUNK_ROWS). vec0 cannot be renamed,
        # so the vectors move out to a plain table and back; secure_delete
        # zeroes the pages both leave behind.
        2: [
            "CREATE TABLE memory_vec_move("
            "id INTEGER PRIMARY KEY, tenant_id INTEGER, embedding BLOB)",
            "INSERT INTO memory_vec_move SELECT rowid, tenant_id, embedding FROM memory_vec",
            "DROP TABLE memory_vec",
            f"CREATE VIRTUAL TABLE memory_vec USING vec0("
            f"tenant_id integer partition key, embedding float[{dim}] distance_metric=cosine,"
            f" chunk_size={VEC_CHUNK_ROWS})",
            "INSERT INTO memory_vec(rowid, tenant_id, embedding)"
            " SELECT id, tenant_id, embedding FROM memory_vec_move",
            "DROP TABLE memory_vec_move",
        ],
        # Erasure an attacker cannot undo (issue #12). v2's full-text rows
        # held keyed digests of words; the key sits in the file, so a digest
        # left in an index page (a tombstoned posting, a page separator) was
        # the word. Now FTS5 holds random tokens, one per word and tenant,
        # through a lexicon that forgets a word with its last use: what an
        # index page may keep is then a random string. The audit names a
        # tenant by a random handle that dies with the tenant row, not by a
        # keyed hash of its user id. The old full-text tables are dropped
        # (secure_delete zeroes their pages) and rebuilt by ``reindex``.
        3: [
            "DROP TABLE memory_fts",
            "DROP TABLE turn_fts",
            """CREATE TABLE lexicon(
                tenant_id INTEGER NOT NULL REFERENCES tenants(id),
                digest BLOB NOT NULL,
                token TEXT NOT NULL UNIQUE,
                refs INTEGER NOT NULL,
                PRIMARY KEY (tenant_id, digest)) WITHOUT ROWID""",
            *_fts("memory_fts"),
            *_fts("turn_fts"),
            "ALTER TABLE tenants ADD COLUMN handle TEXT",
            "ALTER TABLE tenants ADD COLUMN version INTEGER NOT NULL DEFAULT 0",
            *(
                _bump(table, event, f"{row}.tenant_id")
                for table in ("memories", "turns")
                for event, row in (("INSERT", "NEW"), ("UPDATE", "NEW"), ("DELETE", "OLD"))
            ),
            _bump(
                "provenance",
                "INSERT",
                "(SELECT tenant_id FROM memories WHERE id = NEW.memory_id)",
            ),
            "INSERT OR REPLACE INTO meta VALUES ('upgrade', 'reindex rechain')",
        ],
    }
