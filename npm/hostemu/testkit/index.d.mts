// Types of hostemu/testkit for ESM (import); index.d.cts says the same for require.
import type { ConnectOptions, Coverage, Emulator, NearMiss, StartOptions } from "./api.js";

export type * from "./api.js";

/** Starts hostemu in a process of its own on 127.0.0.1, on a free port (manual clock at 2026-01-01T00:00:00Z, seed 1, unless told); resolves once it is healthy. */
export declare function start(options?: StartOptions): Promise<Emulator>;
/** Drives the hostemu running at url (its base URL, without /v1) in a namespace of its own, deleted by close(). */
export declare function connect(url: string, options?: ConnectOptions): Promise<Emulator>;
/**
 * Saves the world of a failed test: registers an afterEach hook that, when the test
 * failed, writes the bundle of every emulator open or closed during it as
 * $HOSTEMU_ARTIFACTS/<test name>.hostemu.tgz and prints the replay command. Pass the
 * runner's afterEach (node:test, vitest); without it, the global one (Jest).
 */
export declare function saveBundlesOnFailure(hooks?: { afterEach: (fn: () => unknown) => unknown }): void;
/**
 * The coverage of every world of this run added up, as the Go testkit's
 * CollectedCoverage(): each world close() ended (start()'s and connect()'s, as it stood
 * just before), each still open (as it stands now) and, when HOSTEMU_COVERAGE_DIR names a
 * directory, each world the run's other processes and workers closed. A shared
 * connect() is not counted.
 */
export declare function collectedCoverage(): Promise<Coverage>;
/** The manual clock's default start, 2026-01-01T00:00:00Z. */
export declare const defaultClockStart: string;
/** An error answer of hostemu's control API. */
export declare class HostemuError extends Error {
  /** The HTTP status. */
  readonly status: number;
  /** The error envelope's code, e.g. "await_timeout", "fault_not_found". */
  readonly code: string;
  /** The control call's method. */
  readonly method: string;
  /** The control call's path, e.g. /_emulator/await (under /_emulator/namespaces/ns_… for connect()'s). */
  readonly path: string;
  /** An await_timeout of a requests condition: the journaled requests that almost matched it (its message lists them too). */
  readonly nearMisses?: NearMiss[];
}
