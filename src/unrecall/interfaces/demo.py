"""``unrecall demo``: a short scripted tour on a temporary store.

Remember, recall, supersede, release/restore, purge with a look-alike
neighbour, a forensic scan of the raw files that proves the erasure, and a
trail-aware forget of a secret that other memories could piece together.
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from unrecall.memory import Memory

USER = "maya"
FACTS = [
    "My work email is maya@acme.io",
    "My colleague Lopez uses maya.lopez@acme.io for invoices",
    "I use Chrome as my browser",
    "I live at 14 Harbour Street, Leith",
    "I'm allergic to peanuts",
    "My bank PIN is 4471",
]
# A secret told once, and the trail it could be rebuilt from without it.
TRAIL = [
    "Ravi Shah, our CFO, signed off on hiring Arden Advisory himself.",
    "Arden Advisory's filing lists Nina Shah as sole owner.",
    "Ravi and his wife Nina are hosting the offsite dinner.",
    "Booked a room at the Arden Hotel for the Leeds trip.",
    "Nina Patel from HR sent the holiday rota.",
    "Turns out Arden Advisory is owned by Nina Shah, Ravi's wife!",
]
SECRET = "Forget that the firm we hired belongs to our CFO's wife"


def _say(text: str) -> None:
    print(f"\n== {text}")


def _recall(mem: Memory, query: str, k: int = 3) -> None:
    print(f"   recall({query!r}):")
    for hit in mem.search(query, user_id=USER, k=k):
        print(f"     - {hit.text}")


def run_demo() -> int:
    """Run the tour and print what happens; returns 0 when every check held."""
    folder = Path(tempfile.mkdtemp(prefix="unrecall-demo-"))
    ok = True
    try:
        with Memory(folder / "demo.db") as mem:
            print(f"unrecall demo: a fresh store at {folder / 'demo.db'}")
            _say("1. Remember what Maya tells her agent")
            for fact in FACTS:
                print(f"   + {fact}")
                mem.add(fact, user_id=USER)
            otp = mem.add("My one-time login code is 829301", user_id=USER, ttl=300).ids[0]
            print("   + My one-time login code is 829301   (expires in 5 minutes)")

            _say("2. Recall: BM25 over the full-text index + local MiniLM vectors, fused")
            _recall(mem, "what is my email address?")

            _say("3. Supersede: Maya switches browsers; the new value wins")
            r = mem.supersede("Chrome", "I use Brave as my browser", user_id=USER)
            print(f"   supersede('Chrome', ...) -> {r.count} old memory retired ({r.match} match)")
            _recall(mem, "which browser do I use?", k=2)

            _say("4. Release and restore: soft, reversible forgetting")
            r = mem.release(otp, user_id=USER)
            print(f"   release(code) -> {r.count} memory out of recall")
            _recall(mem, "login code", k=2)
            mem.restore(otp, user_id=USER)
            print("   restore(code) -> back in recall")
            _recall(mem, "login code", k=1)

            _say("5. Purge (GDPR-style): forget maya@acme.io, keep the look-alike")
            r = mem.purge("MAYA@acme.io", user_id=USER)
            print(
                f"   purge('MAYA@acme.io') -> {r.count} memory, {r.turns_removed} source turn,"
                f" erased from disk: {r.erased}"
            )
            survivors = [m.text for m in mem.get_all(user_id=USER)]
            kept = any("maya.lopez@acme.io" in t for t in survivors)
            gone = not any("maya@acme.io" in t for t in survivors)
            print(f"   maya.lopez@acme.io still remembered: {kept}; maya@acme.io gone: {gone}")
            ok &= kept and gone

            _say("6. Forensic check: scan the raw bytes of the .db, -wal and -shm files")
            report = mem.verify_erased(["maya@acme.io", "maya.lopez@acme.io"])
            purged_absent = 0 not in report.found
            lookalike_present = 1 in report.found
            print(f"   files scanned: {', '.join(Path(f).name for f in report.files)}")
            print(f"   'maya@acme.io' bytes found: {not purged_absent}   (must be False)")
            print(f"   'maya.lopez@acme.io' bytes found: {lookalike_present}   (kept, so True)")
            ok &= purged_absent and lookalike_present

            _say("7. The trail keeps ids, counts and hashes - never the forgotten text")
            for event in mem.history(r.ids[0], user_id=USER):
                print(f"   #{event.seq} {event.op:<8} {event.detail}")
            check = mem.verify_audit()
            print(f"   audit hash chain intact: {check.ok} ({check.events} events)")
            ok &= check.ok

            _say("8. A secret told once, and the trail that could rebuild it")
            for text in TRAIL:
                print(f"   + {text}")
                mem.add(text, user_id=USER)
            before = len(mem.residual(SECRET, user_id=USER))
            r = mem.forget(SECRET, user_id=USER)
            print(f"   forget({SECRET!r})")
            print(
                f"   -> {r.turns_removed} source turns and {r.count} memories gone"
                f" ({r.collateral} collateral); memories still linking its people: {before}"
                f" before, {len(r.residual)} after"
            )
            left = {m.text for m in mem.get_all(user_id=USER)}
            look_alikes = {TRAIL[3], TRAIL[4]} <= left  # another Arden, another Nina
            print(f"   the Arden Hotel and Nina Patel still remembered: {look_alikes}")
            erased = mem.verify_erased(["Nina Shah", "wife"]).clean
            print(f"   'Nina Shah' and 'wife' bytes found on disk: {not erased}   (must be False)")
            ok &= look_alikes and erased and not r.residual
        print("\n" + ("Every check held." if ok else "A CHECK FAILED."))
        return 0 if ok else 1
    finally:
        shutil.rmtree(folder, ignore_errors=True)
