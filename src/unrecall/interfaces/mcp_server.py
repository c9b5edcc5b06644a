"""``unrecall mcp``: one tenant's store served to an MCP client.

Seven tools (remember, recall, forget, purge, supersede, export,
verify_erased) are thin layers over ``Memory``, built on the official SDK's
``MCPServer``. The tenant is fixed by the server's ``--user`` / ``--agent``
options and no tool takes one, so a model cannot reach another tenant's
memories. Errors reach the model as tool errors carrying unrecall's own
messages (ids, counts and positions, never the input text), argument
validation errors are cut down to field names for the same reason, and the
results of forgetting hold ids and counts only.

The SDK and pydantic are imported inside ``build_server`` so that
``unrecall --help`` stays fast.
"""

# No ``from __future__ import annotations``: the tools and models are defined
# inside functions (to import pydantic and the SDK lazily), and the SDK reads
# their annotations through the module's globals, where those locals are not.
import argparse
import inspect
import logging
import sys
from types import SimpleNamespace
from typing import TYPE_CHECKING, Annotated, Any, Literal

from unrecall.async_memory import AsyncMemory
from unrecall.errors import UnrecallError
from unrecall.interfaces import add_erasure_option, add_vector_cache_option
from unrecall.memory import DEFAULT_STORE_HELP, SEARCH_THRESHOLD, Memory
from unrecall.records import ForgetReport, OpReport
from unrecall.validation import check_id

if TYPE_CHECKING:
    from mcp.server.mcpserver import MCPServer

log = logging.getLogger("unrecall.mcp")

INSTRUCTIONS = """\
Long-term memory about the user you are talking to, which forgets on request.
Call `recall` before answering anything about the user (their preferences, facts,
plans, people in their life) and `remember` what they tell you that is worth
keeping. When the user asks you to forget something, pass their request to
`forget` in their own words; use `purge` only when you hold a memory id or the
exact stored phrase. Use `supersede` when a stored fact changed. Results of
forgetting hold ids and counts only, never the forgotten text."""


# -- tool inputs and outputs ----------------------------------------------------
def _schemas() -> SimpleNamespace:
    """The tools' input and output models; pydantic is imported here, not at
    module top, so that ``unrecall --help`` does not pay for it."""
    from pydantic import BaseModel, Field

    class ChatMessage(BaseModel):
        """One chat message given to `remember`."""

        role: Literal["user", "assistant"] = Field(description="who said it")
        content: str = Field(description="what was said, verbatim")

    class Hit(BaseModel):
        """One recalled statement."""

        id: str = Field(description="id of the best-matching memory (m_...)")
        text: str = Field(description="what was remembered")
        score: float = Field(description="rank score; only orders the hits of one query")
        similarity: float | None = Field(
            None, description="cosine of the query with the statement (None in lexical mode)"
        )
        ids: list[str] = Field(default_factory=list, description="every memory id the text joins")

    class RecallResult(BaseModel):
        """The hits of `recall`, best first."""

        hits: list[Hit]

    class RequestResult(BaseModel):
        """What one forget request said in the messages removed: ids and counts only."""

        kind: str
        match: str = Field(description="how its targets were found")
        removed: list[str] = Field(description="ids of memories deleted whole")
        rewritten: list[str] = Field(description="ids of memories a value was cut out of")
        created: list[str] = Field(description="ids of successor memories")
        count: int
        receipt: dict[str, Any] | None = None

    class RememberResult(BaseModel):
        """What `remember` stored and which forget requests it executed."""

        created: list[str] = Field(description="ids of the new memories")
        count: int
        forget_requests: list[RequestResult] = Field(
            description="forget requests found in the messages and executed instead of stored"
        )
        erased: bool | None = Field(None, description="true once forgotten bytes left the disk")
        receipt: dict[str, Any] | None = None

    class ForgetResult(BaseModel):
        """What `forget` removed: ids and counts, never content."""

        count: int = Field(description="memories taken out (deleted or cut)")
        removed: list[str]
        rewritten: list[str]
        created: list[str]
        turns_removed: int
        residual: list[str] = Field(
            description="ids of surviving memories that still connect the request's entities"
        )
        collateral: int = Field(
            description="removed memories that were neither the fact nor evidence"
        )
        match: str
        receipt: dict[str, Any] | None = None

    class OpResult(BaseModel):
        """What `purge` or `supersede` did: ids and counts, never content."""

        op: str
        count: int = Field(description="memories affected")
        ids: list[str] = Field(description="ids of the memories affected")
        match: str = Field(description="how the target was resolved: id, phrase, semantic or none")
        created: list[str] = Field(description="ids of new memories (supersede)")
        turns_removed: int
        erased: bool | None = Field(None, description="true once the bytes left every store file")
        receipt: dict[str, Any] | None = None

    class ErasureResult(BaseModel):
        """Whether the probe strings are gone from every file of the store."""

        clean: bool = Field(description="true when no probe was found anywhere")
        probes: int = Field(description="number of strings checked")
        found: list[int] = Field(description="0-based positions of the strings still found")
        via: dict[str, list[str]] = Field(
            description="per found position: how it was found (plaintext, digest)"
        )
        files: int = Field(description="number of store files scanned")

    return SimpleNamespace(
        ChatMessage=ChatMessage,
        Hit=Hit,
        RecallResult=RecallResult,
        RequestResult=RequestResult,
        RememberResult=RememberResult,
        ForgetResult=ForgetResult,
        OpResult=OpResult,
        ErasureResult=ErasureResult,
    )


def _requests(s: SimpleNamespace, report: OpReport) -> list[Any]:
    return [s.RequestResult.model_validate(r.to_dict()) for r in report.requests]


def _forget_result(s: SimpleNamespace, r: ForgetReport) -> Any:
    return s.ForgetResult.model_validate(r.to_dict())


def _op_result(s: SimpleNamespace, r: OpReport) -> Any:
    # the models name the fields of the contract; the rest (``detail``) is dropped
    return s.OpResult.model_validate(r.to_dict())


# -- the server -------------------------------------------------------------------
def build_server(memory: Memory, *, user_id: str | None, agent_id: str | None) -> "MCPServer":
    """An ``MCPServer`` whose seven tools act on ``memory`` for one tenant.

    ``user_id`` (or ``agent_id`` for agent-level memory; both: the user's
    memories narrowed to that agent) is bound here and never taken from a
    tool call. ``memory`` stays open for the server's life; the caller closes it.
    """
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError
    from mcp_types import ToolAnnotations
    from pydantic import Field, ValidationError

    if user_id is None and agent_id is None:
        raise UnrecallError("give --user (or --agent)")
    for value, field in ((user_id, "user_id"), (agent_id, "agent_id")):
        if value is not None:
            check_id(value, field)  # refused at start, not on every call
    scope: dict[str, Any] = {"user_id": user_id, "agent_id": agent_id}
    own = f"user:{user_id}" if user_id is not None else f"agent:{agent_id}"
    mem = AsyncMemory.wrap(memory)
    S = _schemas()

    class Server(MCPServer):  # type: ignore[type-arg]
        """``MCPServer`` whose argument errors name fields, never values."""

        async def call_tool(self, name: str, arguments: dict[str, Any], context: Any = None) -> Any:
            try:
                return await super().call_tool(name, arguments, context)
            except ToolError as exc:
                cause = exc.__cause__
                if not isinstance(cause, ValidationError):
                    raise
                # pydantic's message quotes the rejected value, which may be
                # exactly what the user wanted forgotten.
                fields = sorted(
                    {
                        f"{'.'.join(str(p) for p in e['loc']) or 'arguments'} ({e['type']})"
                        for e in cause.errors()
                    }
                )
                raise ToolError(
                    f"Error executing tool {name}: invalid arguments: {', '.join(fields)}"
                ) from None

    server = Server("unrecall", instructions=INSTRUCTIONS, log_level="WARNING")

    def tool(**hints: bool) -> Any:
        """Register a tool; its description is the function's docstring,
        dedented, and ``hints`` are its MCP annotations."""

        def register(fn: Any) -> Any:
            server.add_tool(
                fn, description=inspect.getdoc(fn), annotations=ToolAnnotations(**hints)
            )
            return fn

        return register

    async def call(op: str, *args: Any, **kwargs: Any) -> Any:
        """Run one ``AsyncMemory`` method; unrecall errors become tool errors."""
        try:
            return await getattr(mem, op)(*args, **kwargs)
        except UnrecallError as exc:
            raise ToolError(str(exc)) from None
        except Exception as exc:
            # Only the type: another library's message might quote stored text.
            log.error("%s failed with %s", op, type(exc).__name__)
            raise ToolError(f"internal error ({type(exc).__name__})") from None

    @tool(read_only_hint=False, destructive_hint=False)
    async def remember(
        text: Annotated[str | None, Field(description="a note to remember, in plain words")] = None,
        messages: Annotated[
            list[S.ChatMessage] | None,
            Field(
                description="chat messages, oldest first, instead of text",
                min_length=1,
                max_length=200,
            ),
        ] = None,
        session_id: Annotated[
            str | None, Field(description="conversation id; groups turns of one chat")
        ] = None,
    ) -> S.RememberResult:
        """Store what the user said that is worth keeping for later conversations.

        Give either `text` (a note, stored as given) or `messages` (the recent
        chat turns, user and assistant). With `messages`, a user message asking
        to forget or replace something ("forget my old address") is carried out
        rather than stored, exactly as if the user had said it to the memory.
        Do not store greetings, small talk or things you only inferred.
        """
        if (text is None) == (messages is None):
            raise ToolError("give either text or messages, not both or neither")
        given: Any = text if text is not None else [m.model_dump() for m in messages or []]
        report = await call("add", given, session_id=session_id, **scope)
        return S.RememberResult(
            created=report.created,
            count=len(report.created),
            forget_requests=_requests(S, report),
            erased=report.erased,
            receipt=getattr(report, "receipt", None),
        )

    @tool(read_only_hint=True)
    async def recall(
        query: Annotated[str, Field(description="what you want to know, in plain words")],
        k: Annotated[int, Field(description="most hits to return", ge=1, le=100)] = 5,
        threshold: Annotated[
            float | None,
            Field(
                description="drop hits less similar than this (-1..1); null keeps the k best",
                ge=-1,
                le=1,
            ),
        ] = SEARCH_THRESHOLD,
    ) -> S.RecallResult:
        """Look up what you know about the user before answering a question about
        them, their preferences, plans, history or the people in their life.

        Returns up to `k` remembered statements, best first, each with the memory
        ids you can pass to `purge` or `supersede`. An empty list means nothing
        relevant is stored: say you do not know rather than guessing. Forgotten
        memories are never returned.
        """
        hits = await call("search", query, k=k, threshold=threshold, **scope)
        return S.RecallResult(
            hits=[
                S.Hit(
                    id=h.id,
                    text=h.text,
                    score=h.score,
                    similarity=getattr(h, "similarity", None),
                    ids=h.ids,
                )
                for h in hits
            ]
        )

    @tool(destructive_hint=True, idempotent_hint=True)
    async def forget(
        request: Annotated[
            str,
            Field(
                description="the user's request in their words, e.g. 'forget that my "
                "sister is pregnant'"
            ),
        ],
    ) -> S.ForgetResult:
        """Forget a fact the user asked you to forget, and the trail it could be
        pieced together from, permanently.

        Use this whenever the user asks you to forget, delete or stop remembering
        something and you do not hold the exact memory id: pass their request as
        they said it. The fact and the evidence linking its people and things are
        erased from disk. The result holds ids and counts only; `residual` lists
        surviving memories that still connect the same entities. Use `purge`
        instead when you hold a memory id or the exact stored phrase.
        """
        return _forget_result(S, await call("forget", request, **scope))

    @tool(destructive_hint=True, idempotent_hint=True)
    async def purge(
        target: Annotated[
            str,
            Field(description="a memory id (m_...) from recall, or the exact stored phrase"),
        ],
    ) -> S.OpResult:
        """Hard-delete one memory by id, or every memory containing an exact phrase,
        with its source turns, in every copy on disk.

        Use it when you hold the id (from `recall`) or know the literal words
        stored. It does not interpret requests: for "forget that I ..." in the
        user's words use `forget`. To correct a fact that changed, use
        `supersede`. The result holds ids and counts only.
        """
        return _op_result(S, await call("purge", target, **scope))

    @tool(destructive_hint=False)
    async def supersede(
        target: Annotated[
            str, Field(description="memory id (m_...) or a query naming the outdated fact")
        ],
        new_text: Annotated[str, Field(description="the current value, as a full statement")],
    ) -> S.OpResult:
        """Replace an outdated fact with its new value ("I moved to Lyon").

        What `target` names leaves recall (it stays in history, not erased); the
        new statement is stored. Use it for changes, not for forgetting: if the
        user wants the old value gone, use `forget` or `purge`.
        """
        return _op_result(S, await call("supersede", target, new_text, **scope))

    @tool(read_only_hint=True)
    async def export() -> dict[str, Any]:
        """Everything stored about this user: source turns, memories in every state
        and audit events.

        Use it only when the user asks what you hold about them (a data access
        request); to answer a question, use `recall` instead.
        """
        return dict(await call("export", **scope))

    @tool(read_only_hint=True)
    async def verify_erased(
        strings: Annotated[
            list[str],
            Field(description="texts that should be gone, e.g. a forgotten value", min_length=1),
        ],
    ) -> S.ErasureResult:
        """Check that forgotten text is physically gone: scan the raw bytes of every
        file of the store for each string.

        Use it after `forget` or `purge` when the user wants proof. The result
        says `clean` or gives the positions (0-based) of the strings still found,
        never the strings themselves, so checking does not repeat them. It is
        refused when the store file also holds other users' memories.
        """
        # The scan reads the whole file: on a shared store it would tell the
        # model whether a guessed string is among another tenant's memories.
        if set(memory.storage.tenant_keys().values()) - {own}:
            raise ToolError(
                "this store holds other tenants' memories too, so a scan of its bytes is "
                "refused here; the store's owner can run `unrecall verify`"
            )
        report = await call("verify_erased", strings)
        return S.ErasureResult(
            clean=report.clean,
            probes=report.probes,
            found=sorted(report.found),
            via={str(k): v for k, v in report.via.items()},
            files=len(report.files),
        )

    return server


# -- the command --------------------------------------------------------------------
def add_arguments(parser: argparse.ArgumentParser) -> None:
    """Options of ``unrecall mcp``: the store, the tenant and the transport."""
    parser.add_argument(
        "--db",
        default=None,
        help=f"store file or postgresql:// URL (default: {DEFAULT_STORE_HELP})",
    )
    parser.add_argument("--user", default=None, help="user id: the tenant every tool acts on")
    parser.add_argument("--agent", default=None, help="agent id (tenant when no --user)")
    parser.add_argument(
        "--embedder",
        default="minilm",
        choices=["minilm", "hashing"],
        help="embedder the store was built with",
    )
    add_erasure_option(parser)
    add_vector_cache_option(parser)
    parser.add_argument(
        "--transport",
        default="stdio",
        choices=["stdio", "streamable-http"],
        help="stdio (default) or streamable HTTP on 127.0.0.1",
    )
    parser.add_argument("--port", type=int, default=8765, help="port for streamable-http")


def run_cli(args: argparse.Namespace) -> int:
    """Serve the store until the client disconnects; 2 on a bad store or tenant."""
    if args.user is None and args.agent is None:
        print("error: give --user (or --agent)", file=sys.stderr)
        return 2
    if args.transport == "streamable-http" and not 0 < args.port < 65536:
        print("error: --port must be between 1 and 65535", file=sys.stderr)
        return 2
    try:
        memory = Memory(
            args.db,
            embedder=args.embedder,
            erasure=args.erasure,
            vector_cache_mb=args.vector_cache_mb,
        )
    except UnrecallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    try:
        server = build_server(memory, user_id=args.user, agent_id=args.agent)
        if args.transport == "stdio":
            server.run("stdio")
        else:
            # Loopback only: the server has no authentication of its own.
            server.run("streamable-http", host="127.0.0.1", port=args.port)
    except UnrecallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        pass
    finally:
        memory.close()
    return 0
