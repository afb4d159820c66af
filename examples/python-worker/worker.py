"""A worker that completes runs against `leasehold serve`, standard library only.

    python3 worker.py --url http://127.0.0.1:7460 --queue squares --max-runs 20

Each run's payload is {"n": N}. The worker claims a batch, and for each run
emits an event, performs a side effect through the effect ledger (here a
pretend downstream call, made at most once per run), checks its deadline, and
completes the batch in one complete-many call with {"square": N*N}.
"""

import argparse
import os
import sys
import time

from leasehold_client import Client, Problem


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", default="http://127.0.0.1:7460")
    ap.add_argument("--queue", default="squares")
    ap.add_argument("--owner", default=f"python-{os.getpid()}")
    ap.add_argument("--batch", type=int, default=10)
    ap.add_argument("--max-runs", type=int, default=0, help="stop after this many runs (0: never)")
    ap.add_argument("--idle-exit", type=float, default=0, help="stop after this many idle seconds (0: never)")
    ap.add_argument("--token", default=os.environ.get("LEASEHOLD_TOKEN"))
    args = ap.parse_args()

    c = Client(args.url, token=args.token)
    done = 0
    idle_since = time.monotonic()
    while args.max_runs == 0 or done < args.max_runs:
        leases = c.claim(args.queue, args.owner, limit=args.batch, wait_ms=1000)
        if not leases:
            if args.idle_exit and time.monotonic() - idle_since > args.idle_exit:
                break
            continue
        idle_since = time.monotonic()
        finished = []
        for lease in leases:
            try:
                finished.append((lease, work(c, args.owner, lease)))
            except Problem as p:
                if p.kind in ("fenced", "lease-lost"):
                    print(f"run {lease.id}: lease lost ({p}); leaving it", file=sys.stderr)
                    continue
                c.fail(lease, f"{p.kind}: {p}")
        fenced = c.complete_many(finished) if finished else []
        for i in fenced:
            print(f"run {finished[i][0].id}: completion refused for its fence", file=sys.stderr)
        done += len(finished) - len(fenced)
        print(f"completed {len(finished) - len(fenced)} (total {done})", flush=True)
    print(f"done: {done} runs completed by {args.owner}", flush=True)


def work(c, owner, lease):
    n = lease.payload["n"]
    c.emit(lease, "started", {"by": owner})

    def downstream(idempotency_key, fence, deadline):
        # A real call passes idempotency_key and fence downstream, which
        # refuses a lower fence for the key than one it accepted.
        if time.monotonic() >= deadline:
            raise TimeoutError("no runway left for the call")
        return {"receipt": f"{idempotency_key}@{fence}"}

    receipt = c.effect(lease, owner, "notify", 5.0, downstream)
    if lease.remaining() <= 0:  # past the deadline the server vouched for: stop acting
        raise Problem({"type": "https://leasehold.dev/problems/lease-lost", "detail": "deadline passed"}, 0)
    return {"square": n * n, "receipt": receipt["receipt"]}


if __name__ == "__main__":
    main()
