#!/usr/bin/env node
// gen: make a benchmark state dir by hand, to look at with the sidecar, the
// REPL or the peer. Live holders keep running until Ctrl-C, which SIGKILLs
// them: their locks stay behind, as a crashed CLI's do, and so does the dir.
//
//   node bench/gen.mjs --count 1000 [--dir /tmp/state] [--live-cap 32]
//   bin/sessionlocks repl --state-dir /tmp/state/session-state
//   node bench/peer/sessionLocks.mjs /tmp/state/session-state

import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { installCleanup, tempDir } from './lib/procs.mjs';
import { buildFakeCLI, describeMix, generate } from './lib/statedir.mjs';

const { values: opt } = parseArgs({
  options: {
    count: { type: 'string', default: '1000' },
    dir: { type: 'string' },
    'live-cap': { type: 'string', default: '32' },
  },
});
installCleanup();
const root = opt.dir ?? mkdtempSync(join(tmpdir(), 'slbench-gen-'));
const copilotBin = await buildFakeCLI(tempDir('slbench-fakecli-'));
const sd = await generate({ count: Number(opt.count), copilotBin, liveCap: Number(opt['live-cap']), root });
console.log(`${describeMix(sd.mix)}.`);
console.log(`state dir: ${sd.stateDir}`);
for (const kind of ['live', 'reused', 'dead']) {
  const s = sd.sessions.filter((x) => x.kind === kind).slice(0, 3);
  console.log(`  e.g. ${kind}: ${s.map((x) => `${x.id} (pid ${x.pids.join(',')})`).join(', ')}`);
}
console.log(sd.holders.length ? 'live holders running; Ctrl-C stops them (the dir stays).' : 'no live holders; done.');
if (!sd.holders.length) process.exit(0);
setInterval(() => {}, 1 << 30);
