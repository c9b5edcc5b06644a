"""The ``unrecall`` command: one subcommand per operation, plus ``demo``.

Every subcommand takes ``--db PATH``, ``--user`` / ``--agent`` and
``--json``. Errors go to stderr with exit status 2 and never echo the text
the command was given. ``add -`` and ``chat`` read their text from stdin, so
a secret stays out of the shell history; ``chat`` is how forget requests
said in a conversation are tried from a terminal.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

import apsw

from unrecall import __version__
from unrecall.control.trails import BUDGET
from unrecall.errors import UnrecallError
from unrecall.interfaces import add_erasure_option
from unrecall.memory import DEFAULT_STORE_HELP, Memory, default_path
from unrecall.progress import Progress
from unrecall.records import STATES
from unrecall.storage.sqlite import NotAStore

# A chat line starting with this is an assistant turn; any other is the user's.
ASSISTANT_PREFIX = "assistant: "


def _common() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(add_help=False)
    p.add_argument(
        "--db",
        default=None,
        help=f"store file or postgresql:// URL (default: {DEFAULT_STORE_HELP})",
    )
    p.add_argument("--user", default=None, help="user id (the tenant)")
    p.add_argument("--agent", default=None, help="agent id (tenant when no --user)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.add_argument(
        "--quiet", action="store_true", help="no progress bars on stderr (upgrades, compaction)"
    )
    p.add_argument(
        "--embedder",
        default="minilm",
        choices=["minilm", "hashing"],
        help="embedder the store was built with",
    )
    add_erasure_option(p)
    return p


# Benchmark harnesses: subcommand -> (module with add_arguments / run_cli, help).
BENCHES = {
    "forgeteval": (
        "unrecall.bench.forgeteval_harness",
        "ForgetEval control-plane cases on unrecall and its peers",
    ),
    "memora": (
        "unrecall.bench.memora",
        "Memora personas replayed turn by turn: recall-level MPA, FAA and FAMA",
    ),
    "unlearning": (
        "unrecall.bench.unlearning",
        "BEMULA-style paired suite: forget requests said in dialogues, with controls",
    ),
    "trails": (
        "unrecall.bench.trails",
        "MemCut-style evidence trails: disclosure, evidence, sufficient sets; S0/S1/S2 vs forget",
    ),
    "locomo": (
        "unrecall.bench.locomo",
        "LoCoMo retrieval, no LLM: recall@5/10 and hit@10 of evidence turns per category",
    ),
}


# Services and tools with their own options: subcommand -> (module with
# add_arguments / run_cli, help). Each module imports its heavy dependencies
# (FastAPI, the MCP SDK) inside run_cli, so the CLI starts fast without them.
SERVICES: dict[str, tuple[str, str]] = {
    "mcp": ("unrecall.interfaces.mcp_server", "serve the store to an MCP client (stdio)"),
    "serve": ("unrecall.interfaces.http", "serve the REST API over a store"),
    "receipt": ("unrecall.interfaces.receipt_cli", "verify a forget receipt offline"),
    "migrate": (
        "unrecall.interfaces.migrate_cli",
        "copy a whole store to a new or empty one (SQLite file or PostgreSQL URL)",
    ),
}


def build_parser() -> argparse.ArgumentParser:
    """The argument parser with every subcommand."""
    common = _common()
    parser = argparse.ArgumentParser(
        prog="unrecall", description="Long-term memory for agents that forgets on request."
    )
    parser.add_argument("--version", action="version", version=f"unrecall {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)

    def cmd(name: str, help_: str) -> argparse.ArgumentParser:
        return sub.add_parser(name, parents=[common], help=help_, description=help_)

    p = cmd("add", "remember a text")
    p.add_argument("text", help="the text; '-' reads it from stdin (keeps it out of history)")
    p.add_argument("--ttl", type=float, default=None, help="expire after this many seconds")
    p.add_argument("--session", default=None)
    p = cmd(
        "chat",
        "read chat turns from stdin, one a line ('assistant: ' starts an assistant turn);"
        " forget requests among them are carried out",
    )
    p.add_argument("--session", default=None)
    p = cmd("search", "recall memories for a query")
    p.add_argument("query")
    p.add_argument("-k", type=int, default=5)
    p.add_argument("--lexical", action="store_true", help="BM25 only, no vectors")
    p = cmd("get", "show one memory with its provenance")
    p.add_argument("id")
    p = cmd("get-all", "list memories")
    p.add_argument("--state", action="append", choices=STATES, help="repeatable; default active")
    p = cmd("update", "correct a memory's text in place")
    p.add_argument("id")
    p.add_argument("text")
    p = cmd("delete", "hard-delete a memory (m_…) or a source turn (t_…) with closure")
    p.add_argument("id")
    cmd("delete-all", "erase everything of the tenant")
    p = cmd("supersede", "store a new value; what TARGET names leaves recall")
    p.add_argument("target", help="memory id or query")
    p.add_argument("new_text")
    p = cmd("edit", "partial supersede of one memory, keeping its provenance")
    p.add_argument("id")
    p.add_argument("new_text")
    p = cmd("release", "take what TARGET names out of recall (reversible)")
    p.add_argument("target")
    p = cmd("restore", "bring a released memory back")
    p.add_argument("id")
    p = cmd("purge", "hard-delete what TARGET names (id or exact phrase)")
    p.add_argument("target")
    p = cmd("forget", "forget a fact and the trail it could be pieced together from")
    p.add_argument("request", help="e.g. \"forget that the firm we hired is our CFO's wife's\"")
    p.add_argument("--budget", type=int, default=BUDGET, help="evidence turns at most")
    p = cmd("residual", "surviving memories that still connect a request's entities")
    p.add_argument("request")
    cmd("entities", "the entity graph: names, aliases, memories, related names")
    p = cmd("expire", "release (or --purge) memories past their expiry")
    p.add_argument("--purge", action="store_true")
    p = cmd("history", "audit events of a memory (never its text)")
    p.add_argument("id")
    cmd("export", "everything held about the tenant, as JSON")
    p = cmd("verify", "scan the raw bytes of every store file for strings")
    p.add_argument("strings", nargs="*", help="strings to look for; '-' reads lines from stdin")
    cmd("audit", "verify the audit log's hash chain")
    cmd("compact", "rewrite the store file to give deleted rows' space back to the disk")
    cmd("erase", "push every committed forget out of the store's files now (exit 1 if not done)")
    for name, (module, about) in SERVICES.items():
        importlib.import_module(module).add_arguments(
            sub.add_parser(name, help=about, description=about)
        )
    sub.add_parser("demo", help="a scripted tour on a temporary store")
    bench = sub.add_parser("bench", help="run a benchmark harness")
    bench_sub = bench.add_subparsers(dest="bench_command", required=True)
    for name, (module, about) in BENCHES.items():
        importlib.import_module(module).add_arguments(
            bench_sub.add_parser(name, help=about, description=about)
        )
    return parser


def _scope(args: argparse.Namespace) -> dict[str, Any]:
    if args.user is None and args.agent is None:
        raise UnrecallError("give --user (or --agent)")
    return {"user_id": args.user, "agent_id": args.agent}


def _report(obj: Any) -> dict[str, Any]:
    return obj.to_dict() if hasattr(obj, "to_dict") else obj


def _stdin_text() -> str:
    """All of stdin as one text, less the newline ``echo`` or a heredoc ends it with."""
    text = sys.stdin.read()
    return text[:-1] if text.endswith("\n") else text


def _chat_turns(lines: Iterable[str]) -> Iterator[dict[str, str]]:
    """One message per non-blank line, as it is read (typed at a terminal, each
    turn is handled at once): ``assistant: ...`` lines are the assistant's,
    every other line is the user's."""
    for line in lines:
        line = line.rstrip("\r\n")
        if not line.strip():
            continue
        if line.startswith(ASSISTANT_PREFIX):
            yield {"role": "assistant", "content": line[len(ASSISTANT_PREFIX) :]}
        else:
            yield {"role": "user", "content": line}


def _chat(mem: Memory, args: argparse.Namespace) -> int:
    """Feed stdin to ``Memory.add`` turn by turn (a request may refer back to
    the turn before it, as in a real chat) and say after each what happened,
    in ids and counts only. Stops at the first refused turn (exit 2); the
    turns before it stay stored."""
    scope = _scope(args)
    for n, turn in enumerate(_chat_turns(sys.stdin), 1):
        try:
            report = mem.add([turn], session_id=args.session, **scope).to_dict()
        except UnrecallError as exc:
            print(f"error: turn {n}: {exc}", file=sys.stderr)
            return 2
        if args.json:
            print(json.dumps(report, ensure_ascii=False), flush=True)
        else:
            print(f"{n}. {_chat_line(turn['role'], report)}", flush=True)
    return 0


def _chat_line(role: str, report: dict[str, Any]) -> str:
    """What one chat turn did: ``stored`` or the forget requests' kind,
    strategy and counts (a request's text is never shown)."""
    if not report["requests"]:
        if role == "assistant" and not report["created"]:
            return "stored (assistant turn, nothing new to remember)"
        return f"stored: {len(report['created'])} memories"
    lines = []
    hit = False
    for r in report["requests"]:
        head = f"forget request: kind {r['kind']}, strategy {r['strategy'] or '-'}"
        if not (r["removed"] or r["rewritten"] or r["turns_removed"]):
            lines.append(f"{head}; nothing matched")
            continue
        hit = True
        lines.append(
            f"{head}; {len(r['removed'])} memories removed, {len(r['rewritten'])} rewritten,"
            f" {r['turns_removed']} turns removed"
        )
    if hit and report.get("erased") is not None:
        lines[-1] += f"; erased from disk: {'yes' if report['erased'] else 'PENDING'}"
    return "\n   ".join(lines)


def _run(mem: Memory, args: argparse.Namespace) -> tuple[Any, int]:
    """Execute one subcommand; returns (result, exit status)."""
    c = args.command
    if c == "add" and args.text == "-":
        args.text = _stdin_text()
    table: dict[str, Callable[[], Any]] = {
        "add": lambda: mem.add(args.text, ttl=args.ttl, session_id=args.session, **_scope(args)),
        "search": lambda: [
            h.to_dict()
            for h in mem.search(
                args.query, k=args.k, mode="lexical" if args.lexical else "hybrid", **_scope(args)
            )
        ],
        "get": lambda: mem.get(args.id, **_scope(args)),
        "get-all": lambda: [
            m.to_dict() for m in mem.get_all(states=tuple(args.state or ["active"]), **_scope(args))
        ],
        "update": lambda: mem.update(args.id, args.text, **_scope(args)),
        "delete": lambda: mem.delete(args.id, **_scope(args)),
        "delete-all": lambda: mem.delete_all(**_scope(args)),
        "supersede": lambda: mem.supersede(args.target, args.new_text, **_scope(args)),
        "edit": lambda: mem.edit(args.id, args.new_text, **_scope(args)),
        "release": lambda: mem.release(args.target, **_scope(args)),
        "restore": lambda: mem.restore(args.id, **_scope(args)),
        "purge": lambda: mem.purge(args.target, **_scope(args)),
        "forget": lambda: mem.forget(args.request, budget=args.budget, **_scope(args)),
        "residual": lambda: [m.to_dict() for m in mem.residual(args.request, **_scope(args))],
        "entities": lambda: [e.to_dict() for e in mem.entities(**_scope(args))],
        "expire": lambda: mem.expire(purge=args.purge),
        "history": lambda: [e.to_dict() for e in mem.history(args.id, **_scope(args))],
        "export": lambda: mem.export(**_scope(args)),
        "audit": lambda: mem.verify_audit(),
    }
    if c == "verify":
        probes = list(args.strings)
        if probes == ["-"] or not probes:
            probes = [line.rstrip("\n") for line in sys.stdin if line.strip()]
        report = mem.verify_erased(probes)
        return report.to_dict(), 0 if report.clean else 1
    if c == "erase":
        erased = mem.erase()
        return {"erased": erased, "gaps": mem.storage.erasure_gaps()}, 0 if erased else 1
    if c == "compact":
        before = mem.storage.size()
        mem.compact()
        return {"bytes_before": before, "bytes_after": mem.storage.size()}, 0
    result = table[c]()
    if c == "audit":
        return {"ok": result.ok, "events": result.events, "broken_at": result.broken_at}, (
            0 if result.ok else 1
        )
    return _report(result), 0


def _print(command: str, result: Any, as_json: bool) -> None:
    if as_json:
        print(json.dumps(result, indent=2, ensure_ascii=False))
        return
    if command == "search":
        for i, h in enumerate(result, 1):
            print(f"{i}. [{h['score']:.4f}] {h['text']}  ({h['id']})")
        if not result:
            print("(no memories)")
    elif command == "compact":
        print(f"compacted: {result['bytes_before']} -> {result['bytes_after']} bytes")
    elif command == "erase":
        print("erased" if result["erased"] else "NOT erased yet")
        for gap in result["gaps"]:
            print(f"  {gap}")
    elif command == "forget" and not (result["count"] or result["turns_removed"]):
        print("forget: nothing matched")
    elif command == "forget":
        print(
            f"forget: {result['turns_removed']} turns, {result['count']} memories removed"
            f" ({result['collateral']} collateral); {len(result['residual'])} surviving"
            " memories still connect its entities"
        )
    elif command == "entities":
        for e in result:
            aliases = f" ({', '.join(e['aliases'])})" if e["aliases"] else ""
            print(f"{e['name']}{aliases}: {len(e['memories'])} memories")
        if not result:
            print("(no entities)")
    elif command in ("get-all", "residual"):
        for m in result:
            print(f"{m['id']}  {m['state']:<10} {m['text']}")
        if not result:
            print("(no memories)")
    elif command == "verify":
        if result["clean"]:
            print(f"clean: none of {result['probes']} strings in {len(result['files'])} files")
        else:
            for idx, files in result["found"].items():
                where = ", ".join(f"{f} ({n}x)" for f, n in files.items())
                print(f"FOUND string #{int(idx) + 1}: {where}")
    elif isinstance(result, dict) and "op" in result and _matched_nothing(result):
        print(f"{result['op']}: nothing matched")
    elif isinstance(result, dict) and "op" in result:
        line = f"{result['op']}: {result['count']} memories"
        if result.get("match") not in (None, "none", "id"):
            line += f" (matched by {result['match']})"
        if result.get("created"):
            line += f", new {', '.join(result['created'])}"
        if result.get("ids"):
            line += f", affected {', '.join(result['ids'])}"
        if result.get("erased") is not None:
            line += f", erased from disk: {'yes' if result['erased'] else 'PENDING'}"
        print(line)
    else:
        print(json.dumps(result, indent=2, ensure_ascii=False))


def _matched_nothing(report: dict[str, Any]) -> bool:
    """An operation that touched nothing: it must not claim an erasure."""
    return not (report["count"] or report.get("created") or report.get("turns_removed"))


def _not_a_store(args: argparse.Namespace, reason: str) -> int:
    """Say that the store file is unusable, and why; the file was not changed.
    The path is the user's own, named back to them on their terminal (the
    library's errors leave it out: they may end up in someone else's logs)."""
    where = args.db or default_path()
    if isinstance(where, str) and "://" in where:
        where = "the database"  # a URL may hold a password: never printed
    print(f"error: {where} is not an unrecall store ({reason})", file=sys.stderr)
    return 2


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``unrecall`` command."""
    args = build_parser().parse_args(argv)
    if args.command == "demo":
        from unrecall.interfaces.demo import run_demo

        return run_demo()
    if args.command == "bench":
        return int(importlib.import_module(BENCHES[args.bench_command][0]).run_cli(args))
    if args.command in SERVICES:
        return int(importlib.import_module(SERVICES[args.command][0]).run_cli(args))
    try:
        with Memory(
            args.db, embedder=args.embedder, progress=Progress(args.quiet), erasure=args.erasure
        ) as mem:
            if args.command == "chat":
                return _chat(mem, args)
            result, status = _run(mem, args)
    except NotAStore as exc:
        return _not_a_store(args, exc.reason)
    except (apsw.NotADBError, apsw.CorruptError) as exc:  # damage found past the first pages
        return _not_a_store(args, str(exc) or type(exc).__name__)
    except UnrecallError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    _print(args.command, result, args.json)
    return status


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
