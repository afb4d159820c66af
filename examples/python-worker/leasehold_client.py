"""A small client of `leasehold serve` (the HTTP/JSON API), standard library only.

Every call on a held run carries the run's fence; the server applies it only
while that fence is current, so a runner paused past its lease is refused
(Problem.kind == "fenced") and changes nothing. Answers that touch a lease
carry runway_ms: this client's deadline for the run is *its own* send time of
the request plus runway_ms, measured on time.monotonic() — never the server's
clock, so the offset between the two machines plays no part.
"""

import json
import time
import urllib.error
import urllib.request

PROBLEM_BASE = "https://leasehold.dev/problems/"


class Problem(Exception):
    """An RFC 9457 problem document the server answered with."""

    def __init__(self, doc, status):
        self.doc = doc
        self.status = status
        self.kind = doc.get("type", "").removeprefix(PROBLEM_BASE)
        super().__init__(f"{self.kind} ({status}): {doc.get('detail', '')}")


class Lease:
    """A claimed run: its row, and the deadline this process may count on."""

    def __init__(self, run, sent):
        self.run = run
        self.id = run["id"]
        self.fence = run["fence"]
        self.payload = run.get("payload")
        self.deadline = sent + run["runway_ms"] / 1000.0
        self.seq = 0  # events emitted under this fence

    def remaining(self):
        """Seconds left before this process must stop acting for the run."""
        return self.deadline - time.monotonic()


class Client:
    def __init__(self, base_url, token=None, timeout=60.0):
        self.base = base_url.rstrip("/")
        self.token = token
        self.timeout = timeout

    def call(self, method, path, body=None):
        """Sends body as JSON; returns (answer, send time on time.monotonic())."""
        data = None if body is None else json.dumps(body).encode()
        req = urllib.request.Request(self.base + path, data=data, method=method)
        if data is not None:
            req.add_header("Content-Type", "application/json")
        if self.token:
            req.add_header("Authorization", "Bearer " + self.token)
        sent = time.monotonic()  # before the request leaves: the runway's origin
        try:
            with urllib.request.urlopen(req, timeout=self.timeout) as resp:
                return json.loads(resp.read() or b"null"), sent
        except urllib.error.HTTPError as e:
            raw = e.read()
            try:
                doc = json.loads(raw)
            except ValueError:
                doc = {"type": "", "detail": raw[:200].decode(errors="replace")}
            raise Problem(doc, e.code) from None

    def enqueue(self, *runs):
        out, _ = self.call("POST", "/v1/runs", {"runs": list(runs)})
        return [r["run"] for r in out["runs"]]

    def claim(self, queue, owner, limit=1, wait_ms=0):
        out, sent = self.call("POST", "/v1/runs/claim",
                              {"queue": queue, "owner": owner, "limit": limit, "wait_ms": wait_ms})
        return [Lease(r, sent) for r in out["runs"]]

    def renew(self, lease, owner):
        out, sent = self.call("POST", f"/v1/runs/{lease.id}/renew", {"fence": lease.fence, "owner": owner})
        lease.deadline = max(lease.deadline, sent + out["runway_ms"] / 1000.0)
        return out

    def effect(self, lease, owner, key, max_duration_s, fn):
        """Runs fn(idempotency_key, fence) at most once per (run, key): the
        server's gate and the intent first, then fn, then the commit. A
        committed effect's stored result is returned without calling fn."""
        begun, sent = self.call("POST", f"/v1/runs/{lease.id}/effects/begin",
                                {"key": key, "fence": lease.fence, "owner": owner,
                                 "max_duration_ms": int(max_duration_s * 1000)})
        if begun["outcome"] == "committed":
            return begun["effect"].get("result")
        deadline = min(sent + begun["runway_ms"] / 1000.0, time.monotonic() + max_duration_s)
        result = fn(begun["idempotency_key"], lease.fence, deadline)
        self.call("POST", f"/v1/runs/{lease.id}/effects/commit", {"key": key, "fence": lease.fence, "result": result})
        return result

    def emit(self, lease, kind, payload=None):
        lease.seq += 1
        self.call("POST", f"/v1/runs/{lease.id}/events",
                  {"fence": lease.fence, "events": [{"seq": lease.seq, "kind": kind, "payload": payload}]})

    def complete(self, lease, result=None):
        out, _ = self.call("POST", f"/v1/runs/{lease.id}/complete", {"fence": lease.fence, "result": result})
        return out["run"]

    def complete_many(self, items):
        """items: [(lease, result)]; one call, one store commit. Returns the
        indexes refused for their fence."""
        out, _ = self.call("POST", "/v1/runs/complete",
                           {"runs": [{"id": l.id, "fence": l.fence, "result": r} for l, r in items]})
        return out["fenced"]

    def fail(self, lease, reason, retry_after_ms=None):
        body = {"fence": lease.fence, "reason": reason}
        if retry_after_ms is not None:
            body["retry_after_ms"] = retry_after_ms
        self.call("POST", f"/v1/runs/{lease.id}/fail", body)

    def get(self, run_id):
        out, _ = self.call("GET", f"/v1/runs/{run_id}")
        return out["run"]
