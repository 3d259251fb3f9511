#!/usr/bin/env node
// Spawn-to-first-answer of the Node client: SessionLocks.spawn() resolves once
// the child has answered its first call (status), which is exactly the time an
// IDE waits before it can ask anything. Not a test: it prints numbers.
//
//   node npm/bench/spawn.mjs [runs] [state-dir]      (binary: SESSIONLOCKS_BINARY or the installed package)
//
// Goal (issue 5): <= 50 ms.

import { createRequire } from 'node:module';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';

const require = createRequire(import.meta.url);
const t0 = performance.now();
const { SessionLocks } = require('../sessionlocks');
const loadMs = performance.now() - t0;

const runs = Math.max(2, Number(process.argv[2] || 30));
const ownDir = !process.argv[3];
const stateDir = process.argv[3] || fs.mkdtempSync(path.join(os.tmpdir(), 'sessionlocks-bench-'));

const spawnMs = [];
const secondMs = [];
for (let i = 0; i < runs; i++) {
  const start = performance.now();
  const client = await SessionLocks.spawn({ stateDir });
  spawnMs.push(performance.now() - start);
  const t = performance.now();
  await client.listSessions();
  secondMs.push(performance.now() - t);
  await client.dispose();
}

const q = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(p * s.length))].toFixed(1);
};
const [first, ...rest] = spawnMs;
console.log(`require('@copilot-ide/sessionlocks'): ${loadMs.toFixed(1)} ms (vscode-jsonrpc is loaded by the first spawn)`);
console.log(`first spawn + first answer, loading vscode-jsonrpc: ${first.toFixed(1)} ms`);
console.log(`spawn + first answer (status): median ${q(rest, 0.5)} ms, p90 ${q(rest, 0.9)} ms, max ${q(rest, 1)} ms over ${rest.length} runs`);
console.log(`next call (listSessions):      median ${q(secondMs, 0.5)} ms, p90 ${q(secondMs, 0.9)} ms`);
console.log(`state dir: ${ownDir ? 'empty (temporary)' : stateDir}`);
if (ownDir) fs.rmSync(stateDir, { recursive: true, force: true });
