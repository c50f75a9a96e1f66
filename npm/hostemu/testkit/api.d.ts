// The types of hostemu/testkit, shared by index.d.mts and index.d.cts. Request and
// response bodies come from hostemu's OpenAPI descriptions (openapi/*.d.ts, generated
// by gen-types.sh); the rest is the testkit's own.

import type { components as ControlComponents, operations as ControlOperations, paths as ControlPaths } from "../openapi/control.js";
import type { components as HostingComponents, paths as HostingPaths } from "../openapi/hosting.js";

type C = ControlComponents["schemas"];

/** The hosting and decryption APIs' paths and schemas, as openapi-typescript writes them (for openapi-fetch). */
export type { HostingPaths, HostingComponents, ControlPaths, ControlComponents };

/** The hosting API's schemas: Project, Deployment, Domain, ErrorEnvelope… */
export type Schemas = HostingComponents["schemas"];
/** A deployment, as GET /v1/deployments/{id} answers it. */
export type Deployment = Schemas["Deployment"];
/** A project, as GET /v1/projects lists it. */
export type Project = Schemas["Project"];
/** A custom domain, as the hosting API answers it. */
export type Domain = Schemas["Domain"];

// The closed sets of names below are the OpenAPI descriptions' enums (gen-types.sh
// generates them), so that a typo is a compile error rather than a 400 at run time.

/** A deployment's status: "queued" | "building" | "ready" | "error". */
export type DeploymentStatus = Schemas["DeploymentStatus"];
/** A custom domain's status: "pending" | "verifying" | "active" | "error". */
export type DomainStatus = Schemas["DomainStatus"];
/** A hosting token's scope: "read" | "deploy" | "admin". */
export type Scope = C["Scope"];
/** The service a request is for: "hosting" (the hosting API), "cipher" (the decryption service) or "edge". */
export type Service = NonNullable<C["FaultMatch"]["service"]>;
/** What an injected fault did, as coverage counts it: "status" | "error" | "rate_limit" | "delay" | "drop" | "timeout" | "pass", and "headers" | "body" | "break_reset" | … | "then" besides. */
export type FaultAction = C["Coverage"]["faults"][number]["action"];

/** The global fetch's type where the program has one (lib "dom" or @types/node), else a plain signature. */
type GlobalFetch = typeof globalThis extends { fetch: infer F } ? F : (input: string, init?: object) => Promise<unknown>;

/** A duration: a string of the control API ("90s", "1h30m", "2d") or a number of milliseconds. */
export type Duration = string | number;

/** A fault, as POST /_emulator/faults takes it: a match, and one effect (status, rate_limit, drop or timeout), delay alone or with one of them. */
export type FaultSpec = C["FaultSpec"];
/** Which requests a fault applies to; every field optional. */
export type FaultMatch = C["FaultMatch"];
/** A fault in force, with its id and hits; listed with no hits, its near_misses. */
export type FaultView = C["FaultView"];
/** One journaled request. */
export type JournalEntry = C["JournalEntry"];
/** A journaled request that held all but one or two fields of a fault's match or a journal condition, with what it had in those (differs). */
export type NearMiss = C["NearMiss"];
/** The whole state of a world (GET /_emulator/state). */
export type WorldState = C["WorldState"];
/** What an await answers: the emulated time when the condition held. */
export type AwaitResult = C["AwaitResult"];

/** A condition for await(): a deployment's or a domain's status, journaled requests, or the edge serving a deployment. */
export type AwaitCondition = Omit<C["AwaitRequest"], "timeout"> & {
  /** Emulated time on a manual clock (default 1h, which costs nothing), real time on a real one (default 10 s). */
  timeout?: Duration;
};

/** Selects journaled requests, as GET /_emulator/requests' query does (its parameters, from control.yaml). */
export type RequestFilter = NonNullable<ControlOperations["listRequests"]["parameters"]["query"]>;

/** The hosting tokens of a world, one per scope. */
export interface Tokens {
  /** A token of scope read: GET requests only. */
  read: string;
  /** A token of scope deploy: read, and create and promote deployments, upload files. */
  deploy: string;
  /** A token of scope admin: everything. */
  admin: string;
}

/** The error a forced status "error" reports: its code (e.g. "build_failed") and message. */
export type ForcedError = C["ForcedError"];

/** Coverage of a world (GET /_emulator/coverage): every documented operation and answer, lifecycle edge and fault action, with how often each was seen. */
export type Coverage = C["Coverage"];

/** What a PUT of a failure bundle answers: where it came from, and the world now. */
export type BundleReplayed = C["BundleReplayed"];

/**
 * How the clock moves: "manual" (only on advance() and await()), "real" (the wall's),
 * "auto" (a manual clock that jumps to the next step of a lifecycle in flight once the
 * world has been idle 20 ms: for apps that poll with sleeps), or "scaled:N" (emulated
 * time N times as fast as the wall, 1 ≤ N ≤ 10000). See docs/clocks.md.
 */
export type ClockMode = "manual" | "real" | "auto" | `scaled:${number}`;

/** Options of start() and connect(). */
export interface WorldOptions {
  /** The active scenario (built in, e.g. "failing-builds", or from scenariosDir). */
  scenario?: string;
  /** Seeds generated fixtures, ids and fault probabilities (start(): 1). */
  seed?: number;
  /** "manual" by default: time moves only on advance() and await(). */
  clock?: ClockMode;
  /** Where the clock starts (manual and auto default: 2026-01-01T00:00:00Z). */
  clockStart?: string | Date;
  /** The control token: start() sets it (--control-token), connect() sends it. */
  controlToken?: string;
}

/** Options of start(). */
export interface StartOptions extends WorldOptions {
  /** A fixture file or directory replacing the embedded fixtures (--fixtures). */
  fixtures?: string;
  /** A directory of scenario YAML files, added to the built-in ones (--scenarios). */
  scenariosDir?: string;
  /** Serve HTTPS on another free port too (tlsUrl), certificates from a CA kept in memory. Off by default. */
  tls?: boolean;
  /** The hostemu binary to run (default: HOSTEMU_BINARY, else this platform's package). */
  binary?: string;
  /** More serve flags, e.g. ["--rate-limits", "off"]. */
  args?: string[];
  /** Environment variables for the process (HOSTEMU_* ones of this process are not passed on). */
  env?: Record<string, string>;
  /** The emulator's log lines (JSON): true prints them to stderr, a function receives them. */
  log?: boolean | ((line: string) => void);
  /** How long to wait for the binary to listen, in ms (default 10000). */
  startTimeout?: number;
}

/** Options of connect(). */
export interface ConnectOptions extends WorldOptions {
  /** The namespace's fixtures: a fixture document as an object, or a .json file. */
  fixtures?: string | Record<string, unknown>;
  /** Scenario documents (YAML strings) this namespace knows beside the server's; name one in `scenario` to start with it. */
  scenarios?: string[];
  /** Drive the default namespace, shared by everyone, instead of creating one. */
  shared?: boolean;
  /** The decryption service's base URL when it has its own address (default: url). */
  cipherUrl?: string;
  /** How long to wait for /_emulator/health, in ms (default 5000). */
  healthTimeout?: number;
}

/** The faults of one world. */
export interface Faults {
  /** Adds a fault; resolves with its id. It stays until removed or reset(). */
  add(spec: FaultSpec): Promise<string>;
  /** Removes one (HostemuError fault_not_found if there is none). */
  remove(id: string): Promise<void>;
  /** Removes every fault added through the API. */
  clear(): Promise<void>;
  /** The faults in force, the API's and the active scenario's. */
  list(): Promise<FaultView[]>;
  /** How many times the fault has fired (HostemuError fault_not_found once it is gone). Fetches this fault alone: GET /_emulator/faults/{id}. */
  hits(id: string): Promise<number>;
  /** While the fault has no hits, what almost matched it (up to 5 of the newest 200 journaled requests); [] once it has fired (HostemuError fault_not_found once it is gone). Fetches this fault alone: one fault's near misses are weighed, not every fault's as list() does. */
  nearMisses(id: string): Promise<NearMiss[]>;
}

/** One running hostemu, from start() or connect(). Every method rejects with a HostemuError when the control API answers an error. */
export interface Emulator {
  /** The hosting service's base URL (paths start with /v1; the control API is under /_emulator). */
  readonly url: string;
  /** The decryption service's base URL. */
  readonly cipherUrl: string;
  /** The HTTPS listener of start({ tls: true }), else "". */
  readonly tlsUrl: string;
  /** The namespace of connect() ("ns_…"), else "". */
  readonly namespace: string;
  /** The world's hosting tokens. */
  readonly tokens: Tokens;
  /** The world's decryption API key. */
  readonly cipherKey: string;
  /** The world's injected faults: add, remove, clear, list, hits, nearMisses. */
  readonly faults: Faults;
  /** The emulated time (RFC 3339). */
  now(): Promise<string>;
  /** Moves a manual clock forward; resolves with the new time once every transition due by then has happened. */
  advance(by: Duration): Promise<string>;
  /** Waits (on a manual clock: advances) until the condition holds. */
  await(condition: AwaitCondition): Promise<AwaitResult>;
  /** Forces a deployment's status now (its lifecycle's rest is dropped); error is what a status "error" reports (default build_failed). */
  forceStatus(kind: "deployment", id: string, status: DeploymentStatus, error?: ForcedError): Promise<void>;
  /** Forces a domain's status now; error is what a status "error" reports. */
  forceStatus(kind: "domain", hostname: string, status: DomainStatus, error?: ForcedError): Promise<void>;
  /** The journaled requests the filter selects, oldest first. */
  requests(filter?: RequestFilter): Promise<JournalEntry[]>;
  /** When the filter selects no journaled request, what almost matched it (GET /_emulator/requests' near_misses); [] when it selects one or nothing came close. */
  requestNearMisses(filter: RequestFilter): Promise<NearMiss[]>;
  /** Empties the journal. */
  clearRequests(): Promise<void>;
  /** Mints a hosting token of scope. */
  token(scope: Scope): Promise<string>;
  /** Makes the named scenario active. */
  useScenario(name: string): Promise<void>;
  /** Back to the start-up world. */
  reset(): Promise<void>;
  /** The whole state of the world. */
  state(): Promise<WorldState>;
  /** Replaces the state of the world. */
  setState(state: WorldState): Promise<void>;
  /** The world's failure bundle, written to file (resolves with its absolute path). */
  bundle(file: string): Promise<string>;
  /** The world's failure bundle as bytes. */
  bundle(): Promise<Uint8Array>;
  /** Replaces the world with a failure bundle's: a file's path, or its bytes. */
  loadBundle(fileOrBytes: string | Uint8Array): Promise<void>;
  /** Writes the bundle to $HOSTEMU_ARTIFACTS/<name>.hostemu.tgz and prints the replay command; resolves with the path. */
  saveBundle(name: string): Promise<string>;
  /** Which parts of the API the world has seen. */
  /**
   * `ignore`: rows left out of the totals and listed as ignored, as `hostemu coverage
   * --ignore` takes them: error codes, operations ("POST /v1/files"), edges.
   */
  coverage(options?: { namespaces?: "all"; ignore?: string | string[] }): Promise<Coverage>;
  /** Starts counting the world's coverage afresh. */
  resetCoverage(): Promise<void>;
  /**
   * fetch for the edge: opens a deployment's url, or a custom domain's, exactly as the API
   * gave it (*.hostemu.localhost need not resolve), trusting the emulator's CA alone and
   * checking certificates at the emulator's time. Follows redirects unless redirect is
   * "manual", which gives the 3xx answer itself.
   */
  fetch: GlobalFetch;
  /** Stops start()'s process or deletes connect()'s namespace; idempotent. */
  close(): Promise<void>;
  /** close(), for `await using emu = await start()` (TypeScript 5.2+, with lib "esnext.disposable" or @types/node 20+; Node with Symbol.asyncDispose: 18.18, 20.4 or later). */
  [Symbol.asyncDispose](): Promise<void>;
}

declare global {
  // Declared as lib.esnext.disposable and @types/node declare it, so that these types
  // check under an older lib too (the same declaration merges with theirs).
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}
