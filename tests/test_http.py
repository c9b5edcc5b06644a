"""The REST service as a client sees it: a real ``unrecall serve`` process
on a free loopback port, spoken to over HTTP with httpx.

One module-scoped server (hashing embedder, an admin key) serves most tests;
the multi-worker test starts its own, without an admin key.
"""

from __future__ import annotations

import os
import secrets
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from conftest import BACKENDS, new_postgres_url
from helpers import erases, token
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

ADMIN = "admin-" + secrets.token_hex(16)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class Server:
    """An ``unrecall serve`` subprocess whose stdout and stderr go to files."""

    def __init__(
        self, folder: Path, *, workers: int = 1, admin: bool = True, db: str | None = None
    ) -> None:
        self.folder = folder
        self.db = db or str(folder / "store.db")
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        args = [
            sys.executable,
            "-m",
            "unrecall.interfaces.cli",
            "serve",
            "--db",
            self.db,
            "--embedder",
            "hashing",
            "--port",
            str(self.port),
            "--workers",
            str(workers),
        ]
        if admin:
            key_file = folder / "admin.key"
            key_file.write_text(ADMIN + "\n")
            args += ["--admin-key-file", str(key_file)]
        self.out = open(folder / "stdout.log", "wb")  # noqa: SIM115 - closed in stop()
        self.err = open(folder / "stderr.log", "wb")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if k != "UNRECALL_ADMIN_KEY"}
        if "://" in self.db:  # a database's default key is in $HOME: keep this one's here
            env["UNRECALL_RECEIPT_KEY"] = str(folder / "receipt.key")
        self.proc = subprocess.Popen(args, stdout=self.out, stderr=self.err, env=env)
        self.client = httpx.Client(base_url=self.url, timeout=60)
        deadline = time.monotonic() + 120
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"server exited: {self.logs()[-2000:]}")
            try:
                if self.client.get("/healthz").json().get("status") == "ok":
                    break
            except httpx.TransportError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("server did not come up")
            time.sleep(0.2)

    def logs(self) -> str:
        """Everything the server printed so far."""
        self.out.flush()
        self.err.flush()
        return "".join(
            (self.folder / n).read_text(errors="replace") for n in ("stdout.log", "stderr.log")
        )

    def post(self, path: str, key: str | None, body: Any = None, **kw: Any) -> httpx.Response:
        """POST a JSON body with a bearer key (None: no Authorization header)."""
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        return self.client.post(path, json=body, headers=headers, **kw)

    def get(self, path: str, key: str | None) -> httpx.Response:
        headers = {} if key is None else {"Authorization": f"Bearer {key}"}
        return self.client.get(path, headers=headers)

    def new_key(self, **tenant: str) -> str:
        r = self.post("/v1/admin/keys", ADMIN, tenant)
        assert r.status_code == 200, r.text
        return str(r.json()["key"])

    def stop(self) -> None:
        self.client.close()
        self.proc.terminate()
        try:
            self.proc.wait(30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.out.close()
        self.err.close()

    def claims_erasure(self) -> bool:
        """Whether the server's store claims physical erasure (``helpers.erases``)."""
        from unrecall import Memory

        with Memory(self.db, embedder="hashing") as mem:
            return erases(mem)


@pytest.fixture(scope="module", params=BACKENDS)
def server(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[Server]:
    """One server per backend for the module: a store file, or a database
    (made here, as conftest's stores are one per test)."""
    folder = tmp_path_factory.mktemp("http")
    if request.param != "postgres":
        s = Server(folder)
        yield s
        s.stop()
        return
    s = Server(folder, db=new_postgres_url(request.getfixturevalue("postgres_server"), request))
    yield s
    s.stop()


def ok(r: httpx.Response) -> dict[str, Any]:
    assert r.status_code == 200, (r.status_code, r.text)
    return dict(r.json())


def test_every_endpoint_answers(server: Server) -> None:
    user = "ann-" + token()
    key = server.new_key(user_id=user)
    add = ok(server.post("/v1/memories/add", key, {"text": "My dentist is Dr Okafor in Leeds."}))
    mid = add["ids"][0]
    said = ok(
        server.post(
            "/v1/memories/add",
            key,
            {
                "messages": [
                    {"role": "user", "content": "I drive a blue Fiat Panda to work."},
                    {"role": "user", "content": "Please forget that I drive a blue Fiat Panda."},
                ],
                "session_id": "s1",
            },
        )
    )
    assert said["requests"], "the forget request said in the messages was executed"
    hits = ok(server.post("/v1/memories/search", key, {"query": "who is my dentist", "k": 3}))
    assert hits["hits"] and hits["hits"][0]["id"] == mid
    removed = said["requests"][0]["removed"]
    assert removed and set(removed) <= set(said["ids"])
    for gone in removed:
        assert server.post("/v1/memories/get", key, {"id": gone}).status_code == 404
    assert ok(server.post("/v1/memories/get", key, {"id": mid}))["text"].startswith("My dentist")
    listed = ok(server.post("/v1/memories/list", key, {"states": ["active"]}))["memories"]
    assert mid in [x["id"] for x in listed]
    ok(server.post("/v1/memories/update", key, {"id": mid, "text": "My dentist is Dr Ade."}))
    ok(server.post("/v1/memories/edit", key, {"id": mid, "new_text": "My dentist is Dr Obi."}))
    sup = ok(
        server.post(
            "/v1/memories/supersede", key, {"target": "dentist", "new_text": "I have no dentist."}
        )
    )
    new = sup["created"][0]
    ok(server.post("/v1/memories/release", key, {"target": new}))
    ok(server.post("/v1/memories/restore", key, {"id": new}))
    ok(server.post("/v1/memories/set-expiry", key, {"id": new, "expires_at": None}))
    assert ok(server.post("/v1/memories/history", key, {"id": new}))["events"]
    ok(server.post("/v1/memories/add", key, {"text": "Maya works at Brightline with Tom."}))
    forgot = ok(server.post("/v1/memories/forget", key, {"request": "Maya works at Brightline"}))
    assert forgot["kind"] == "trail"
    ok(server.post("/v1/memories/residual", key, {"request": "Maya and Brightline"}))
    ok(server.post("/v1/memories/entities", key, {}))
    ok(server.post("/v1/memories/delete", key, {"id": new}))
    assert ok(server.post("/v1/memories/export", key, {}))["memories"] is not None
    ok(server.post("/v1/memories/add", key, {"text": "A last note."}))
    assert ok(server.post("/v1/memories/delete-all", key))["count"] >= 1
    # the tenant is gone, and so is its key: its row named the user
    assert server.post("/v1/memories/list", key).status_code == 401
    keys = ok(server.get("/v1/admin/keys", ADMIN))
    assert user not in str(keys)
    verify = ok(server.post("/v1/admin/verify", ADMIN, {"strings": [user]}))
    if server.claims_erasure():  # where erasure is claimed, the scan proves it
        assert verify["clean"] is True
    assert ok(server.get("/v1/admin/audit", ADMIN))["ok"] is True
    ok(server.post("/v1/admin/expire", ADMIN, {"purge": False}))
    metrics = server.get("/metrics", ADMIN)
    assert metrics.status_code == 200
    assert 'unrecall_requests_total{op="add",status="200"}' in metrics.text
    assert server.get("/openapi.json", None).json()["paths"]["/v1/memories/search"]
    assert server.get("/docs", None).status_code == 200


def test_bad_input_is_a_4xx_that_does_not_echo_it(server: Server) -> None:
    key = server.new_key(user_id="bad-" + token())
    probe = token()
    bodies: list[tuple[str, Any]] = [
        ("/v1/memories/add", {"text": 12, "metadata": {"a": probe}, "ttl": probe}),
        ("/v1/memories/add", {"text": probe, "messages": [{"role": "user", "content": probe}]}),
        ("/v1/memories/add", {"messages": [{"role": probe, "content": probe}]}),
        ("/v1/memories/add", {"text": probe, "timestamp": probe}),
        ("/v1/memories/add", {"text": probe * 4000}),  # over max_text_chars, under the body limit
        ("/v1/memories/add", {"text": probe, "user_id": probe}),
        ("/v1/memories/add", {"text": probe + "\x00"}),
        ("/v1/memories/search", {"query": probe, "mode": probe}),
        ("/v1/memories/search", {"query": probe, "k": probe}),
        ("/v1/memories/search", {"query": probe, "k": 0}),
        ("/v1/memories/search", {"query": "   ", "filters": probe}),
        ("/v1/memories/get", {"id": probe}),
        ("/v1/memories/get", {"id": [probe]}),
        ("/v1/memories/update", {"id": probe, "text": probe}),
        ("/v1/memories/purge", {"target": probe}),
        ("/v1/memories/forget", {"request": probe, "budget": probe}),
        ("/v1/memories/list", {"states": [probe]}),
        ("/v1/memories/export", {probe: probe}),
    ]
    for path, body in bodies:
        r = server.post(path, key, body)
        assert 400 <= r.status_code < 500, (path, r.status_code)
        assert probe not in r.text, path
        assert r.json()["error"]
    raw = server.client.post(
        "/v1/memories/add",
        content=b'{"text": "' + probe.encode() + b'"',
        headers={"Authorization": f"Bearer {key}", "Content-Type": "application/json"},
    )
    assert raw.status_code == 422 and probe not in raw.text
    assert probe not in server.logs()


def test_a_body_over_the_limit_is_413(server: Server) -> None:
    key = server.new_key(user_id="big-" + token())
    r = server.post("/v1/memories/add", key, {"text": "x" * (1 << 20)})
    assert r.status_code == 413
    assert ok(server.post("/v1/memories/list", key))["memories"] == []


def test_a_missing_or_unknown_key_is_401(server: Server) -> None:
    for key in (None, "not-a-key", secrets.token_urlsafe(32)):
        r = server.post("/v1/memories/search", key, {"query": "anything"})
        assert r.status_code == 401
        assert r.headers["www-authenticate"] == "Bearer"
    r = server.client.post(
        "/v1/memories/list", json={}, headers={"Authorization": f"Basic {ADMIN}"}
    )
    assert r.status_code == 401
    tenant_key = server.new_key(user_id="nosy-" + token())
    assert server.get("/v1/admin/keys", tenant_key).status_code == 403
    assert server.get("/v1/admin/keys", None).status_code == 401
    assert server.get("/metrics", tenant_key).status_code == 403


def test_admin_key_lifecycle(server: Server) -> None:
    user = "life-" + token()
    made = ok(server.post("/v1/admin/keys", ADMIN, {"user_id": user}))
    key, key_id = made["key"], made["key_id"]
    agent_key = server.new_key(agent_id="bot-" + token())
    listed = ok(server.get("/v1/admin/keys", ADMIN))["keys"]
    mine = [k for k in listed if k["key_id"] == key_id]
    assert mine == [
        {"key_id": key_id, "user_id": user, "agent_id": None, "created_at": made["created_at"]}
    ]
    assert key not in server.get("/v1/admin/keys", ADMIN).text
    assert key not in server.logs()
    ok(server.post("/v1/memories/add", key, {"text": "I keep bees on the roof."}))
    item = ok(server.post("/v1/memories/list", key))["memories"][0]
    assert item["user_id"] == user
    ok(server.post("/v1/memories/add", agent_key, {"text": "The agent prefers short replies."}))
    bot = ok(server.post("/v1/memories/list", agent_key))["memories"]
    assert [m["user_id"] for m in bot] == [None]
    assert server.post("/v1/memories/list", agent_key, {"agent_id": "x"}).status_code == 422
    for bad in ({}, {"user_id": "a", "agent_id": "b"}, {"user_id": ""}, {"key": "k"}):
        assert server.post("/v1/admin/keys", ADMIN, bad).status_code == 422
    assert ok(server.post("/v1/admin/keys/revoke", ADMIN, {"key_id": key_id}))["revoked"] is True
    assert ok(server.post("/v1/admin/keys/revoke", ADMIN, {"key_id": key_id}))["revoked"] is False
    assert server.post("/v1/memories/list", key).status_code == 401
    assert key_id not in server.get("/v1/admin/keys", ADMIN).text
    # a new key for the same user opens the same memories
    again = server.new_key(user_id=user)
    assert ok(server.post("/v1/memories/list", again))["memories"][0]["id"] == item["id"]


def test_a_purged_text_is_nowhere(server: Server) -> None:
    key = server.new_key(user_id="purge-" + token())
    secret = token()
    text = f"My locker code is {secret} at the gym."
    added = ok(server.post("/v1/memories/add", key, {"text": text}))
    assert secret not in str(added)
    ok(server.post("/v1/memories/add", key, {"text": "I swim on Tuesdays."}))
    purged = ok(server.post("/v1/memories/purge", key, {"target": text}))
    claimed = server.claims_erasure()
    assert purged["count"] >= 1 and purged["erased"] is claimed
    seen = [
        purged,
        ok(server.post("/v1/memories/search", key, {"query": secret, "mode": "lexical"})),
        ok(server.post("/v1/memories/search", key, {"query": "locker code at the gym"})),
        ok(server.post("/v1/memories/list", key, {"states": ["active", "released", "superseded"]})),
        ok(server.post("/v1/memories/export", key)),
    ]
    seen += [ok(server.post("/v1/memories/history", key, {"id": i})) for i in added["ids"]]
    for body in seen:
        assert secret not in str(body)
    verify = ok(server.post("/v1/admin/verify", ADMIN, {"strings": [secret, text]}))
    assert verify["clean"] is True or not claimed, verify
    assert secret not in str(verify)
    assert secret not in server.logs()


@pytest.fixture(scope="module")
def two_tenants(server: Server) -> dict[str, Any]:
    """Tenant A (empty but for one memory) and tenant B with known memories."""
    a_user, b_user = "a-" + token(), "b-" + token()
    a_key, b_key = server.new_key(user_id=a_user), server.new_key(user_id=b_user)
    ok(server.post("/v1/memories/add", a_key, {"text": "I like tea."}))
    b_token = token()
    b_ids: list[str] = []
    for text in (f"My passport number is {b_token}.", f"{b_token} is my wifi password."):
        b_ids += ok(server.post("/v1/memories/add", b_key, {"text": text}))["ids"]
    b_export = ok(server.post("/v1/memories/export", b_key))
    b_ids += [t["id"] for t in b_export["turns"]]
    return {
        "a_key": a_key,
        "b_key": b_key,
        "b_user": b_user,
        "b_token": b_token,
        "b_ids": b_ids,
        "b_before": ok(server.post("/v1/memories/list", b_key))["memories"],
    }


ID_OPS = ["get", "update", "delete", "edit", "restore", "history", "set-expiry"]
TARGET_OPS = ["purge", "release", "supersede"]


@settings(
    max_examples=30,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)
@given(data=st.data())
def test_one_tenant_never_reaches_another(
    server: Server, two_tenants: dict[str, Any], data: st.DataObject
) -> None:
    t = two_tenants
    ident = data.draw(st.sampled_from(t["b_ids"]) | st.text(max_size=24), label="id")
    user = data.draw(
        st.none() | st.sampled_from([t["b_user"], "bob"]) | st.text(max_size=12), label="user_id"
    )
    op = data.draw(st.sampled_from([*ID_OPS, *TARGET_OPS, "search", "export", "list"]))
    body: dict[str, Any]
    if op in ID_OPS:
        body = {"id": ident}
        if op == "update":
            body["text"] = "overwritten"
        elif op == "edit":
            body["new_text"] = "overwritten"
    elif op in TARGET_OPS:
        body = {"target": data.draw(st.sampled_from([ident, t["b_token"]]))}
        if op == "supersede":
            body["new_text"] = "overwritten"
    elif op == "search":
        body = {"query": t["b_token"], "mode": data.draw(st.sampled_from(["hybrid", "lexical"]))}
    else:
        body = {}
    if user is not None:
        body["user_id"] = user
    r = server.post(f"/v1/memories/{op}", t["a_key"], body)
    assert r.status_code < 500, r.text
    assert t["b_token"] not in r.text
    assert not any(i in r.text for i in t["b_ids"] if i != ident)
    if user is not None:
        assert r.status_code == 422  # a tenant in a body is refused, never followed
    elif ident in t["b_ids"] and op in ID_OPS:
        # another tenant's id answers exactly like an id nobody has
        missing = ident[:2] + secrets.token_hex(10)
        other = server.post(f"/v1/memories/{op}", t["a_key"], {**body, "id": missing})
        assert r.status_code == other.status_code
        assert r.text.replace(ident, "ID") == other.text.replace(missing, "ID")
    # B's memories are exactly as they were
    assert ok(server.post("/v1/memories/list", t["b_key"]))["memories"] == t["b_before"]


def test_two_workers_keep_every_acknowledged_write(tmp_path: Path, store_location: str) -> None:
    srv = Server(tmp_path, workers=2, admin=False, db=store_location)
    try:
        # no admin key configured: the admin endpoints answer 403
        assert srv.get("/v1/admin/keys", "anything").status_code == 403
        assert srv.get("/metrics", None).status_code == 403
        from unrecall import Memory
        from unrecall.interfaces.keys import KeyStore, Tenant

        with Memory(store_location, embedder="hashing") as mem:
            keys = [KeyStore(mem.storage).create(Tenant(f"w{i}", None))[1] for i in range(4)]
        acked: list[tuple[str, str, str]] = []
        failures: list[str] = []
        lock = threading.Lock()

        def writer(i: int) -> None:
            with httpx.Client(base_url=srv.url, timeout=120) as c:
                for j in range(12):
                    text = f"Writer {i} noted fact number {j}: {token()}."
                    r = c.post(
                        "/v1/memories/add",
                        json={"text": text},
                        headers={"Authorization": f"Bearer {keys[i]}"},
                    )
                    with lock:
                        if r.status_code == 200:
                            acked.extend((keys[i], mid, text) for mid in r.json()["ids"])
                        else:
                            failures.append(f"{r.status_code} {r.text}")

        threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert failures == []
        assert len({mid for _, mid, _ in acked}) == len(acked) >= 48
        for key, mid, text in acked:
            got = srv.post("/v1/memories/get", key, {"id": mid})
            assert got.status_code == 200, got.text
            assert got.json()["id"] == mid and got.json()["text"] in text
        assert "database is locked" not in srv.logs()
    finally:
        srv.stop()
