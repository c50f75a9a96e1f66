// hostemu/testkit for ESM: the CommonJS module's exports, so that both module systems
// share one implementation, one HostemuError class and one registry of live emulators.
import testkit from "./index.cjs";

export const { start, connect, saveBundlesOnFailure, collectedCoverage, HostemuError, defaultClockStart } = testkit;
