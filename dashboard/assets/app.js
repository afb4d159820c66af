// Leasehold dashboard: one small script, no framework, no build step.
// Every page is an HTML shell rendered by the server; this fills it from
// the JSON API with the bearer token kept in sessionStorage, so it shows
// exactly what the token may read. Actions are offered only when
// GET /v1/whoami says the API would accept them — and the API checks again.
"use strict";

const TOKEN_KEY = "leasehold.token";
const POLL_MS = 1000;

const $ = (sel, root) => (root || document).querySelector(sel);
const token = () => sessionStorage.getItem(TOKEN_KEY);

// el builds an element: el("td", {class: "num"}, "text", child…).
function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === false || v === null || v === undefined) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (k === "style") Object.assign(e.style, v); // CSSOM: allowed by the CSP, unlike a style attribute
    else e.setAttribute(k, v === true ? "" : String(v));
  }
  for (const k of kids) e.append(k instanceof Node ? k : String(k ?? ""));
  return e;
}

function say(msg) { $("#status").textContent = msg || ""; }
function when(t) { return t ? t.replace(/\.\d+Z$/, "Z").replace("T", " ") : ""; }
function secs(ms) { return (ms / 1000).toFixed(1) + " s"; }
function short(v) { const s = v === undefined || v === null ? "" : JSON.stringify(v); return s.length > 200 ? s.slice(0, 200) + "…" : s; }

// api calls the API with the token. A 401 (no token, unknown or revoked)
// goes to the login page; every other answer is returned as
// {ok, status, body} with the problem document's detail in body on error.
async function api(path, opts) {
  const o = Object.assign({ headers: {} }, opts || {});
  o.headers = Object.assign({ Authorization: "Bearer " + token() }, o.headers);
  if (o.json !== undefined) {
    o.method = o.method || "POST";
    o.headers["Content-Type"] = "application/json";
    o.body = JSON.stringify(o.json);
  }
  const r = await fetch(path, o);
  let body = null;
  try { body = await r.json(); } catch (e) { body = null; }
  if (r.status === 401) {
    sessionStorage.removeItem(TOKEN_KEY);
    location.assign("/ui/login?next=" + encodeURIComponent(location.pathname + location.search));
    throw new Error("unauthorized");
  }
  return { ok: r.ok, status: r.status, body };
}

function refused(r, what) {
  if (r.status === 403) return "This token may not read " + what + ".";
  return (r.body && (r.body.detail || r.body.title)) || ("The server answered " + r.status + ".");
}

// confirmAction asks in the page's dialog; resolves true only on "Yes".
function confirmAction(text) {
  const d = $("#confirm");
  $("#confirm-text").textContent = text;
  return new Promise((resolve) => {
    d.addEventListener("close", () => resolve(d.returnValue === "ok"), { once: true });
    d.returnValue = "";
    d.showModal();
  });
}

// poll runs fn now and every ms after it settles (never two at once).
function poll(fn, ms) {
  const tick = async () => {
    try { await fn(); } catch (e) { if (e.message !== "unauthorized") say("Lost touch with the server: " + e.message); }
    setTimeout(tick, ms);
  };
  tick();
}

function ready(name) { document.body.dataset.ready = name; performance.mark("leasehold:" + name); }

// ---- login ----------------------------------------------------------------

function loginPage() {
  $("#login").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const t = $("#token").value.trim();
    const r = await fetch("/v1/whoami", { headers: { Authorization: "Bearer " + t } });
    if (!r.ok) {
      $("#login-error").textContent = r.status === 401 ? "The server does not know that token (or it was revoked)." : "The server answered " + r.status + ".";
      $("#token").focus();
      return;
    }
    sessionStorage.setItem(TOKEN_KEY, t);
    const next = new URLSearchParams(location.search).get("next");
    // Only a path of this site: "//host" and "/\host" would leave it.
    location.assign(next && /^\/(?![\/\\])/.test(next) ? next : "/");
  });
}

// whoami fills the header and answers what the token may do on the queue
// or world named.
async function whoami(q) {
  const r = await api("/v1/whoami" + (q ? "?" + new URLSearchParams(q) : ""));
  if (r.ok) $("#who").textContent = "Token " + r.body.token_id + " · " + r.body.scopes.join(", ");
  return r.ok ? r.body.may : { read: false, work: false, admin: false };
}

// ---- queues and runs ------------------------------------------------------

const STATES = ["available", "running", "blocked", "completed", "failed", "cancelled"];

async function runsPage() {
  whoami();
  const params = new URLSearchParams(location.search);
  // The list and the counts load side by side and each is drawn when it
  // arrives. The page is ready — first render — with the list: one page
  // by the primary key, flat however many runs there are. The counts are
  // a grouped scan of the whole table (cached by the server for a moment,
  // as_of says when it was read); they never hold the list up.
  const list = (async () => {
    const r = await api("/v1/runs?" + new URLSearchParams({ queue: params.get("queue") || "", state: params.get("state") || "",
      owner: params.get("owner") || "", unique_key: params.get("unique_key") || "", after: params.get("after") || "", limit: "50" }));
    const tbody = $("#runs tbody");
    if (!r.ok) { say(refused(r, "these runs")); return; }
    for (const run of r.body.runs) {
      tbody.append(el("tr", { "data-run": run.id },
        el("td", { class: "num" }, el("a", { href: "/ui/runs/" + run.id }, run.id)), el("td", {}, run.queue),
        el("td", { class: "state state-" + run.state }, run.state), el("td", { class: "num" }, run.attempt + "/" + run.max_attempts),
        el("td", { class: "num" }, run.fence), el("td", {}, run.owner || ""), el("td", {}, when(run.created_at))));
    }
    if (r.body.runs.length === 0) tbody.append(el("tr", {}, el("td", { colspan: 7 }, "No runs here.")));
    if (r.body.next) {
      const next = new URLSearchParams(params);
      next.set("after", r.body.next);
      $("#next").href = "/?" + next;
      $("#next").hidden = false;
    }
  })();
  const counts = (async () => {
    const r = await api("/v1/stats/runs");
    const table = $("#counts");
    if (!r.ok) { $("#counts-note").textContent = refused(r, "the run counts"); table.dataset.loaded = "refused"; return; }
    const byQueue = new Map();
    for (const c of r.body.counts) {
      if (!byQueue.has(c.queue)) byQueue.set(c.queue, {});
      byQueue.get(c.queue)[c.state] = c.n;
    }
    const tbody = $("#counts tbody");
    for (const [q, m] of byQueue) {
      const total = Object.values(m).reduce((a, b) => a + b, 0);
      tbody.append(el("tr", {}, el("th", { scope: "row" }, el("a", { href: "/?queue=" + encodeURIComponent(q) }, q)),
        ...STATES.map((s) => el("td", { class: "num", "data-queue": q, "data-state": s },
          m[s] ? el("a", { href: "/?" + new URLSearchParams({ queue: q, state: s }), "aria-label": m[s] + " " + s + " in " + q }, m[s]) : "0")),
        el("td", { class: "num", "data-queue": q, "data-state": "total" }, total)));
    }
    $("#counts-note").textContent = byQueue.size === 0 ? "No runs this token may read." : "Counted at " + when(r.body.as_of) + ".";
    table.dataset.loaded = "yes";
    performance.mark("leasehold:counts");
  })();
  await list;
  performance.mark("leasehold:rows");
  ready("runs");
  await counts;
}

// ---- one run --------------------------------------------------------------

// followSSE reads a server-sent event stream of the API — path, resumed
// after the id `after` — with fetch() and a stream reader, since
// EventSource cannot send the Authorization header, and calls onEvent
// with each event's parsed data in order. When the stream ends (server
// restart, network) it reconnects after the last id seen, so no event is
// missed or shown twice (every stream is read from its table).
// body[data-<flag>] says where it stands: "live" while the stream is
// open, "reconnecting" between attempts.
function followSSE(path, flag, after, onEvent) {
  let last = after || "";
  const connect = async () => {
    const r = await fetch(path + "?" + new URLSearchParams({ after: last }),
      { headers: { Authorization: "Bearer " + token(), Accept: "text/event-stream" } });
    if (r.status === 401) { await api("/v1/whoami"); return; } // api() goes to the login page
    if (!r.ok || !r.body) throw new Error("the stream answered " + r.status);
    document.body.dataset[flag] = "live";
    const reader = r.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buf += value.replace(/\r\n?/g, "\n");
      let cut;
      while ((cut = buf.indexOf("\n\n")) >= 0) {
        const block = buf.slice(0, cut);
        buf = buf.slice(cut + 2);
        let evId = "", data = "";
        for (const line of block.split("\n")) {
          if (line.startsWith("id:")) evId = line.slice(3).trim();
          else if (line.startsWith("data:")) data += line.slice(5).trimStart();
        }
        if (!data) continue; // a keep-alive comment
        last = evId || last;
        onEvent(JSON.parse(data));
      }
    }
  };
  const loop = async () => {
    try { await connect(); } catch (e) { if (e.message === "unauthorized") return; say("Lost the " + flag + " stream: " + e.message + "; reconnecting."); }
    document.body.dataset[flag] = "reconnecting";
    setTimeout(loop, POLL_MS);
  };
  loop();
}

// followEvents follows a run's events (GET /v1/runs/{id}/events/stream,
// ids "<fence>:<seq>") from the start; body[data-events] is its state.
function followEvents(id, onEvents) {
  followSSE(`/v1/runs/${id}/events/stream`, "events", "", (ev) => onEvents([ev]));
}

async function runPage() {
  const id = document.body.dataset.run;
  whoami(); // the header, whether or not the token may read the run
  let may = null, run = null, lastRun = "", lastEffects = "";
  const act = async (what, path, body) => {
    if (!(await confirmAction(what))) return;
    const r = await api(path, { json: body });
    say(r.ok ? "Done: " + what : "Refused: " + refused(r, "this run"));
    await refresh();
  };
  const refresh = async () => {
    const r = await api(`/v1/runs/${id}`);
    if (!r.ok) { say(r.status === 404 ? "There is no run " + id + "." : refused(r, "this run")); return false; }
    run = r.body.run;
    if (may === null) may = await whoami({ queue: run.queue });
    const key = JSON.stringify(run);
    if (key !== lastRun) {
      lastRun = key;
      const facts = [["Id", run.id], ["Queue", run.queue], ["State", run.state], ["Attempt", run.attempt + " of " + run.max_attempts],
        ["Fence", run.fence], ["Owner", run.owner || "—"], ["Expires", when(run.expires_at) || "—"], ["Unique key", run.unique_key || "—"],
        ["Reason", run.reason || "—"], ["Payload", short(run.payload)], ["Result", short(run.result) || "—"],
        ["Created", when(run.created_at)], ["Finished", when(run.finished_at) || "—"]];
      $("#run").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase().replace(" ", "-") }, v)]));
      const actions = $("#actions");
      actions.replaceChildren();
      // Retry is the queue's work scope (or admin): whoever may run the
      // queue's runs may send one round again. The fence sent is the one
      // shown, so a run that moved on since is refused, not retried twice.
      if (may.work && ["failed", "cancelled"].includes(run.state))
        actions.append(el("button", { type: "button", id: "act-retry", onclick: () => act("Retry run " + id + "? It becomes available to claim at once" +
          (run.attempt >= run.max_attempts ? ", with one attempt more." : "."), `/v1/runs/${id}/retry`, { fence: run.fence }) }, "Retry run"));
      if (may.admin) {
        if (["available", "running", "blocked"].includes(run.state))
          actions.append(el("button", { type: "button", class: "danger", id: "act-cancel", onclick: () => act("Cancel run " + id + "? A running holder is fenced out.", `/v1/runs/${id}/cancel`, { reason: "cancelled from the dashboard" }) }, "Cancel run"));
        if (run.state === "blocked")
          actions.append(el("button", { type: "button", id: "act-unblock", onclick: () => act("Unblock run " + id + "? It becomes available to claim.", `/v1/runs/${id}/unblock`, {}) }, "Unblock run"));
      }
    }
    const e = await api(`/v1/runs/${id}/effects`);
    if (e.ok) {
      const ekey = JSON.stringify([e.body.effects, run.fence, run.state, may]);
      if (ekey !== lastEffects) {
        lastEffects = ekey;
        const rows = e.body.effects.map((f) => {
          // An intent without a commit from an earlier fence (or on a run
          // no longer running) may or may not have happened: uncertain.
          const uncertain = !f.committed && (f.fence !== run.fence || run.state !== "running");
          const status = f.committed ? "committed" : uncertain ? "uncertain" : "in progress";
          const cell = el("td", {});
          // A resolve is applied under the fence in force, so only while the
          // run is held; otherwise its next holder meets it and resolves it.
          if (uncertain && may.admin && run.state === "running") {
            const resolve = (happened) => act(`Resolve effect “${f.key}” as ${happened ? "having happened" : "not having happened"}?`,
              `/v1/runs/${id}/effects/resolve`, { key: f.key, fence: run.fence, happened });
            cell.append(el("div", { class: "buttons" },
              el("button", { type: "button", class: "act-resolve", onclick: () => resolve(true) }, "Resolve: it happened"),
              el("button", { type: "button", class: "act-resolve", onclick: () => resolve(false) }, "Resolve: it did not")));
          }
          return el("tr", { "data-key": f.key }, el("td", {}, f.key), el("td", { class: "num" }, f.fence),
            el("td", { class: uncertain ? "uncertain" : "" }, status), el("td", { class: "payload" }, short(f.result)), cell);
        });
        if (rows.length === 0) rows.push(el("tr", {}, el("td", { colspan: 5 }, "No effects.")));
        $("#effects tbody").replaceChildren(...rows);
      }
    }
    return true;
  };
  if (!(await refresh())) return;
  ready("run");
  followEvents(id, (evs) => {
    const tbody = $("#events tbody");
    for (const ev of evs) {
      tbody.append(el("tr", { "data-fence": ev.fence, "data-seq": ev.seq }, el("td", { class: "num" }, ev.fence),
        el("td", { class: "num" }, ev.seq), el("td", {}, ev.kind), el("td", { class: "payload" }, short(ev.payload)), el("td", {}, when(ev.created_at))));
    }
  });
  setTimeout(() => poll(refresh, POLL_MS), POLL_MS);
}

// ---- live leases ------------------------------------------------------------

// HISTORY is how many refreshes of a lease's runway the chart keeps (two
// minutes at one a second); the page keeps them, the server keeps none.
const HISTORY = 120;

async function leasesPage() {
  whoami();
  let first = true;
  const history = new Map(); // "run/fence" → [[ms, runway_ms], …]
  $("#runway-lease").addEventListener("change", () => { const t = lastTiming; if (t) runwayChart(history.get($("#runway-lease").value) || [], t); });
  poll(async () => {
    const r = await api("/v1/leases");
    if (!r.ok) { say(refused(r, "the leases (it needs read on every queue)")); return; }
    const t = r.body.timing;
    lastTiming = t;
    $("#timing").textContent = `T_lease ${secs(t.lease_ms)}, S ${secs(t.skew_ms)}, D_stop ${secs(t.stop_ms)}, T_drain ${secs(t.drain_ms)}; a full bar is ${secs(t.max_runway_ms)}.` +
      (r.body.total > r.body.leases.length ? ` Showing ${r.body.leases.length} of ${r.body.total}.` : "");
    const tbody = $("#leases tbody");
    const seen = new Set();
    for (const l of r.body.leases) {
      const key = l.run_id + "/" + l.fence;
      seen.add(key);
      let row = tbody.querySelector(`tr[data-lease="${key}"]`);
      if (!row) {
        row = el("tr", { "data-lease": key, "data-run": l.run_id },
          el("td", { class: "num" }, el("a", { href: "/ui/runs/" + l.run_id }, l.run_id)), el("td", { class: "num" }, l.fence), el("td", {}, l.owner),
          el("td", {}, el("div", { class: "bar", role: "meter", "aria-valuemin": 0, "aria-valuemax": t.max_runway_ms, "aria-label": "Durable runway of run " + l.run_id }, el("span", {})),
            el("span", { class: "bar-text" })),
          el("td", { class: "num gate" }), el("td", { class: "num lag" }));
        tbody.append(row);
      }
      const bar = row.querySelector(".bar");
      const pct = Math.max(0, Math.min(100, 100 * l.runway_ms / Math.max(1, t.max_runway_ms)));
      bar.setAttribute("aria-valuenow", l.runway_ms);
      bar.setAttribute("aria-valuetext", secs(l.runway_ms) + " of " + secs(t.max_runway_ms));
      bar.classList.toggle("low", l.available_ms < t.drain_ms * 2);
      bar.firstChild.style.width = pct.toFixed(1) + "%";
      row.querySelector(".bar-text").textContent = secs(l.runway_ms);
      row.querySelector(".gate").textContent = secs(l.available_ms);
      row.querySelector(".lag").textContent = secs(l.lag_ms);
    }
    for (const row of [...tbody.querySelectorAll("tr[data-lease]")]) if (!seen.has(row.dataset.lease)) row.remove();
    const now = Date.now();
    for (const l of r.body.leases) {
      const key = l.run_id + "/" + l.fence;
      if (!history.has(key)) history.set(key, []);
      const h = history.get(key);
      h.push([now, l.runway_ms]);
      if (h.length > HISTORY) h.shift();
    }
    for (const k of [...history.keys()]) if (!seen.has(k)) history.delete(k);
    const pick = $("#runway-lease");
    const keys = [...history.keys()];
    // Rebuilt only when the leases change: a person choosing with the
    // keyboard keeps their place between refreshes.
    if (keys.join() !== [...pick.options].map((o) => o.value).join()) {
      const chosen = pick.value;
      pick.replaceChildren(...keys.map((k) => el("option", { value: k, selected: k === chosen }, "run " + k.replace("/", ", fence "))));
    }
    lagHistogram(r.body.leases.map((l) => l.lag_ms), t.stop_ms);
    runwayChart(history.get(pick.value) || [], t);
    say(r.body.leases.length === 0 ? "No leases held through this server." : "");
    if (first) { first = false; ready("leases"); }
  }, POLL_MS);
}

let lastTiming = null;

// LAG_BINS are the lag histogram's bins, as shares of D_stop: the last is
// D_stop or more, where the gate refuses.
const LAG_BINS = [0, 0.1, 0.25, 0.5, 0.75, 1];

// lagHistogram draws how many leases have each durable lag, binned by
// share of D_stop, as an inline SVG bar chart (#lag-svg). Each bar has
// data-bin (its lower edge, a share of D_stop) and data-n.
function lagHistogram(lags, stopMs) {
  const W = 600, H = 160, L = 40, B = 30, T = 8, R = 8;
  const counts = LAG_BINS.map(() => 0);
  for (const v of lags) {
    const share = v / Math.max(1, stopMs);
    let i = LAG_BINS.length - 1;
    while (i > 0 && share < LAG_BINS[i]) i--;
    counts[i]++;
  }
  const top = Math.max(1, ...counts);
  const bw = (W - L - R) / counts.length;
  const label = (i) => i === LAG_BINS.length - 1 ? "≥ D_stop" : `${LAG_BINS[i] * 100}–${LAG_BINS[i + 1] * 100}%`;
  const g = $("#lag-svg");
  g.setAttribute("aria-label", "Durable lag of " + lags.length + " leases by share of D_stop: " + counts.map((n, i) => `${label(i)} ${n}`).join(", "));
  g.replaceChildren(svg("line", { class: "grid", x1: L, x2: W - R, y1: H - B, y2: H - B }),
    svg("text", { class: "axis", x: L - 4, y: T + 10, "text-anchor": "end" }, top), svg("text", { class: "axis", x: L - 4, y: H - B, "text-anchor": "end" }, 0),
    ...counts.flatMap((n, i) => {
      const h = (H - T - B) * n / top, x = L + i * bw + 4;
      return [svg("rect", { class: "hist" + (i === LAG_BINS.length - 1 ? " over" : ""), "data-bin": LAG_BINS[i], "data-n": n, x, y: H - B - h, width: bw - 8, height: h }),
        svg("text", { class: "axis", x: x + (bw - 8) / 2, y: H - B + 14, "text-anchor": "middle" }, label(i))];
    }));
}

// runwayChart draws one lease's runway at each refresh as an inline SVG
// line (#runway-svg), against the full runway and 2 × T_drain.
function runwayChart(points, t) {
  const W = 600, H = 160, L = 48, B = 20, T = 8, R = 8;
  const g = $("#runway-svg");
  const top = Math.max(1, t.max_runway_ms);
  const t0 = points.length ? points[0][0] : 0, span = Math.max(1, points.length ? points[points.length - 1][0] - t0 : 1);
  const x = (ms) => L + (W - L - R) * (points.length < 2 ? 1 : (ms - t0) / span);
  const y = (v) => T + (H - T - B) * (1 - Math.max(0, Math.min(v, top)) / top);
  const last = points.length ? points[points.length - 1][1] : 0;
  g.setAttribute("aria-label", points.length ? `Runway of the chosen lease over the last ${Math.round(span / 1000)} s: now ${secs(last)} of ${secs(top)}` : "No lease to chart");
  g.replaceChildren(
    svg("line", { class: "grid", x1: L, x2: W - R, y1: y(top), y2: y(top) }), svg("line", { class: "grid", x1: L, x2: W - R, y1: y(0), y2: y(0) }),
    svg("line", { class: "limit", x1: L, x2: W - R, y1: y(2 * t.drain_ms), y2: y(2 * t.drain_ms) }),
    svg("text", { class: "axis", x: L - 4, y: y(top) + 4, "text-anchor": "end" }, secs(top)), svg("text", { class: "axis", x: L - 4, y: y(0) + 4, "text-anchor": "end" }, "0 s"),
    svg("polyline", { class: "runway", "data-points": points.length, "data-last": last, "data-values": points.map((p) => p[1]).join(" "),
      points: points.map((p) => `${x(p[0]).toFixed(1)},${y(p[1]).toFixed(1)}`).join(" ") }));
}

// ---- health and throughput ------------------------------------------------------

// svg builds an SVG element. The namespace is taken from the page's own
// <svg> (the HTML parser puts it in the SVG namespace), so the script
// names no URL at all.
function svg(tag, attrs, ...kids) {
  const e = document.createElementNS($("svg").namespaceURI, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, String(v));
  for (const k of kids) e.append(k instanceof Node ? k : String(k));
  return e;
}

// rateChart draws the throughput ring as an inline SVG line chart, one
// line per series, in runs per second (a bucket's count / its seconds).
// No chart library: a few polylines and a grid. The chart is an image to
// assistive technology, labelled with the latest figures.
function rateChart(samples, bucketMs) {
  const W = 600, H = 180, L = 40, B = 20, T = 8, R = 8;
  const secs = bucketMs / 1000;
  const series = ["enqueued", "claimed", "completed", "failed"];
  const peak = Math.max(1, ...samples.flatMap((s) => series.map((k) => s[k] / secs)));
  const mag = Math.pow(10, Math.floor(Math.log10(peak)));
  const top = [1, 2, 5, 10].map((m) => m * mag).find((v) => v >= peak); // a round top: 1, 2 or 5 × 10^k
  const x = (i) => L + (W - L - R) * (samples.length === 1 ? 1 : i / (samples.length - 1));
  const y = (v) => T + (H - T - B) * (1 - v / top);
  const last = samples[samples.length - 1] || {};
  const label = "Runs per second over the last ten minutes; latest bucket: " + series.map((k) => `${k} ${((last[k] || 0) / secs).toFixed(1)}/s`).join(", ");
  const g = $("#rate-svg");
  g.setAttribute("aria-label", label);
  g.replaceChildren();
  for (const f of [0, 0.5, 1]) {
    g.append(svg("line", { class: "grid", x1: L, x2: W - R, y1: y(top * f), y2: y(top * f) }),
      svg("text", { class: "axis", x: L - 4, y: y(top * f) + 4, "text-anchor": "end" }, (top * f).toFixed(top < 2 ? 1 : 0)));
  }
  g.append(svg("text", { class: "axis", x: L, y: H - 4 }, "−10 min"), svg("text", { class: "axis", x: W - R, y: H - 4, "text-anchor": "end" }, "now"));
  for (const k of series) {
    g.append(svg("polyline", { class: "s-" + k, "data-series": k, "data-total": samples.reduce((a, s) => a + s[k], 0),
      points: samples.map((s, i) => `${x(i).toFixed(1)},${y(s[k] / secs).toFixed(1)}`).join(" ") }));
  }
}

async function healthPage() {
  whoami();
  let first = true;
  poll(async () => {
    const r = await api("/v1/stats/health");
    if (!r.ok) { say(refused(r, "the server's health (it needs read on every queue)")); if (first) { first = false; ready("health"); } return; }
    const h = r.body;
    rateChart(h.throughput, h.bucket_ms);
    const c = h.clock;
    $("#clock").replaceChildren(...[
      ["State", c.alarm ? el("span", { class: "alarm" }, "ALARM: runway cut by " + secs(c.runway_cut_ms)) : el("span", { class: "quiet" }, "within bounds")],
      ["Step alarms", c.steps], ["Drift alarms", c.drifts], ["Cleared", c.clears], ["S (allowed skew)", secs(c.skew_ms)],
    ].flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase().split(" ")[0] }, v)]));
    const rows = h.workers.map((w) => el("tr", { "data-worker": w.worker }, el("th", { scope: "row" }, w.worker),
      el("td", { class: "mode" }, w.mode), el("td", { class: "num" }, w.dark_gate_diffs), el("td", { class: "num" }, w.dark_stop_diffs),
      el("td", { class: "num" }, w.dark_lost_diffs), el("td", { class: "num" }, w.gate_refusals), el("td", { class: "num" }, w.lost),
      el("td", { class: "num" }, secs(w.max_lag_ms)), el("td", { class: "num" + (w.clock_cut_ms > 0 ? " alarm" : "") }, secs(w.clock_cut_ms))));
    if (rows.length === 0) rows.push(el("tr", {}, el("td", { colspan: 9 }, "No workers are attached to this server.")));
    $("#modes tbody").replaceChildren(...rows);
    $("#host-none").hidden = !!h.host;
    $("#loads").hidden = !h.host;
    if (h.host) {
      const st = h.host.stats;
      $("#host").replaceChildren(...[["Node", h.host.node], ["Held now", h.host.worlds.length], ["Spills", st.spills], ["Handbacks", st.handbacks],
        ["Self-stops", st.self_stops], ["Gate refusals", st.gate_refusals]].flatMap(([k, v]) => [el("dt", {}, k), el("dd", {}, v)]));
      $("#loads tbody").replaceChildren(...h.host.worlds.map((w) => el("tr", { "data-world": w.world },
        el("td", {}, el("a", { href: "/ui/worlds/" + encodeURIComponent(w.world) }, w.world)), el("td", { class: "num" }, w.turns_per_second.toFixed(1)),
        el("td", { class: "num" }, w.inbox_depth), el("td", { class: "num" }, w.turn_latency_ms.toFixed(1) + " ms"))));
    }
    poolsTable(h.pools);
    const alerts = h.alerts.map((a) => el("li", { class: "level-" + a.level, "data-level": a.level, "data-what": a.what },
      el("strong", {}, (a.level === "alarm" ? "Alarm: " : "Warning: ") + a.what), " — " + a.detail));
    if (alerts.length === 0) alerts.push(el("li", { class: "level-none", "data-level": "none" }, "No alerts: the store clock is within bounds and no pool is saturated."));
    $("#alerts").replaceChildren(...alerts);
    say("");
    if (first) { first = false; ready("health"); }
  }, 2 * POLL_MS);
  $("#doctor-run").addEventListener("click", doctor);
  doctor();
}

// poolsTable draws the store's pools, each with its saturation (in use of
// max) as a meter.
function poolsTable(pools) {
  $("#pools-none").hidden = pools.length > 0;
  $("#pools").hidden = pools.length === 0;
  $("#pools tbody").replaceChildren(...pools.map((p) => el("tr", { "data-pool": p.name }, el("th", { scope: "row" }, p.name),
    el("td", {}, el("div", { class: "bar" + (p.saturation >= 1 ? " low" : ""), role: "meter", "aria-valuemin": 0, "aria-valuemax": p.max, "aria-valuenow": p.in_use,
      "aria-valuetext": p.in_use + " of " + p.max + " in use", "aria-label": "Saturation of pool " + p.name }, el("span", { style: { width: (100 * p.saturation).toFixed(1) + "%" } })),
      el("span", { class: "bar-text" }, Math.round(100 * p.saturation) + "%")),
    el("td", { class: "num" }, p.in_use), el("td", { class: "num" }, p.open), el("td", { class: "num" }, p.max), el("td", { class: "num" }, p.acquires),
    el("td", { class: "num" }, p.waited), el("td", { class: "num" }, p.cancelled), el("td", { class: "num" }, p.mean_acquire_ms.toFixed(2) + " ms"))));
}

// doctor runs GET /v1/stats/clock (the store clock sampled now) and shows
// its figures. body[data-doctor] is "done" once they are drawn.
async function doctor() {
  const b = $("#doctor-run");
  b.disabled = true;
  $("#doctor").replaceChildren(el("dt", {}, "Sampling"), el("dd", {}, "…"));
  try {
    const r = await api("/v1/stats/clock?samples=10&every_ms=50");
    if (!r.ok) { $("#doctor").replaceChildren(el("dt", {}, "Refused"), el("dd", {}, refused(r, "the store clock"))); return; }
    const d = r.body, f = (v) => v.toFixed(3) + " ms";
    const facts = [["Store", d.store], ["Probes", d.samples + " over " + f(d.span_ms)], ["Offset", f(d.offset_ms) + " ± " + f(d.offset_bound_ms)],
      ["Rate", d.rate_known ? d.rate_ppm.toFixed(1) + " ± " + d.rate_bound_ppm.toFixed(1) + " ppm (" + f(d.drift_ms) + " over T_lease)" : "not known from this sample"],
      ["Steps", d.steps.length === 0 ? "none" : d.steps.map((s) => `${f(s.size_ms)} ± ${f(s.bound_ms)} at probe ${s.probe}`).join("; ")],
      ["RTT", `min ${f(d.rtt_min_ms)}, median ${f(d.rtt_median_ms)}, max ${f(d.rtt_max_ms)}`],
      ["Write-behind", d.write_behind === "ok" ? el("span", { class: "quiet" }, "OK") : el("span", { class: "alarm" }, "REFUSED: " + d.refusal)]];
    $("#doctor").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase() }, v)]));
    document.body.dataset.doctor = "done";
  } finally { b.disabled = false; }
}

// band says where a world stands against the hot-world band: held on its
// home node, or away from it (spilled to another node).
function band(w) {
  if (!w.holder) return el("span", {}, "—");
  return w.holder === w.home ? el("span", {}, "home") : el("span", { class: "band-away" }, "away: on " + w.holder);
}

// ---- worlds -------------------------------------------------------------------

async function worldsPage() {
  whoami();
  const params = new URLSearchParams(location.search);
  const r = await api("/v1/worlds?" + new URLSearchParams({ after: params.get("after") || "", limit: "50" }));
  if (!r.ok) { say(refused(r, "worlds")); ready("worlds"); return; }
  const tbody = $("#worlds tbody");
  for (const w of r.body.worlds) {
    tbody.append(el("tr", { "data-world": w.world }, el("td", {}, el("a", { href: "/ui/worlds/" + encodeURIComponent(w.world) }, w.world)),
      el("td", {}, w.holder || "— (revoked)"), el("td", { class: "num" }, w.epoch), el("td", {}, when(w.expires_at) || "—"),
      el("td", {}, w.home), el("td", { class: "band" }, band(w)), el("td", { class: "num" }, w.position)));
  }
  if (r.body.worlds.length === 0) say("No worlds this token may read on this page.");
  if (r.body.next) { params.set("after", r.body.next); $("#next").href = "/ui/worlds?" + params; $("#next").hidden = false; }
  ready("worlds");
}

// epochColour gives each epoch its own hue, dark enough for white text.
// (26% lightness keeps white text at 4.5:1 or better on every hue, yellow included).
function epochColour(epoch) { return `hsl(${Math.round((epoch * 137.508) % 360)}, 70%, 26%)`; }

async function worldPage() {
  const world = document.body.dataset.world;
  const path = "/v1/worlds/" + encodeURIComponent(world);
  whoami({ world });
  const TAIL = 20;
  let streaming = false, first = true;
  poll(async () => {
    const r = await api(path);
    if (!r.ok) { say(r.status === 404 ? "There is no world " + world + "." : refused(r, "this world")); return; }
    const w = r.body.world;
    const facts = [["Holder", w.holder || "— (revoked)"], ["Epoch", w.epoch], ["Expires", when(w.expires_at) || "—"], ["Home", w.home],
      ["Position", w.position], ["Granted at position", w.granted_position], ["Term", secs(w.term_ms)]];
    facts.push(["Band", band(w)]);
    // The load is the host's (GET /v1/stats/health): shown when this
    // server's host holds the world and the token may read it.
    const hh = await api("/v1/stats/health");
    const ld = hh.ok && hh.body.host ? hh.body.host.worlds.find((x) => x.world === world) : null;
    if (ld) facts.push(["Load", `${ld.turns_per_second.toFixed(1)} turns/s, inbox ${ld.inbox_depth}, turn ${ld.turn_latency_ms.toFixed(1)} ms`]);
    $("#head").replaceChildren(...facts.flatMap(([k, v]) => [el("dt", {}, k), el("dd", { "data-field": k.toLowerCase().replaceAll(" ", "-") }, v)]));
    // The tail streams (GET /v1/worlds/{id}/journal/stream, the API's SSE
    // journal stream) from TAIL entries before the head seen first: each
    // entry is drawn as it commits — at once on Postgres (the journal
    // trigger's NOTIFY), at the server's stream poll on SQLite — and the
    // page never polls the journal.
    if (!streaming) {
      streaming = true;
      followSSE(`${path}/journal/stream`, "journal", String(Math.max(0, w.position - TAIL)), (e) => {
        const tbody = $("#journal tbody");
        tbody.prepend(el("tr", { "data-position": e.position },
          el("td", { class: "num" }, e.position), el("td", { class: "num" }, e.epoch), el("td", {}, e.kind), el("td", {}, e.holder || ""),
          el("td", {}, e.key || ""), el("td", { class: "payload" }, short(e.payload))));
        while (tbody.rows.length > TAIL) tbody.rows[tbody.rows.length - 1].remove();
      });
    }
    if (first) { first = false; ready("world"); }
  }, 2 * POLL_MS);
  $("#audit-run").addEventListener("click", async () => {
    const out = $("#audit");
    out.replaceChildren(el("p", {}, "Auditing…"));
    const r = await api(path + "/audit");
    if (!r.ok) { out.replaceChildren(el("p", { class: "error" }, refused(r, "this world"))); return; }
    const a = r.body;
    const last = a.spans.length ? a.spans[a.spans.length - 1].to : 0;
    const strip = el("div", { class: "strip", role: "img", "aria-label": `Who held each of positions 1 to ${last}: ${a.spans.map((s) => `epoch ${s.epoch} ${s.holder || "nobody"} ${s.from}–${s.to}`).join("; ")}` },
      ...a.spans.map((s) => el("div", { class: "seg", "data-epoch": s.epoch, "data-from": s.from, "data-to": s.to,
        style: { flex: `${s.to - s.from + 1} 1 0`, background: epochColour(s.epoch) }, title: `epoch ${s.epoch}, ${s.holder || "nobody"}: positions ${s.from}–${s.to}` },
        `e${s.epoch} ${s.holder || "—"}`)));
    const table = el("table", { id: "spans" }, el("caption", { class: "sr-only" }, "Spans of one epoch and holder"),
      el("thead", {}, el("tr", {}, el("th", { scope: "col", class: "num" }, "Epoch"), el("th", { scope: "col" }, "Holder"),
        el("th", { scope: "col", class: "num" }, "From"), el("th", { scope: "col", class: "num" }, "To"))),
      el("tbody", {}, ...a.spans.map((s) => el("tr", {}, el("td", { class: "num" }, s.epoch), el("td", {}, s.holder || "—"),
        el("td", { class: "num" }, s.from), el("td", { class: "num" }, s.to)))));
    const verdict = a.ok ? el("p", { id: "audit-verdict" }, `Verified: ${a.entries} entries, ${a.spans.length} spans, ${a.signatures} batch signatures.`)
      : el("p", { id: "audit-verdict", class: "violation" }, `Violation at position ${a.violation.position} (${a.violation.rule}): ${a.violation.detail}. Nothing after it is trusted.`);
    out.replaceChildren(verdict, strip, el("div", { class: "scroll" }, table));
  });
}

// ---- start ------------------------------------------------------------------

document.addEventListener("DOMContentLoaded", () => {
  const page = document.body.dataset.page;
  if (page === "login") { loginPage(); return; }
  if (page === "notfound") return;
  if (!token()) {
    location.assign("/ui/login?next=" + encodeURIComponent(location.pathname + location.search));
    return;
  }
  const out = $("#signout");
  out.hidden = false;
  out.addEventListener("click", () => { sessionStorage.removeItem(TOKEN_KEY); location.assign("/ui/login"); });
  ({ runs: runsPage, run: runPage, leases: leasesPage, worlds: worldsPage, world: worldPage, health: healthPage })[page]();
});
