"""``unrecall serve``: a REST service over one store, FastAPI on uvicorn.

Every ``Memory`` operation is one ``POST /v1/memories/<op>`` endpoint with a
JSON body (texts never travel in a URL, so no access log can hold one), run
through ``AsyncMemory`` so the event loop never waits on SQLite.

Tenancy: ``Authorization: Bearer <key>``; a key opens one tenant (a user id,
or an agent id for agent-level memory; ``interfaces.keys``). A ``user_id``
in a body is *refused* (422: unknown field), never followed; ``agent_id`` /
``run_id`` narrow a user tenant on add, search and list, and are refused for
an agent tenant. An id of another tenant answers 404 exactly like a missing
one. Store-wide operations are admin-only (``Authorization: Bearer <admin
key>``): key management, ``verify`` (a byte scan of the whole file would
tell a tenant whether any string is stored for anyone), ``audit``,
``expire`` and ``/metrics`` (Prometheus text; counters are per worker
process). Without an admin key the admin endpoints answer 403.

Errors: ``InvalidInput`` 422, ``NotFound`` 404, ``StoreBusy`` 503, a body
over the limit 413, a missing or unknown key 401; a body names the error
kind, ids, counts and field locations, never the input. Anything else is a
bare 500, logged by exception type only. The access log names the operation,
never the path a client sent. Deleting a tenant (``delete-all``) deletes its
keys too (a key row names the tenant); revoking a key deletes its row.

With ``--workers N`` uvicorn starts N processes, each calling ``create_app``,
which reads its configuration from the environment (``UNRECALL_DB``,
``UNRECALL_EMBEDDER``, ``UNRECALL_ADMIN_KEY`` or ``UNRECALL_ADMIN_KEY_FILE``,
``UNRECALL_MAX_BODY``); writers of the processes queue on SQLite's busy
timeout, and a wait past it is a 503, never "database is locked".
"""

import argparse
import asyncio
import json
import logging
import os
import sys
import time
from collections import Counter
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Annotated, Any

from unrecall.errors import InvalidInput
from unrecall.interfaces import add_erasure_option, add_vector_cache_option
from unrecall.storage.list_cache import VECTOR_CACHE_MB
from unrecall.validation import check_store

DEFAULT_PORT = 8420
DEFAULT_MAX_BODY = 1 << 20  # 1 MiB
MIN_ADMIN_KEY = 16
# A body over the limit is read on (and dropped) up to this many times the
# limit, so the client sees the 413 rather than a reset connection.
DRAIN_FACTOR = 8

log = logging.getLogger("uvicorn.error")  # configured by uvicorn, printed to stderr

# Operation names by path: metrics and the access log name these, never a
# path a client made up.
MEMORY_OPS = (
    "add",
    "search",
    "get",
    "list",
    "update",
    "delete",
    "delete-all",
    "supersede",
    "edit",
    "release",
    "restore",
    "purge",
    "forget",
    "residual",
    "history",
    "export",
    "entities",
    "set-expiry",
)
ADMIN_OPS = ("keys", "keys/revoke", "verify", "audit", "expire")
OPS = {
    **{f"/v1/memories/{op}": op for op in MEMORY_OPS},
    **{f"/v1/admin/{op}": f"admin.{op}" for op in ADMIN_OPS},
    "/healthz": "healthz",
    "/metrics": "metrics",
    "/docs": "docs",
    "/openapi.json": "openapi",
}


class Config:
    """What one server process needs, read from the environment so every
    uvicorn worker builds the same app."""

    def __init__(self, env: dict[str, str] | None = None) -> None:
        env = dict(os.environ if env is None else env)
        db = env.get("UNRECALL_DB")
        if not db:
            raise SystemExit("unrecall serve: set UNRECALL_DB (or give --db)")
        self.db: Path | str = check_store(db)  # a PostgreSQL URL stays a URL
        self.embedder = env.get("UNRECALL_EMBEDDER", "minilm")
        self.erasure = env.get("UNRECALL_ERASURE", "commit")
        cache = env.get("UNRECALL_VECTOR_CACHE_MB")
        self.vector_cache_mb = None if cache is None else int(cache)
        self.max_body = int(env.get("UNRECALL_MAX_BODY", DEFAULT_MAX_BODY))
        self.admin_key = read_admin_key(env.get("UNRECALL_ADMIN_KEY_FILE"), env)


def read_admin_key(path: str | None, env: dict[str, str]) -> str | None:
    """The admin key from a file (its first line) or ``UNRECALL_ADMIN_KEY``;
    None when neither is set. A key shorter than 16 characters is refused."""
    key = Path(path).read_text(encoding="utf-8").strip() if path else env.get("UNRECALL_ADMIN_KEY")
    if key is None or key == "":
        return None
    if len(key) < MIN_ADMIN_KEY:
        raise SystemExit(f"unrecall serve: the admin key needs {MIN_ADMIN_KEY} characters or more")
    return key


class Metrics:
    """Requests by operation and status, in this process."""

    def __init__(self) -> None:
        self.counts: Counter[tuple[str, int]] = Counter()

    def count(self, op: str, status: int) -> None:
        """Count one answered request."""
        self.counts[(op, status)] += 1

    def text(self) -> str:
        """The Prometheus text exposition of the counters."""
        lines = [
            "# HELP unrecall_requests_total Requests answered, by operation and status.",
            "# TYPE unrecall_requests_total counter",
        ]
        for (op, status), n in sorted(self.counts.items()):
            lines.append(f'unrecall_requests_total{{op="{op}",status="{status}"}} {n}')
        return "\n".join(lines) + "\n"


async def _json(send: Callable[[dict[str, Any]], Awaitable[None]], status: int, body: Any) -> None:
    data = json.dumps(body).encode()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(data)).encode())]
    await send({"type": "http.response.start", "status": status, "headers": headers})
    await send({"type": "http.response.body", "body": data})


class Guard:
    """The outer ASGI layer: reads the body under the size limit (413 over
    it), turns any unexpected exception into a bare 500 that logs only the
    exception's type (no traceback, no input), counts every answer, and
    writes the access log line by operation name."""

    def __init__(self, app: Any, max_body: int, metrics: Metrics) -> None:
        self.app = app
        self.max_body = max_body
        self.metrics = metrics

    async def __call__(self, scope: dict[str, Any], receive: Any, send: Any) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        op = OPS.get(scope.get("path", ""), "other")
        began = time.perf_counter()
        status = 500
        started = False

        async def tracked(message: dict[str, Any]) -> None:
            nonlocal status, started
            if message["type"] == "http.response.start":
                status, started = message["status"], True
            await send(message)

        try:
            body = await self._body(receive)
            if body is None:
                await _json(tracked, 413, {"error": "too_large", "detail": self._too_large()})
                return
            replayed = False

            async def replay() -> dict[str, Any]:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                return await receive()

            await self.app(scope, replay, tracked)
        except Exception as exc:  # the one place every error ends
            log.error("internal error in %s: %s", op, type(exc).__name__)
            if not started:
                await _json(tracked, 500, {"error": "internal", "detail": "internal error"})
            status = 500
        finally:
            self.metrics.count(op, status)
            ms = (time.perf_counter() - began) * 1000
            log.info("%s %s -> %d (%.1f ms)", scope.get("method", "?"), op, status, ms)

    def _too_large(self) -> str:
        return f"the request body is over the limit of {self.max_body} bytes"

    async def _body(self, receive: Any) -> bytes | None:
        """The whole body, or None when it is over the limit (the rest is
        drained, up to a bound, so the client reads the 413)."""
        chunks: list[bytes] = []
        total = 0
        while True:
            message = await receive()
            if message["type"] == "http.disconnect":
                break
            total += len(message.get("body", b""))
            if total <= self.max_body:
                chunks.append(message.get("body", b""))
            elif total > DRAIN_FACTOR * self.max_body:
                return None
            if not message.get("more_body", False):
                break
        return None if total > self.max_body else b"".join(chunks)


def create_app(config: Config | None = None) -> Any:
    """The ASGI app (uvicorn's ``--factory`` target): FastAPI routes over one
    ``AsyncMemory`` opened at startup, inside the ``Guard`` layer."""
    from contextlib import asynccontextmanager

    from fastapi import Depends, FastAPI, Request, Security
    from fastapi.exceptions import RequestValidationError
    from fastapi.responses import JSONResponse, PlainTextResponse
    from fastapi.security import HTTPAuthorizationCredentials, HTTPBearer
    from starlette.exceptions import HTTPException

    from unrecall.async_memory import AsyncMemory
    from unrecall.errors import NotFound, StoreBusy, StoreError
    from unrecall.interfaces import http_models as m
    from unrecall.interfaces.keys import KeyStore, Tenant, same_key

    cfg = config or Config()
    fields = {"body", "header", "query", "path"} | {
        f
        for model in vars(m).values()
        if isinstance(model, type) and issubclass(model, m.BaseModel)
        for f in model.model_fields
    }
    metrics = Metrics()
    state: dict[str, Any] = {}

    @asynccontextmanager
    async def lifespan(_app: FastAPI) -> Any:
        mem = await asyncio.to_thread(
            AsyncMemory,
            cfg.db,
            embedder=cfg.embedder,
            erasure=cfg.erasure,
            vector_cache_mb=cfg.vector_cache_mb,
        )
        state["mem"] = mem
        state["keys"] = await asyncio.to_thread(KeyStore, mem.sync.storage)
        try:
            yield
        finally:
            await mem.close()

    app = FastAPI(
        title="unrecall",
        summary="Long-term memory for agents that forgets on request, precisely and verifiably.",
        version="1",
        lifespan=lifespan,
    )
    bearer = HTTPBearer(auto_error=False, description="a tenant key, or the admin key")
    Credentials = Annotated[HTTPAuthorizationCredentials | None, Security(bearer)]

    def err(kind: str, status: int, detail: Any) -> JSONResponse:
        return JSONResponse({"error": kind, "detail": detail}, status_code=status)

    @app.exception_handler(InvalidInput)
    async def _invalid(_r: Request, exc: InvalidInput) -> JSONResponse:
        return err("invalid_input", 422, str(exc))

    @app.exception_handler(NotFound)
    async def _missing(_r: Request, exc: NotFound) -> JSONResponse:
        return err("not_found", 404, str(exc))

    @app.exception_handler(StoreBusy)
    async def _busy(_r: Request, exc: StoreBusy) -> JSONResponse:
        return err("busy", 503, "the store is busy; retry")

    @app.exception_handler(StoreError)
    async def _store(_r: Request, exc: StoreError) -> JSONResponse:
        log.error("store error: %s", type(exc).__name__)
        return err("store", 500, "the store failed; nothing was written")

    @app.exception_handler(RequestValidationError)
    async def _validation(_r: Request, exc: RequestValidationError) -> JSONResponse:
        # FastAPI's own body carries each error's "input": here only where and why.
        # A location is a field this API declares, a list position, or "?" (an
        # unknown key is text the client chose).
        where = [
            {
                "loc": [x if isinstance(x, int) or x in fields else "?" for x in e.get("loc", ())],
                "msg": str(e.get("msg", ""))[:200],
            }
            for e in exc.errors()
        ]
        return err("invalid_input", 422, where)

    @app.exception_handler(HTTPException)
    async def _http(_r: Request, exc: HTTPException) -> JSONResponse:
        kind = {401: "unauthorized", 403: "forbidden", 404: "not_found"}.get(exc.status_code)
        response = err(kind or "http", exc.status_code, str(exc.detail))
        if exc.status_code == 401:
            response.headers["WWW-Authenticate"] = "Bearer"
        return response

    async def tenant(cred: Credentials) -> Tenant:
        """The tenant the bearer key opens; 401 without a known key."""
        if cred is None:
            raise HTTPException(401, "give Authorization: Bearer <key>")
        found = await asyncio.to_thread(state["keys"].tenant, cred.credentials)
        if found is None:
            raise HTTPException(401, "unknown API key")
        return found

    async def admin(cred: Credentials) -> None:
        """Pass with the admin key; 403 when none is configured or a tenant key is given."""
        if cfg.admin_key is None:
            raise HTTPException(403, "no admin key is configured")
        if cred is None:
            raise HTTPException(401, "give Authorization: Bearer <admin key>")
        if not same_key(cred.credentials, cfg.admin_key):
            if await asyncio.to_thread(state["keys"].tenant, cred.credentials) is not None:
                raise HTTPException(403, "a tenant key cannot do this")
            raise HTTPException(401, "unknown API key")

    def mem() -> AsyncMemory:
        return state["mem"]

    def narrowed(who: Tenant, body: m.Narrow) -> dict[str, Any]:
        scope: dict[str, Any] = who.scope()
        if body.agent_id is not None:
            if who.user_id is None:
                raise InvalidInput("agent_id narrows a user tenant only; this key is an agent's")
            scope["agent_id"] = body.agent_id
        if body.run_id is not None:
            scope["run_id"] = body.run_id
        return scope

    def op(report: Any) -> m.OpOut:
        return m.OpOut.model_validate(report.to_dict())

    def items(rows: list[Any]) -> m.MemoriesOut:
        return m.MemoriesOut(memories=[m.MemoryOut.model_validate(r.to_dict()) for r in rows])

    Who = Depends(tenant)
    mp = "/v1/memories"
    tags = ["memories"]

    @app.post(f"{mp}/add", response_model=m.OpOut, tags=tags)
    async def add(body: m.AddIn, who: Tenant = Who) -> m.OpOut:
        """Remember a text or a dialogue; forget requests said in user messages are executed."""
        if (body.text is None) == (body.messages is None):
            raise InvalidInput("give exactly one of text and messages")
        messages: Any = body.text
        if body.messages is not None:
            messages = [{"role": x.role, "content": x.content} for x in body.messages]
        options: dict[str, Any] = {
            "session_id": body.session_id,
            "timestamp": body.timestamp,
            "metadata": body.metadata,
            "expires_at": body.expires_at,
            "ttl": body.ttl,
            "honor_requests": body.honor_requests,
        }
        return op(await mem().add(messages, **options, **narrowed(who, body)))

    @app.post(f"{mp}/search", response_model=m.HitsOut, tags=tags)
    async def search(body: m.SearchIn, who: Tenant = Who) -> m.HitsOut:
        """The ``k`` best statements for a query."""
        options: dict[str, Any] = {"k": body.k, "filters": body.filters, "mode": body.mode}
        options["threshold"] = body.threshold
        hits = await mem().search(body.query, **options, **narrowed(who, body))
        return m.HitsOut(hits=[m.HitOut.model_validate(h.to_dict()) for h in hits])

    @app.post(f"{mp}/get", response_model=m.MemoryOut, tags=tags)
    async def get(body: m.IdIn, who: Tenant = Who) -> m.MemoryOut:
        """One memory with its provenance (404 for an id of no memory of yours)."""
        return m.MemoryOut.model_validate((await mem().get(body.id, **who.scope())).to_dict())

    @app.post(f"{mp}/list", response_model=m.MemoriesOut, tags=tags)
    async def get_all(body: m.ListIn | None = None, who: Tenant = Who) -> m.MemoriesOut:
        """Every memory in the given states (default: active), oldest first."""
        body = body or m.ListIn()
        return items(await mem().get_all(states=tuple(body.states), **narrowed(who, body)))

    @app.post(f"{mp}/update", response_model=m.OpOut, tags=tags)
    async def update(body: m.UpdateIn, who: Tenant = Who) -> m.OpOut:
        """Correct a memory's text in place."""
        return op(await mem().update(body.id, body.text, **who.scope()))

    @app.post(f"{mp}/delete", response_model=m.OpOut, tags=tags)
    async def delete(body: m.IdIn, who: Tenant = Who) -> m.OpOut:
        """Hard-delete a memory or a source turn, with closure."""
        return op(await mem().delete(body.id, **who.scope()))

    @app.post(f"{mp}/delete-all", response_model=m.OpOut, tags=tags)
    async def delete_all(body: m.Empty | None = None, who: Tenant = Who) -> m.OpOut:
        """Erase everything of your tenant (its API keys stay)."""
        return op(await mem().delete_all(**who.scope()))

    @app.post(f"{mp}/supersede", response_model=m.OpOut, tags=tags)
    async def supersede(body: m.SupersedeIn, who: Tenant = Who) -> m.OpOut:
        """Store a new value; what ``target`` names leaves recall."""
        report = await mem().supersede(
            body.target, body.new_text, timestamp=body.timestamp, **who.scope()
        )
        return op(report)

    @app.post(f"{mp}/edit", response_model=m.OpOut, tags=tags)
    async def edit(body: m.EditIn, who: Tenant = Who) -> m.OpOut:
        """A corrected version of one memory, keeping its provenance."""
        return op(await mem().edit(body.id, body.new_text, **who.scope()))

    @app.post(f"{mp}/release", response_model=m.OpOut, tags=tags)
    async def release(body: m.TargetIn, who: Tenant = Who) -> m.OpOut:
        """Take what ``target`` names out of recall, reversibly."""
        return op(await mem().release(body.target, **who.scope()))

    @app.post(f"{mp}/restore", response_model=m.OpOut, tags=tags)
    async def restore(body: m.IdIn, who: Tenant = Who) -> m.OpOut:
        """Bring a released memory back."""
        return op(await mem().restore(body.id, **who.scope()))

    @app.post(f"{mp}/purge", response_model=m.OpOut, tags=tags)
    async def purge(body: m.TargetIn, who: Tenant = Who) -> m.OpOut:
        """Hard-delete what ``target`` names (an id or an exact phrase), every copy."""
        return op(await mem().purge(body.target, **who.scope()))

    @app.post(f"{mp}/forget", response_model=m.ForgetOut, tags=tags)
    async def forget(body: m.ForgetIn, who: Tenant = Who) -> m.ForgetOut:
        """Forget a fact and the trail it could be pieced together from."""
        options = {} if body.budget is None else {"budget": body.budget}
        report = await mem().forget(body.request, **options, **who.scope())
        return m.ForgetOut.model_validate(report.to_dict())

    @app.post(f"{mp}/residual", response_model=m.MemoriesOut, tags=tags)
    async def residual(body: m.RequestIn, who: Tenant = Who) -> m.MemoriesOut:
        """Surviving memories that still connect the entities a request names."""
        return items(await mem().residual(body.request, **who.scope()))

    @app.post(f"{mp}/history", response_model=m.EventsOut, tags=tags)
    async def history(body: m.IdIn, who: Tenant = Who) -> m.EventsOut:
        """Audit events that touched a memory: operations and counts, no text."""
        events = await mem().history(body.id, **who.scope())
        return m.EventsOut(events=[m.EventOut.model_validate(e.to_dict()) for e in events])

    @app.post(f"{mp}/export", response_model=m.ExportOut, tags=tags)
    async def export(body: m.Empty | None = None, who: Tenant = Who) -> m.ExportOut:
        """Everything held about your tenant."""
        return m.ExportOut.model_validate(await mem().export(**who.scope()))

    @app.post(f"{mp}/entities", response_model=m.EntitiesOut, tags=tags)
    async def entities(body: m.Empty | None = None, who: Tenant = Who) -> m.EntitiesOut:
        """The entity graph of your memories."""
        found = await mem().entities(**who.scope())
        return m.EntitiesOut(entities=[m.EntityOut.model_validate(e.to_dict()) for e in found])

    @app.post(f"{mp}/set-expiry", response_model=m.OpOut, tags=tags)
    async def set_expiry(body: m.ExpiryIn, who: Tenant = Who) -> m.OpOut:
        """Set (or clear) when a memory expires."""
        return op(await mem().set_expiry(body.id, body.expires_at, **who.scope()))

    # -- admin ---------------------------------------------------------------
    Admin = [Depends(admin)]
    ap = "/v1/admin"
    atags = ["admin"]

    def key_out(info: Any) -> dict[str, Any]:
        return {
            "key_id": info.key_id,
            "user_id": info.tenant.user_id,
            "agent_id": info.tenant.agent_id,
            "created_at": info.created_at,
        }

    @app.post(f"{ap}/keys", response_model=m.NewKeyOut, dependencies=Admin, tags=atags)
    async def create_key(body: m.KeyIn) -> m.NewKeyOut:
        """A new key for a tenant; the key is in this answer only."""
        who = Tenant.of(body.user_id, body.agent_id)
        info, key = await asyncio.to_thread(state["keys"].create, who)
        return m.NewKeyOut(**key_out(info), key=key)

    @app.get(f"{ap}/keys", response_model=m.KeysOut, dependencies=Admin, tags=atags)
    async def list_keys() -> m.KeysOut:
        """Every live key: ids and tenants, never the keys."""
        infos = await asyncio.to_thread(state["keys"].list)
        return m.KeysOut(keys=[m.KeyOut(**key_out(i)) for i in infos])

    @app.post(f"{ap}/keys/revoke", response_model=m.RevokedOut, dependencies=Admin, tags=atags)
    async def revoke_key(body: m.KeyIdIn) -> m.RevokedOut:
        """Revoke a key by id (its row is deleted)."""
        return m.RevokedOut(revoked=await asyncio.to_thread(state["keys"].revoke, body.key_id))

    @app.post(f"{ap}/verify", response_model=m.ErasureOut, dependencies=Admin, tags=atags)
    async def verify(body: m.VerifyIn) -> m.ErasureOut:
        """Scan the raw bytes of every store file for each string (``verify_erased``)."""
        return m.ErasureOut.model_validate((await mem().verify_erased(body.strings)).to_dict())

    @app.get(f"{ap}/audit", response_model=m.AuditOut, dependencies=Admin, tags=atags)
    async def audit() -> m.AuditOut:
        """Walk the audit hash chain (``verify_audit``)."""
        check = await mem().verify_audit()
        return m.AuditOut(ok=check.ok, events=check.events, broken_at=check.broken_at)

    @app.post(f"{ap}/expire", response_model=m.OpOut, dependencies=Admin, tags=atags)
    async def expire(body: m.ExpireIn | None = None) -> m.OpOut:
        """Release (or purge) every memory past its expiry, in every tenant."""
        body = body or m.ExpireIn()
        return op(await mem().expire(purge=body.purge))

    @app.get("/healthz", tags=["service"])
    async def healthz() -> dict[str, str]:
        """Liveness, no key needed: ``{"status": "ok"}`` once the store is open."""
        return {"status": "ok" if "mem" in state else "starting"}

    @app.get("/metrics", response_class=PlainTextResponse, dependencies=Admin, tags=["service"])
    async def metrics_text() -> str:
        """Requests by operation and status in this worker (Prometheus text)."""
        return metrics.text()

    app.add_middleware(Guard, max_body=cfg.max_body, metrics=metrics)
    return app


# -- the CLI -------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``unrecall serve``."""
    parser.add_argument("--db", required=True, help="store file")
    parser.add_argument("--host", default="127.0.0.1", help="address to listen on")
    parser.add_argument("--port", type=int, default=DEFAULT_PORT)
    parser.add_argument("--workers", type=int, default=1, help="server processes")
    parser.add_argument(
        "--admin-key-file",
        default=None,
        help="file whose first line is the admin key (else $UNRECALL_ADMIN_KEY; none: admin 403)",
    )
    parser.add_argument(
        "--max-body", type=int, default=DEFAULT_MAX_BODY, help="request body limit in bytes"
    )
    parser.add_argument(
        "--embedder",
        default="minilm",
        choices=["minilm", "hashing"],
        help="embedder the store was built with",
    )
    add_erasure_option(parser)
    add_vector_cache_option(parser)
    parser.add_argument("--log-level", default="info", choices=["debug", "info", "warning"])


def worker_cache_mb(total: int | None, workers: int) -> int:
    """Each worker's share of the server's budget for held vector lists
    (``--vector-cache-mb``, default ``VECTOR_CACHE_MB``): each process holds
    its own, so N workers given the whole budget each would hold N times it.
    A budget too small to share out gives each worker 1 MB, not none."""
    budget = VECTOR_CACHE_MB if total is None else total
    return max(1, budget // workers) if budget > 0 else 0


def run_cli(args: argparse.Namespace) -> int:
    """Serve until interrupted; the workers read their configuration from the environment."""
    import uvicorn

    if args.workers < 1 or args.max_body < 1:
        print("error: --workers and --max-body must be positive", file=sys.stderr)
        return 2
    if args.vector_cache_mb is not None and args.vector_cache_mb < 0:
        print("error: --vector-cache-mb must be 0 or more", file=sys.stderr)
        return 2
    try:
        where = check_store(args.db)
    except InvalidInput as exc:
        print(f"error: --db: {exc}", file=sys.stderr)
        return 2
    os.environ["UNRECALL_DB"] = where if isinstance(where, str) else str(where.absolute())
    os.environ["UNRECALL_EMBEDDER"] = args.embedder
    os.environ["UNRECALL_ERASURE"] = args.erasure
    if isinstance(where, Path) or args.vector_cache_mb is not None:  # (PostgreSQL refuses it)
        share = worker_cache_mb(args.vector_cache_mb, args.workers)
        os.environ["UNRECALL_VECTOR_CACHE_MB"] = str(share)
    os.environ["UNRECALL_MAX_BODY"] = str(args.max_body)
    if args.admin_key_file:
        os.environ["UNRECALL_ADMIN_KEY_FILE"] = str(Path(args.admin_key_file).absolute())
    try:
        Config()  # refuse a bad admin key before any worker starts
    except (OSError, ValueError) as exc:
        print(f"error: cannot read the configuration ({type(exc).__name__})", file=sys.stderr)
        return 2
    uvicorn.run(
        "unrecall.interfaces.http:create_app",
        factory=True,
        host=args.host,
        port=args.port,
        workers=args.workers,
        access_log=False,  # Guard logs the operation name instead of the path
        log_level=args.log_level,
    )
    return 0
