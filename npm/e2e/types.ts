// Type-checked by npm/npm_test.go with tsc --strict (module nodenext) against the
// installed package: the testkit's types, and the OpenAPI types that come with it.
import { start, connect, saveBundlesOnFailure, collectedCoverage, HostemuError, type Emulator, type FaultSpec, type JournalEntry, type NearMiss, type Deployment, type HostingPaths,
  type DeploymentStatus, type DomainStatus, type Scope, type Service, type FaultAction } from "hostemu/testkit";

// shaped as node:test's afterEach (a context and a done callback) and Jest's (a timeout)
declare function runnerAfterEach(fn: (t: { passed: boolean }, done: (err?: unknown) => void) => unknown, timeout?: number): void;
saveBundlesOnFailure({ afterEach: runnerAfterEach });
saveBundlesOnFailure();

export async function workflow(): Promise<string> {
  const emu: Emulator = await start({ seed: 1, clock: "manual", clockStart: new Date(0), tls: false, args: ["--rate-limits", "off"] });
  const ns = await connect(emu.url, { controlToken: "t", fixtures: { projects: [] }, healthTimeout: 1000 });
  const spec: FaultSpec = { match: { method: "POST", path: "/v1/deployments" }, status: 503, times: 1, delay: { min: "1ms", max: "2ms" } };
  const id: string = await ns.faults.add(spec);
  const hits: number = await ns.faults.hits(id);
  const missed: NearMiss[] = await ns.faults.nearMisses(id);
  const now: string = await emu.advance(1500);
  const later: string = await emu.advance("5m");
  const done = await emu.await({ deployment: "dpl_x", status: "ready", timeout: "1h" });
  const seen: JournalEntry[] = await emu.requests({ method: "POST", status: 503, service: "hosting", since: 3 });
  const almost: string[] = (await emu.requestNearMisses({ method: "POST", path: "/v1/deployment" })).concat(missed).map((n) => `${n.seq} ${n.method} ${n.path} ${JSON.stringify(n.differs)}`);
  await emu.forceStatus("domain", "www.example.com", "error", { code: "dns_failed", message: "no" });
  await emu.fetch("https://demo-shop-abc.hostemu.localhost:4743/");
  const file: string = await emu.bundle("out/world.hostemu.tgz");
  const bytes: Uint8Array = await emu.bundle();
  await ns.loadBundle(bytes);
  await ns.loadBundle(file);
  await ns.resetCoverage();
  const cov = await emu.coverage({ namespaces: "all" });
  const pct: number = cov.totals.percent;
  const run: number = (await collectedCoverage()).totals.percent;
  const d = (await ns.state()) as unknown as Deployment | undefined;
  const status: "queued" | "building" | "ready" | "error" | undefined = d?.status;
  type ListQuery = HostingPaths["/v1/deployments"]["get"]["parameters"]["query"];
  const q: ListQuery = { limit: 5 };
  try {
    await emu.reset();
  } catch (e) {
    if (e instanceof HostemuError) return `${e.status} ${e.code} ${e.message}`;
  }
  await ns.close();
  await emu.close();
  return [hits, almost.length, now, later, done.now, seen.length, file, bytes.length, pct, run, status, q, emu.tokens.deploy, emu.cipherKey, emu.tlsUrl].join();
}

// @ts-expect-error: a fault's match has no such key
export const bad: FaultSpec = { match: { verb: "GET" } };
// @ts-expect-error: forceStatus takes a deployment or a domain
export const badKind = (e: Emulator) => e.forceStatus("project", "p", "ready");

// The closed sets are the descriptions' enums: a typo is a compile error, not a 400.
export async function typos(emu: Emulator): Promise<void> {
  const s: DeploymentStatus = "ready";
  const d: DomainStatus = "active";
  await emu.await({ deployment: "dpl_x", status: s });
  await emu.forceStatus("domain", "www.example.com", d);
  const scope: Scope = "deploy";
  await emu.token(scope);
  const service: Service = "edge";
  const action: FaultAction = "rate_limit";
  const entry: JournalEntry["scope"] = "api_key";
  void [service, action, entry];
  // @ts-expect-error: "redy" is not a status
  await emu.await({ deployment: "dpl_x", status: "redy" });
  // @ts-expect-error: "active" is a domain's status, not a deployment's
  await emu.forceStatus("deployment", "dpl_x", "active");
  // @ts-expect-error: "buildng" is not a deployment status
  await emu.forceStatus("deployment", "dpl_x", "buildng");
  // @ts-expect-error: "root" is not a scope
  await emu.token("root");
  // @ts-expect-error: "edg" is not a service
  await emu.faults.add({ match: { service: "edg" }, status: 503 });
  // @ts-expect-error: "write" is not a scope
  await emu.requests({ scope: "write" });
  // @ts-expect-error: "crash" is not a fault action
  const badAction: FaultAction = "crash";
  void badAction;
}
