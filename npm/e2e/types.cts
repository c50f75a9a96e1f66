// The same types through require (a CommonJS TypeScript file).
import testkit = require("hostemu/testkit");

testkit.saveBundlesOnFailure();

export async function workflow(): Promise<number> {
  const emu: testkit.Emulator = await testkit.start();
  const entries: testkit.JournalEntry[] = await emu.requests();
  await emu.close();
  const cov: testkit.Coverage = await testkit.collectedCoverage();
  return entries.length + cov.totals.operations.seen;
}
