import { call, el, guard, subscribe, mask, notify } from "/dashboard/assets/api.js";

const body = document.getElementById("tokens");
const revealed = new Set();
let tokens = []; // the last GET /_emulator/tokens, rendered again when one is shown or hidden

async function load() {
  const t = await guard(() => call("GET", "/_emulator/tokens"));
  if (t) { tokens = t.tokens; render(); }
}

function render() { body.replaceChildren(...tokens.map(row)); }

function row(tok) {
  const shown = revealed.has(tok.token);
  const value = el("code", { "data-token": tok.token, class: "token-value" }, shown ? tok.token : mask(tok.token));
  return el("tr", { "data-scope": tok.scope },
    el("td", {}, value),
    el("td", {}, el("span", { class: "badge" }, tok.scope)),
    el("td", {},
      el("div", { class: "row" },
        el("button", { type: "button", "aria-pressed": shown ? "true" : "false", "aria-label": `Show token ${mask(tok.token)}`, onclick: () => {
          if (revealed.has(tok.token)) revealed.delete(tok.token); else revealed.add(tok.token);
          render();
        } }, shown ? "Hide" : "Show"),
        el("button", { type: "button", "aria-label": `Copy token ${mask(tok.token)}`, onclick: async () => {
          try { await navigator.clipboard.writeText(tok.token); notify("Copied."); } catch { notify("The browser refused the clipboard; use Show.", true); }
        } }, "Copy"),
        el("button", { type: "button", class: "danger revoke", "aria-label": `Revoke token ${mask(tok.token)}`,
          onclick: () => guard(() => call("DELETE", "/_emulator/tokens/" + encodeURIComponent(tok.token)), `Revoked ${mask(tok.token)}.`) }, "Revoke"),
      ),
    ),
  );
}

document.getElementById("mint").addEventListener("submit", async (ev) => {
  ev.preventDefault();
  const scope = document.getElementById("mint-scope").value;
  const t = await guard(() => call("POST", "/_emulator/tokens", { scope }));
  if (!t) return;
  revealed.add(t.token);
  const p = document.getElementById("minted");
  p.hidden = false;
  p.replaceChildren("New ", el("strong", {}, t.scope), " token: ", el("code", { id: "minted-token" }, t.token));
  notify(`Minted ${t.scope === "admin" ? "an" : "a"} ${t.scope} token.`);
});

// Mints and revokes, this page's own too, come back as token events.
subscribe((type) => {
  if (type === "token" || type === "reset") load();
}, load);
