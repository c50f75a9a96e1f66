import { call, download, el, guard, subscribe, fmtTime } from "/dashboard/assets/api.js";

const origin = location.origin;
for (const n of document.querySelectorAll("[data-base]")) n.textContent = origin + n.dataset.base;

async function loadCredentials() {
  const t = await guard(() => call("GET", "/_emulator/tokens"));
  if (!t) return;
  const body = document.getElementById("credentials");
  const seen = new Set();
  const rows = [];
  for (const tok of t.tokens) {
    if (seen.has(tok.scope)) continue; // the first of each scope, as the banner shows
    seen.add(tok.scope);
    rows.push(el("tr", {}, el("td", {}, `hosting token (${tok.scope})`), el("td", {}, el("code", {}, tok.token))));
  }
  for (const k of t.cipher_api_keys.slice(0, 1)) rows.push(el("tr", {}, el("td", {}, "decryption API key"), el("td", {}, el("code", {}, k))));
  body.replaceChildren(...rows);
  const first = t.tokens[0];
  document.getElementById("try").textContent = first
    ? `curl -H 'Authorization: Bearer ${first.token}' ${origin}/v1/projects`
    : `curl ${origin}/_emulator/health`;
}

// The CA link downloads through the control API's client, so that it works with
// --control-token too.
document.getElementById("ca-link").addEventListener("click", (ev) => {
  ev.preventDefault();
  guard(() => download("/_emulator/ca.pem", "hostemu-ca.pem"), "CA certificate downloaded.");
});

async function loadHealth() {
  const h = await guard(() => call("GET", "/_emulator/health"));
  if (!h) return;
  document.getElementById("health").replaceChildren(
    el("dt", {}, "version"), el("dd", {}, h.version),
    el("dt", {}, "scenario"), el("dd", {}, h.scenario),
    el("dt", {}, "clock"), el("dd", {}, `${h.clock} · ${fmtTime(h.now)}`),
  );
}

subscribe((type) => {
  if (type === "clock" || type === "scenario" || type === "reset") loadHealth();
  if (type === "token" || type === "reset") loadCredentials();
}, () => { loadCredentials(); loadHealth(); });
