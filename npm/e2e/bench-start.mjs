// Measures start(): the time from the call to a healthy emulator, over N runs one after
// another (default 20); prints the median and the spread as JSON. npm/npm_test.go logs it.
import { start } from "hostemu/testkit";

const n = Number(process.argv[2] || 20);
const ms = [];
for (let i = 0; i < n; i++) {
  const t0 = performance.now();
  const emu = await start();
  ms.push(performance.now() - t0);
  await emu.close();
}
ms.sort((a, b) => a - b);
const at = (q) => Number(ms[Math.min(ms.length - 1, Math.floor(q * ms.length))].toFixed(1));
console.log(JSON.stringify({ runs: n, median_ms: at(0.5), min_ms: at(0), p90_ms: at(0.9), max_ms: at(1) }));
