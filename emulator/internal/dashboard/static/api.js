// The one way the pages reach hostemu: the control API and its event stream, on this
// page's own origin. With --control-token the token is asked for once and kept in
// sessionStorage (this tab only), and sent as Authorization.

const TOKEN_KEY = "hostemu-control-token";

// namespace is the world the page shows: a namespace named by ?ns= in the page's
// address, else the default world ("").
export const namespace = new URLSearchParams(location.search).get("ns") || "";

// Routes that are not a world's: they stay where they are whatever world is shown.
const GLOBAL = /^\/_emulator\/(health|namespaces|openapi\.(json|yaml))(\/|\?|$)/;

// scoped is a control API path for the world shown: /_emulator/x becomes
// /_emulator/namespaces/{ns}/x in a namespace.
export function scoped(path) {
  if (!namespace || !path.startsWith("/_emulator/") || GLOBAL.test(path)) return path;
  return "/_emulator/namespaces/" + encodeURIComponent(namespace) + path.slice("/_emulator".length);
}

class APIError extends Error {
  constructor(status, code, message) {
    super(message || code || `HTTP ${status}`);
    this.status = status;
    this.code = code;
  }
}

function headers(extra) {
  const h = { ...extra };
  const t = sessionStorage.getItem(TOKEN_KEY);
  if (t) h.Authorization = "Bearer " + t;
  return h;
}

let asking = null;

// askToken shows the token form (in every page's <dialog id="token-dialog">) and
// resolves once a token was entered.
function askToken(reason) {
  if (asking) return asking;
  const dlg = document.getElementById("token-dialog");
  const form = dlg.querySelector("form");
  const input = dlg.querySelector("input");
  dlg.querySelector(".reason").textContent = reason;
  input.value = "";
  asking = new Promise((resolve) => {
    form.onsubmit = (ev) => {
      ev.preventDefault();
      sessionStorage.setItem(TOKEN_KEY, input.value.trim());
      dlg.close();
      asking = null;
      resolve();
    };
  });
  dlg.showModal();
  input.focus();
  return asking;
}

function isTokenError(status, code) {
  return status === 401 && (code === "missing_token" || code === "invalid_token");
}

// fetchRaw sends a control API request and returns its successful Response. A refused
// token asks for one and tries again; any other failure throws an APIError with the
// envelope's code and message.
async function fetchRaw(path, init = {}) {
  path = scoped(path);
  for (;;) {
    const res = await fetch(path, { ...init, headers: headers(init.headers), cache: "no-store" });
    if (res.ok) return res;
    let err = {};
    try { err = (await res.json()).error || {}; } catch { /* not an envelope */ }
    if (isTokenError(res.status, err.code)) {
      await askToken(err.code === "invalid_token" ? "That token was not accepted." : "This emulator was started with --control-token.");
      continue;
    }
    throw new APIError(res.status, err.code, err.message);
  }
}

// download saves a control API answer as a file: through fetchRaw, so that it carries
// the control token a plain link could not send.
export async function download(path, filename) {
  const url = URL.createObjectURL(await (await fetchRaw(path)).blob());
  const a = el("a", { href: url, download: filename });
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10000);
}

// call sends a control API request with an optional JSON body (an object, or a string
// sent as written) and returns its decoded JSON answer.
export async function call(method, path, body) {
  const init = { method };
  if (body instanceof Blob) {
    init.headers = { "Content-Type": "application/gzip" };
    init.body = body;
  } else if (body !== undefined) {
    init.headers = { "Content-Type": "application/json" };
    init.body = typeof body === "string" ? body : JSON.stringify(body);
  }
  const text = await (await fetchRaw(path, init)).text();
  return text ? JSON.parse(text) : null;
}

// subscribe reads GET /_emulator/events (through fetch, so that the token can go in a
// header) and calls onEvent(type, data) for each event and onLive() each time the stream
// opens, showing its state in the header's #live; it reconnects after a pause. onLive
// runs again after a reconnect: the page then reads everything afresh, as it may have
// missed events.
export function subscribe(onEvent, onLive) {
  const live = document.getElementById("live");
  const show = (state) => { live.dataset.state = state; live.textContent = state === "live" ? "live" : "disconnected"; };
  let stopped = false;
  let ctrl = null;
  (async () => {
    while (!stopped) {
      ctrl = new AbortController();
      try {
        const res = await fetchRaw("/_emulator/events", { signal: ctrl.signal });
        show("live");
        onLive();
        const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
        let buf = "";
        for (;;) {
          const { value, done } = await reader.read();
          if (done) break;
          buf += value;
          let i;
          while ((i = buf.indexOf("\n\n")) >= 0) {
            const block = buf.slice(0, i);
            buf = buf.slice(i + 2);
            let type = "message", data = "";
            for (const line of block.split("\n")) {
              if (line.startsWith("event: ")) type = line.slice(7);
              else if (line.startsWith("data: ")) data += line.slice(6);
            }
            if (data) {
              try { onEvent(type, JSON.parse(data)); } catch (e) { console.error(e); }
            }
          }
        }
      } catch (e) {
        if (stopped) return;
      }
      show("down");
      await new Promise((r) => setTimeout(r, 2000));
    }
  })();
  return () => { stopped = true; if (ctrl) ctrl.abort(); };
}

// el builds an element: el("td", {class: "x"}, "text", child…).
export function el(tag, attrs, ...children) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else if (v === true) e.setAttribute(k, "");
    else e.setAttribute(k, v);
  }
  for (const c of children.flat()) {
    if (c === undefined || c === null || c === false) continue;
    e.append(c instanceof Node ? c : String(c));
  }
  return e;
}

// notify shows a message in the page's status line (role=status: read by screen readers).
export function notify(msg, isError) {
  const s = document.getElementById("notice");
  if (!s) return;
  s.textContent = msg;
  s.className = isError ? "notice error" : "notice";
}

// guard runs an action and reports its error in the status line.
export async function guard(fn, done) {
  try {
    const out = await fn();
    if (done) notify(done);
    return out;
  } catch (e) {
    notify(e.code ? `${e.code}: ${e.message}` : String(e.message || e), true);
    return undefined;
  }
}

// mask shows the start and end of a secret.
export function mask(token) {
  const head = Math.min(8, Math.floor(token.length / 3)), tail = Math.min(4, Math.floor(token.length / 6));
  return token.slice(0, head) + "…" + (tail ? token.slice(-tail) : "");
}

export function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  return d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "Z").replace(/Z$/, " UTC");
}

// since is the time from a to b, short ("1.2s", "3m 4s").
export function since(a, b) {
  if (!a || !b) return "";
  const ms = new Date(b) - new Date(a);
  if (ms < 1000) return ms + " ms";
  const s = ms / 1000;
  if (s < 60) return (Math.round(s * 10) / 10) + " s";
  const m = Math.floor(s / 60);
  if (m < 60) return `${m}m ${Math.round(s % 60)}s`;
  return `${Math.floor(m / 60)}h ${m % 60}m`;
}
