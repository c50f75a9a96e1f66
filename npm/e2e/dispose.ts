// `await using`, as docs/npm.md shows it: type-checked by npm/npm_test.go with tsc
// --strict and lib esnext.disposable (TypeScript 5.2+), the emulator closed at the end
// of the block.
import { start, connect, type Emulator } from "hostemu/testkit";

export async function scoped(): Promise<string> {
  await using emu = await start();
  await using ns: Emulator = await connect(emu.url);
  return ns.namespace;
}
