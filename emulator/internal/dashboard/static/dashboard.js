import { call, download, el, guard, notify, subscribe, fmtTime, since, namespace } from "/dashboard/assets/api.js";
import { presets } from "/dashboard/assets/presets.js";

const $ = (id) => document.getElementById(id);

// coalesced runs fn once at a time; calls while it runs make it run once more after.
function coalesced(fn) {
  let running = null, again = false;
  return () => {
    if (running) { again = true; return running; }
    running = (async () => {
      try { do { again = false; await fn(); } while (again); } finally { running = null; }
    })();
    return running;
  };
}

// ---- clock ----

function showClock(c) {
  $("clock-mode").textContent = c.mode === "scaled" ? `scaled ×${c.rate}` : c.mode;
  $("clock-now").textContent = fmtTime(c.now);
  $("clock-mode-select").value = c.mode;
  if (c.mode === "scaled") $("clock-rate").value = c.rate;
  const stands = c.mode === "manual" || c.mode === "auto";
  for (const b of document.querySelectorAll("#advance button")) b.disabled = !stands;
}

const loadClock = coalesced(async () => { const c = await guard(() => call("GET", "/_emulator/clock")); if (c) showClock(c); });

$("advance").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const c = await guard(() => call("POST", "/_emulator/clock/advance", { by: $("advance-by").value.trim() }));
  if (c) { showClock(c); notify(`Clock advanced to ${fmtTime(c.now)}.`); }
});
$("clock-next").addEventListener("click", async () => {
  const c = await guard(() => call("POST", "/_emulator/clock/next"));
  if (c) { showClock(c); notify(c.fired ? `Jumped to the next transition: ${fmtTime(c.now)}.` : "No transition is scheduled."); }
});
$("clock-mode-form").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const mode = $("clock-mode-select").value;
  const body = mode === "scaled" ? { mode, rate: Number($("clock-rate").value) } : { mode };
  const c = await guard(() => call("PUT", "/_emulator/clock", body));
  if (c) { showClock(c); notify(c.mode === "scaled" ? `Clock runs ${c.rate} times as fast as the wall.` : `Clock is ${c.mode}.`); }
});

// ---- scenarios ----

const loadScenarios = coalesced(async () => {
  const s = await guard(() => call("GET", "/_emulator/scenarios"));
  if (!s) return;
  $("scenario-active").textContent = s.active;
  $("scenarios").replaceChildren(...s.scenarios.map((x) => el("tr", { "data-scenario": x.name },
    el("th", { scope: "row" }, x.name, x.name === s.active ? el("span", { class: "badge ready" }, " active") : null),
    // a built-in that does not parse (a bug in hostemu) has its problem, not a description
    el("td", {}, x.problem ? [el("span", { class: "badge error" }, "broken"), " ", x.problem] : x.description),
    el("td", { class: "muted" }, x.source),
    el("td", {}, el("button", { type: "button", "data-use": x.name, disabled: x.name === s.active || !!x.problem, "aria-label": `Use scenario ${x.name}`,
      onclick: () => guard(() => call("PUT", "/_emulator/scenarios/active", { name: x.name }), `Scenario ${x.name} is active.`) }, "Use")),
  )));
  $("scenario-errors-box").hidden = s.errors.length === 0;
  $("scenario-errors").replaceChildren(...s.errors.map((e) => el("li", {}, el("code", {}, `${e.file}:${e.line}`), " ", e.error)));
});

// ---- projects, deployments, domains ----

const openLogs = new Set();
const deploymentStatuses = ["queued", "building", "ready", "error"];
const domainStatuses = ["pending", "verifying", "active", "error"];

// edgeURL opens a host at the edge: on this port, over http.
const edgeURL = (host) => `http://${host}${location.port ? ":" + location.port : ""}/`;

// edgeLink opens a deployment at the edge: its URL's host.
function edgeLink(d) {
  try { return edgeURL(new URL(d.url).hostname); } catch { return null; }
}

// errorLink is an error code linked to its docs page.
const errorLink = (code) => el("a", { href: "/docs/errors/" + encodeURIComponent(code), class: "error-code" }, code);

function forceForm(statuses, label, onForce) {
  const sel = el("select", { "aria-label": `Status to force on ${label}` }, ...statuses.map((s) => el("option", {}, s)));
  const code = el("input", { size: 11, placeholder: "error code", "aria-label": `Error code for ${label}` });
  return el("form", { class: "row force", onsubmit: (ev) => {
    ev.preventDefault();
    const body = { status: sel.value };
    if (sel.value === "error" && code.value.trim()) body.error = { code: code.value.trim(), message: "forced from the dashboard" };
    onForce(body);
  } }, sel, code, el("button", { type: "submit" }, "Force"));
}

function timings(d) {
  const t = d.timings || {};
  const parts = [];
  if (t.queued_at) parts.push(`queued ${fmtTime(t.queued_at).slice(11)}`);
  if (t.building_at) parts.push(`build after ${since(t.queued_at, t.building_at)}`);
  if (t.ready_at) parts.push(`ready after ${since(t.building_at || t.queued_at, t.ready_at)}`);
  if (t.error_at) parts.push(`error after ${since(t.building_at || t.queued_at, t.error_at)}`);
  return parts.join(" · ");
}

function deploymentRows(d) {
  const link = edgeLink(d);
  const row = el("tr", { "data-deployment": d.id, class: d.status === "error" ? "err" : null },
    el("td", { class: "mono" }, d.id),
    el("td", {}, d.target),
    el("td", {}, el("span", { class: `badge status ${d.status}` }, d.status), d.production ? el("span", { class: "badge prod" }, "production") : null,
      d.error ? el("div", {}, errorLink(d.error.code)) : null),
    el("td", { class: "muted timings" }, timings(d)),
    el("td", { class: "actions" },
      el("div", { class: "row" },
        link && d.status === "ready" ? el("a", { href: link, target: "_blank", rel: "noopener", "aria-label": `Open ${d.id} at the edge` }, "Open") : null,
        el("button", { type: "button", "aria-expanded": openLogs.has(d.id) ? "true" : "false", "aria-label": `Build logs of ${d.id}`, onclick: () => {
          if (openLogs.has(d.id)) openLogs.delete(d.id); else openLogs.add(d.id);
          renderProjects();
        } }, "Logs"),
        el("button", { type: "button", disabled: d.status !== "ready" || d.production, "aria-label": `Promote ${d.id}`,
          onclick: () => guard(() => call("POST", `/_emulator/deployments/${d.id}/promote`, {}), `Promoted ${d.id}.`) }, "Promote"),
        forceForm(deploymentStatuses, d.id, (body) => guard(() => call("POST", `/_emulator/deployments/${d.id}/status`, body), `${d.id} is ${body.status}.`)),
      ),
    ),
  );
  if (!openLogs.has(d.id)) return [row];
  const logs = el("pre", { class: "logs", "aria-label": `Build logs of ${d.id}` }, "loading…");
  call("GET", `/_emulator/deployments/${d.id}/logs`).then((p) => {
    logs.textContent = p.logs.map((l) => `${fmtTime(l.created_at).slice(11)}  ${l.text}`).join("\n") || "(no lines yet)";
  }).catch((e) => { logs.textContent = e.message; });
  return [row, el("tr", {}, el("td", { colspan: 5 }, logs))];
}

function domainRow(p, d) {
  return el("tr", { "data-domain": d.hostname, class: d.status === "error" ? "err" : null },
    el("td", { class: "mono" }, d.hostname, d.redirect_to ? el("div", { class: "muted" }, "→ " + d.redirect_to) : null),
    el("td", {}, el("span", { class: `badge status ${d.status}` }, d.status),
      d.error ? el("div", {}, errorLink(d.error.code)) : null),
    el("td", { class: "mono" }, ...d.dns.map((r) => el("div", {}, `${r.type} ${r.name} ${r.value}`))),
    el("td", {}, el("span", { class: `badge ${d.tls.status}` }, d.tls.status),
      d.tls.expires_at ? el("div", { class: "muted" }, "expires " + fmtTime(d.tls.expires_at).slice(0, 10)) : null,
      d.tls.issuer ? el("div", { class: "muted" }, d.tls.issuer) : null),
    el("td", { class: "actions" }, el("div", { class: "row" },
      forceForm(domainStatuses, d.hostname, (body) => guard(() => call("POST", `/_emulator/domains/${encodeURIComponent(d.hostname)}/status`, body), `${d.hostname} is ${body.status}.`)),
      el("button", { type: "button", class: "danger", "aria-label": `Delete domain ${d.hostname}`,
        onclick: () => guard(() => call("DELETE", `/_emulator/projects/${p.id}/domains/${encodeURIComponent(d.hostname)}`), `Deleted ${d.hostname}.`) }, "Delete"),
    )),
  );
}

function projectBlock(p) {
  const host = el("input", { name: "hostname", placeholder: "www.example.test", required: true, "aria-label": `Hostname to add to ${p.name}` });
  const redirect = el("input", { name: "redirect_to", placeholder: "redirect to (optional)", "aria-label": `Redirect target for the new domain of ${p.name}` });
  return el("div", { class: "project", "data-project": p.id },
    el("h3", {}, p.name, " ", el("span", { class: "muted mono" }, p.id)),
    el("table", {},
      el("caption", { class: "sr-only" }, `Deployments of ${p.name}`),
      el("thead", {}, el("tr", {}, ...["deployment", "target", "status", "timings", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...p.deployments.flatMap(deploymentRows))),
    p.more_deployments ? el("p", { class: "muted" }, `Newest ${p.deployments.length} shown.`) : null,
    el("table", {},
      el("caption", { class: "sr-only" }, `Domains of ${p.name}`),
      el("thead", {}, el("tr", {}, ...["domain", "status", "DNS records to set", "certificate", ""].map((h) => el("th", { scope: "col" }, h)))),
      el("tbody", {}, ...p.domains.map((d) => domainRow(p, d)))),
    el("form", { class: "row", onsubmit: async (ev) => {
      ev.preventDefault();
      const body = { hostname: host.value.trim() };
      if (redirect.value.trim()) body.redirect_to = redirect.value.trim();
      guard(() => call("POST", `/_emulator/projects/${p.id}/domains`, body), `Added ${body.hostname}.`);
    } }, host, redirect, el("button", { type: "submit" }, "Add domain")),
  );
}

let projects = []; // the last GET /_emulator/projects, rendered again when a log opens

const loadProjects = coalesced(async () => {
  const o = await guard(() => call("GET", "/_emulator/projects"));
  if (o) { projects = o.projects; renderProjects(); showReplay(o.replayed); }
});

// ---- the world shown, and failure bundles ----

$("world-name").textContent = namespace ? `· namespace ${namespace}` : "· default world";

// showReplay says, above everything, that the world came from a failure bundle.
function showReplay(r) {
  const b = $("replay-banner");
  b.hidden = !r;
  if (r) {
    b.replaceChildren(`Replayed from a failure bundle of ${r.namespace || "the default world"}, taken ${fmtTime(r.created_at)} by hostemu ${r.hostemu_version}. `,
      "Its journal's entries are marked replayed; the clock is manual where the bundle's world stood: advance it to see what happened next.",
      // why the test failed (the bundle's failure.txt), its first line open
      r.failure ? el("details", { id: "replay-failure" },
        el("summary", {}, `The test failed: ${r.failure.trim().split("\n")[0]}`),
        el("pre", { class: "mono" }, r.failure)) : null);
  }
}

$("bundle-download").addEventListener("click", () => guard(() =>
  download("/_emulator/bundle", `hostemu-${namespace || "default"}-${new Date().toISOString().replace(/[:.]/g, "-")}.hostemu.tgz`), "Bundle downloaded."));

$("bundle-open").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const file = $("bundle-file").files[0];
  if (!file) return;
  await guard(async () => {
    // one call: the namespace is made from the bundle, on the bundle's scenario, so the
    // server's start-up scenario (its file broken, say) has no say; a bundle refused
    // leaves no namespace behind
    const ns = await call("POST", "/_emulator/namespaces", file);
    location.assign(`/dashboard?ns=${encodeURIComponent(ns.namespace)}`);
  });
});

function renderProjects() {
  const box = $("projects");
  const focused = document.activeElement && box.contains(document.activeElement) ? document.activeElement.getAttribute("aria-label") : null;
  box.replaceChildren(...projects.map(projectBlock));
  if (!projects.length) box.append(el("p", { class: "muted" }, "No projects."));
  if (focused) { // keep the keyboard where it was across a live refresh
    const again = [...box.querySelectorAll("[aria-label]")].find((n) => n.getAttribute("aria-label") === focused);
    if (again) again.focus();
  }
}

// ---- request journal ----

const journal = []; // oldest first, as GET /_emulator/requests
const journalMax = 1000;

function globRE(glob) {
  return new RegExp("^" + glob.split("*").map((s) => s.replace(/[.+?^${}()|[\]\\]/g, "\\$&")).join(".*") + "$");
}

function statusMatches(want, status) {
  want = want.trim().toLowerCase();
  if (!want) return true;
  if (/^\dxx$/.test(want)) return Math.floor(status / 100) === Number(want[0]);
  return String(status) === want;
}

function journalFilter() {
  const method = $("f-method").value, path = $("f-path").value.trim(), status = $("f-status").value, service = $("f-service").value;
  const failures = $("f-failures").checked;
  const re = path ? globRE(path) : null;
  const hideNoise = $("f-noise").checked;
  return (e) => !(hideNoise && isProxyNoise(e)) && (!method || e.method === method) && (!re || re.test(e.path)) && statusMatches(status, e.status) &&
    (!service || e.service === service) && (!failures || e.status === 0 || e.status >= 400);
}

// journalTarget is what a journal row names: host:port for a CONNECT, the host and
// path for the edge, the path for the APIs; with the query.
function journalTarget(e) {
  if (e.method === "CONNECT") return e.path;
  return (e.host ? e.host : "") + e.path + (e.query ? "?" + e.query : "");
}

// isProxyNoise tells a proxy refusal of a host hostemu does not emulate (a browser using
// hostemu as its proxy asks for its own background hosts): shown only when asked.
function isProxyNoise(e) {
  return e.status === 403 && e.error_code === "unknown_host";
}

function journalRow(e) {
  const failed = e.status === 0 || e.status >= 400;
  const target = journalTarget(e);
  return el("tr", { class: failed ? "err" : null },
    el("td", { class: "mono" }, fmtTime(e.time).slice(11)),
    el("td", {}, e.method),
    el("td", { class: "mono" }, el("span", { class: "clip", title: target }, target)),
    el("td", {}, el("span", { class: `badge s${Math.floor(e.status / 100)}` }, e.status === 0 ? "dropped" : e.status)),
    el("td", {}, e.duration_ms),
    el("td", {}, e.service),
    el("td", {}, e.scope),
    el("td", {}, e.error_code ? errorLink(e.error_code) : ""),
    el("td", { class: "mono fault-id" }, e.fault_id || "", e.replayed ? el("span", { class: "badge replayed", title: "recorded by the world the bundle was taken from" }, "replayed") : null),
  );
}

function renderJournal() {
  const keep = journalFilter();
  const rows = [];
  for (let i = journal.length - 1; i >= 0 && rows.length < 300; i--) if (keep(journal[i])) rows.push(journalRow(journal[i]));
  $("journal").replaceChildren(...rows);
  const noise = journal.filter(isProxyNoise).length;
  $("noise-count").textContent = noise ? `(${noise})` : "";
  $("journal-count").textContent = `(${rows.length} shown of ${journal.length})`;
}

const loadJournal = coalesced(async () => {
  const j = await guard(() => call("GET", "/_emulator/requests"));
  if (!j) return;
  // entries that came as events while the list was on its way are newer than its last:
  // keep them (the list was read before they were journaled)
  const last = j.requests.length ? j.requests[j.requests.length - 1].seq : 0;
  const newer = journal.filter((e) => e.seq > last);
  journal.splice(0, journal.length, ...j.requests.concat(newer).slice(-journalMax));
  renderJournal();
});

for (const id of ["f-method", "f-path", "f-status", "f-service", "f-failures", "f-noise"]) $(id).addEventListener("input", renderJournal);
$("journal-filter").addEventListener("submit", (ev) => ev.preventDefault());
$("journal-clear").addEventListener("click", async () => {
  if (await guard(() => call("DELETE", "/_emulator/requests"), "Journal cleared.")) { journal.length = 0; renderJournal(); }
});

// ---- faults ----

// describeAnswer says what one answer does: a fault's, or a step of its then sequence.
function describeAnswer(f) {
  const parts = [];
  if (f.pass) parts.push("let through");
  if (f.error) parts.push(`error ${f.error}`);
  if (f.status) parts.push(`answer ${f.status}${f.code ? " " + f.code : ""}`);
  if (f.delay) parts.push(`delay ${typeof f.delay === "string" ? f.delay : `${f.delay.min}–${f.delay.max}`}`);
  if (f.drop) parts.push("drop");
  if (f.rate_limit) parts.push("rate limit");
  if (f.timeout) parts.push("timeout");
  if (f.break) parts.push(`break ${f.break}${f.after_bytes ? ` after ${f.after_bytes} B` : ""}${f.bytes_per_second ? ` at ${f.bytes_per_second} B/s` : ""}`);
  if (f.headers) parts.push(`headers ${Object.keys(f.headers).join(", ")}`);
  if (f.body !== undefined) parts.push("body replaced");
  return parts.join(", ");
}

function describeFault(f) {
  const parts = f.then ? [`then: ${f.then.map(describeAnswer).join(" → ")}`] : [describeAnswer(f)].filter(Boolean);
  if (f.times) parts.push(`${f.times}×`);
  if (f.probability !== undefined && f.probability !== null && f.probability !== 1) parts.push(`p=${f.probability}`);
  return parts.join(", ");
}

function describeMatch(m) {
  if (!m) return "every request";
  const pairs = (o) => Object.entries(o).map(([k, v]) => `${k}=${typeof v === "string" ? v : JSON.stringify(v)}`).join("&");
  const parts = [m.operation, m.method, m.path, m.service, m.host, m.scope && `scope ${m.scope}`,
    m.query && `?${pairs(m.query)}`, m.headers && `headers ${pairs(m.headers)}`, m.body && `body ${pairs(m.body)}`,
    m.token && "a token"].filter(Boolean);
  return parts.join(" ") || "every request";
}

// describeNearMisses lists what almost matched a fault with no hits.
function describeNearMisses(f) {
  if (!f.near_misses || !f.near_misses.length) return null;
  return el("ul", { class: "near-misses muted", "aria-label": `Near misses of ${f.id}` }, ...f.near_misses.map((n) =>
    el("li", {}, `almost: #${n.seq} ${n.method} ${n.path}, differs in ${JSON.stringify(n.differs)}`)));
}

const loadFaults = coalesced(async () => {
  const f = await guard(() => call("GET", "/_emulator/faults"));
  if (!f) return;
  $("faults").replaceChildren(...f.faults.map((x) => el("tr", { "data-fault": x.id },
    el("td", { class: "mono" }, x.id, x.source !== "api" ? el("div", { class: "muted" }, x.source) : null),
    el("td", { class: "mono" }, describeMatch(x.match), describeNearMisses(x)),
    el("td", {}, describeFault(x)),
    el("td", { class: "hits" }, x.hits),
    el("td", {}, x.source === "api" ? el("button", { type: "button", class: "danger", "aria-label": `Remove fault ${x.id}`,
      onclick: () => guard(() => call("DELETE", "/_emulator/faults/" + encodeURIComponent(x.id)), `Removed ${x.id}.`) }, "Remove") : ""),
  )));
});

async function addFault(spec) {
  const f = await guard(() => call("POST", "/_emulator/faults", spec));
  if (f) notify(`Added fault ${f.id}.`);
}

// A button per preset (presets.js): its fault, on the form's path, method and service,
// or on its own match when it has one.
$("presets").replaceChildren(...presets.map((p) => el("button", { type: "button", "data-preset": p.id, title: p.title,
  onclick: () => {
    let match = p.match;
    if (!match) {
      match = {};
      if ($("preset-path").value.trim()) match.path = $("preset-path").value.trim();
      if ($("preset-method").value) match.method = $("preset-method").value;
      if ($("preset-service").value) match.service = $("preset-service").value;
    }
    addFault({ match, ...p.fault });
  } }, p.label)));
$("raw-fault").addEventListener("submit", (ev) => {
  ev.preventDefault();
  addFault($("raw-fault-json").value); // sent as written: the server says what is wrong with it
});

$("faults-clear").addEventListener("click", () => guard(() => call("DELETE", "/_emulator/faults"), "Every API fault removed."));

// ---- edge ----

// loadEdge lists the edge's hosts while the section is open: a big world has many.
const loadEdge = coalesced(async () => {
  if (!$("edge-box").open) return;
  const r = await guard(() => call("GET", "/_emulator/edge"));
  if (!r) return;
  $("edge").replaceChildren(...r.routes.slice(0, 500).map((x) => el("tr", {},
    el("td", { class: "mono" }, x.status === "ready" || x.status === "active"
      ? el("a", { href: edgeURL(x.host), target: "_blank", rel: "noopener" }, x.host) : x.host),
    el("td", {}, x.kind, x.detaching ? el("span", { class: "muted" }, " (detaching)") : null),
    el("td", { class: "mono" }, x.redirect_to ? "→ " + x.redirect_to : x.deployment_id || ""),
    el("td", {}, el("span", { class: `badge ${x.status}` }, x.status)),
  )));
});
$("edge-box").addEventListener("toggle", loadEdge);

// ---- state ----

$("export").addEventListener("click", () => guard(() => download("/_emulator/state", `hostemu-state-${new Date().toISOString().replace(/[:.]/g, "-")}.json`), "State downloaded."));

$("import").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const file = $("import-file").files[0];
  if (!file) return;
  await guard(async () => call("PUT", "/_emulator/state", await file.text()), `Imported ${file.name}.`);
});

$("reset").addEventListener("click", async () => {
  if (!confirm("Reset the world to its start-up state?")) return;
  await guard(() => call("POST", "/_emulator/reset"), "The world is back at its start.");
});

// ---- coverage ----

// The matrix of GET /_emulator/coverage: a row per operation, a column per status any
// operation documents; a cell lists the status's codes, green when seen (with the
// count), red when never, grey for an undocumented answer (an injected fault's).
const loadCoverage = coalesced(async () => {
  let c;
  try { c = await call("GET", "/_emulator/coverage"); } catch { return; }
  const statuses = [...new Set(c.operations.flatMap((o) => o.responses.map((r) => r.status)))].sort((a, b) => a - b);
  $("cov-head").replaceChildren(el("tr", {}, el("th", { scope: "col" }, "operation"), el("th", { scope: "col" }, "calls"),
    ...statuses.map((s) => el("th", { scope: "col" }, String(s)))));
  $("cov-ops").replaceChildren(...c.operations.map((o) => el("tr", {},
    el("th", { scope: "row", class: "mono" }, `${o.method} ${o.path}`),
    el("td", {}, String(o.seen)),
    ...statuses.map((s) => el("td", { class: "cell" }, ...o.responses.filter((r) => r.status === s).map((r) =>
      el("span", { class: r.undocumented ? "undoc" : r.seen ? "seen" : "unseen",
        title: `${o.method} ${o.path} → ${s} ${r.code || ""}: ${r.seen ? `seen ${r.seen}×` : "never answered"}${r.undocumented ? " (undocumented)" : ""}` },
      r.code ? `${r.code}${r.seen ? " ×" + r.seen : ""}` : r.seen ? "×" + r.seen : "never")))))));
  $("cov-trans").replaceChildren(...c.transitions.map((t) => el("li", { class: t.seen ? "seen" : "unseen" },
    `${t.resource} ${t.from} → ${t.to}${t.via ? ` (${t.via})` : ""}: ${t.seen}`)));
  $("cov-faults").replaceChildren(...c.faults.map((f) => el("li", { class: f.seen ? "seen" : "unseen" }, `${f.action}: ${f.seen}`)));
  const t = c.totals;
  $("cov-totals").textContent = `${t.percent}% in all: operations ${t.operations.seen} of ${t.operations.total} (${t.operations.percent}%), ` +
    `answers ${t.responses.seen} of ${t.responses.total} (${t.responses.percent}%), lifecycle edges ${t.transitions.seen} of ${t.transitions.total} (${t.transitions.percent}%).`;
});

// coverageSoon reads coverage again at most every half second while requests come in.
let coverageTimer = null;
function coverageSoon() {
  if (coverageTimer) return;
  coverageTimer = setTimeout(() => { coverageTimer = null; loadCoverage(); }, 500);
}

$("cov-reset").addEventListener("click", () => guard(async () => { await call("DELETE", "/_emulator/coverage"); await loadCoverage(); }, "Coverage counts afresh."));

// ---- namespaces (hook) ----

// loadNamespaces lists the namespaces beside the default world (GET
// /_emulator/namespaces): each one's scenario, clock and use, and a delete button.
// The section stays hidden while there are none (or the route is not there).
async function loadNamespaces() {
  try {
    const n = await call("GET", "/_emulator/namespaces");
    const list = (n && n.namespaces) || [];
    $("namespaces").replaceChildren(...list.map((x) => el("li", { "data-namespace": x.namespace },
      el("a", { class: "mono", href: `/dashboard?ns=${encodeURIComponent(x.namespace)}`, "aria-current": x.namespace === namespace ? "page" : null }, x.namespace),
      x.replayed ? el("span", { class: "badge replayed", title: `a bundle of ${x.replayed.namespace || "the default world"}` }, " replayed") : null,
      ` · scenario ${x.scenario} · ${x.clock} clock · last used ${fmtTime(x.last_used_at)} `,
      el("button", { type: "button", onclick: async () => {
        try {
          await call("DELETE", `/_emulator/namespaces/${encodeURIComponent(x.namespace)}`);
          notify(`Deleted namespace ${x.namespace}.`);
        } catch (e) { notify(e.message, true); }
        loadNamespaces();
      } }, "Delete"))));
    if (namespace) $("namespaces").prepend(el("li", {}, el("a", { href: "/dashboard" }, "the default world")));
    $("namespaces-box").hidden = list.length === 0 && !namespace;
  } catch { $("namespaces-box").hidden = true; }
}

// Namespaces come and go from other processes (tests), which no event of this world
// tells: the list is read again every 3 s while the page is visible.
setInterval(() => { if (document.visibilityState === "visible") loadNamespaces(); }, 3000);

// ---- live ----

// Changes made from this page come back as events like any other, and the handlers
// below read what they touched again: an action does not reload by itself.

function loadAll() {
  loadClock(); loadScenarios(); loadProjects(); loadJournal(); loadFaults(); loadEdge(); loadNamespaces(); loadCoverage();
}

subscribe((type, data) => {
  switch (type) {
    case "deployment": case "domain": loadProjects(); loadEdge(); coverageSoon(); break;
    case "request":
      coverageSoon();
      journal.push(data);
      if (journal.length > journalMax) journal.shift();
      renderJournal();
      break;
    case "journal": journal.length = 0; renderJournal(); break;
    case "fault": loadFaults(); coverageSoon(); break;
    case "clock": showClock(data); break;
    case "scenario": loadScenarios(); loadFaults(); break;
    case "reset": journal.length = 0; loadAll(); break;
    case "end": notify(`The event stream ended: ${data.reason}`, true); break;
  }
}, loadAll); // after a reconnect too: events may have been missed
