"use strict";
// edgeFetch: a fetch that reaches hostemu's edge for any host, so that a test opens a
// deployment's url, or a custom domain's, exactly as the API gave it, although
// *.hostemu.localhost does not resolve in Node and the domain is nobody's. As the Go
// testkit's EdgeClient: http URLs go to the plain listener (the edge routes by Host);
// https URLs over real TLS to the HTTPS listener of start({ tls: true }), else through
// the plain listener as a proxy (CONNECT, the namespace in the proxy credentials). The
// emulator's CA is the only one trusted, and certificates are checked at the
// emulator's time, as a client would on that date: Node cannot be given a verification
// time, so an answer of "expired" or "not yet valid" is taken back when the emulated
// time falls within the certificate's dates.

const http = require("node:http");
const net = require("node:net");
const tls = require("node:tls");
const { Readable } = require("node:stream");

const redirects = new Set([301, 302, 303, 307, 308]);
const maxRedirects = 20;

// edgeFetch is emu.fetch: input and init as fetch takes them; resolves with a Response.
async function edgeFetch(emu, input, init) {
  const req = new Request(input, init);
  let url = new URL(req.url);
  let method = req.method;
  let body = method === "GET" || method === "HEAD" ? undefined : Buffer.from(await req.arrayBuffer());
  const headers = {};
  for (const [k, v] of req.headers) headers[k] = v;
  for (let hop = 0; ; hop++) {
    const res = await once(emu, url, method, headers, body, req.signal);
    const location = res.headers.get("location");
    if (req.redirect === "manual" || !redirects.has(res.status) || !location) return res;
    if (req.redirect === "error") throw new TypeError(`hostemu: ${url} redirects to ${location} and redirect is "error"`);
    if (hop >= maxRedirects) throw new TypeError(`hostemu: more than ${maxRedirects} redirects from ${req.url}`);
    await res.body?.cancel();
    if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === "POST")) {
      method = "GET";
      body = undefined;
      delete headers["content-type"];
      delete headers["content-length"];
    }
    url = new URL(location, url);
  }
}

// once makes one request at the edge and resolves with its Response.
async function once(emu, url, method, headers, body, signal) {
  const r = emu._r;
  const base = new URL(r.url);
  const h = { ...headers, host: url.host };
  if (body) h["content-length"] = String(body.length);
  const path = url.pathname + url.search;
  let opts;
  if (url.protocol === "http:") {
    if (r.namespace && !h["x-hostemu-namespace"]) h["x-hostemu-namespace"] = r.namespace;
    opts = { host: base.hostname, port: base.port, agent: false };
  } else if (url.protocol === "https:") {
    const [ca, now] = await Promise.all([caPEM(emu), emu.now()]);
    const raw = emu.tlsUrl ? await dial(new URL(emu.tlsUrl)) : await tunnel(r, base, url);
    const socket = await secure(raw, url.hostname, ca, Date.parse(now));
    opts = { createConnection: () => socket };
  } else {
    throw new TypeError(`hostemu: emu.fetch takes http and https URLs, not ${url.protocol}`);
  }
  return new Promise((resolve, reject) => {
    // https: the TLS socket is made already, and plain HTTP goes over it
    const mod = url.protocol === "http:" ? r.mod : http;
    const req = mod.request({ ...opts, method, path, headers: h, signal }, (res) => {
      const out = new Headers();
      for (let i = 0; i < res.rawHeaders.length; i += 2) out.append(res.rawHeaders[i], res.rawHeaders[i + 1]);
      const empty = method === "HEAD" || res.statusCode === 204 || res.statusCode === 304;
      if (empty) res.resume();
      resolve(new Response(empty ? null : Readable.toWeb(res), { status: res.statusCode, statusText: res.statusMessage, headers: out }));
    });
    req.on("error", reject);
    req.end(body);
  });
}

// caPEM is the emulator's CA certificate, fetched once.
function caPEM(emu) {
  const r = emu._r;
  if (!r.caPEM) r.caPEM = r.call("GET", "/_emulator/ca.pem", undefined, { raw: true }).then((b) => b.toString("utf8"));
  return r.caPEM;
}

function dial(u) {
  return new Promise((resolve, reject) => {
    const s = net.connect(Number(u.port), u.hostname, () => resolve(s));
    s.once("error", reject);
  });
}

// tunnel opens a CONNECT tunnel to url's host through the emulator's plain listener;
// the proxy credentials name the namespace.
function tunnel(r, base, url) {
  const target = `${url.hostname}:${url.port || 443}`;
  const headers = { host: target };
  if (r.namespace) headers["proxy-authorization"] = "Basic " + Buffer.from(r.namespace + ":").toString("base64");
  return new Promise((resolve, reject) => {
    const req = r.mod.request({ host: base.hostname, port: base.port, method: "CONNECT", path: target, headers, agent: false });
    req.once("connect", (res, socket) => {
      if (res.statusCode === 200) return resolve(socket);
      socket.destroy();
      reject(new Error(`hostemu: CONNECT ${target} through ${r.url} answered ${res.statusCode}`));
    });
    req.once("error", reject);
    req.end();
  });
}

// secure does the TLS handshake for servername over socket, trusting ca alone, and
// checks the certificate's dates at the emulated time nowMs.
function secure(socket, servername, ca, nowMs) {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ socket, servername: net.isIP(servername) ? undefined : servername, ca, rejectUnauthorized: false, ALPNProtocols: ["http/1.1"] });
    s.once("error", reject);
    s.once("secureConnect", () => {
      const cert = s.getPeerCertificate();
      let err = null;
      if (!s.authorized) {
        // OpenSSL reports the first problem it meets: an untrusted chain or a bad
        // signature comes before the dates, so a date error means the chain is good.
        const dated = s.authorizationError === "CERT_HAS_EXPIRED" || s.authorizationError === "CERT_NOT_YET_VALID";
        const within = nowMs >= Date.parse(cert.valid_from) && nowMs <= Date.parse(cert.valid_to);
        if (!dated || !within) err = new Error(`hostemu: the certificate of ${servername}: ${s.authorizationError}${dated ? ` at the emulator's time ${new Date(nowMs).toISOString()}` : ""}`);
      } else if (nowMs < Date.parse(cert.valid_from) || nowMs > Date.parse(cert.valid_to)) {
        err = new Error(`hostemu: the certificate of ${servername} is not valid at the emulator's time ${new Date(nowMs).toISOString()} (${cert.valid_from} to ${cert.valid_to})`);
      }
      err = err || tls.checkServerIdentity(servername, cert) || null;
      if (err) {
        s.destroy();
        return reject(err);
      }
      resolve(s);
    });
  });
}

module.exports = { edgeFetch };
