#!/usr/bin/env node
// The benchmark driver behind `make bench`: it measures the sidecar and the
// peer (the IDE's kill+ps algorithm, bench/peer/sessionLocks.mjs) on the same
// generated state dirs in one run, prints the tables and writes BENCHMARKS.md
// and bench/chart.svg.
//
//   node bench/run.mjs                 full run: 100, 1,000 and 10,000 sessions (about 6-10 minutes on 2 cores)
//   node bench/run.mjs --quick         a smoke run: 100 and 1,000 sessions, few repetitions, -count 1
//   node bench/run.mjs --only listing,push --sizes 100 --no-write
//   node bench/run.mjs --from-json bin/bench-results.json   re-render only
//
// Phases (--only, comma-separated): go (the engine's go test -bench), probe
// (the peer's per-lock cost), listing (peer vs ours at --sizes, plus idle
// footprint at >= 1,000), push (notification latency: file events, kills,
// young kills, launchers' deaths), startup, binaries
// (make cross), limits (the server against a peer that never reads and a
// session of 100,000 dead locks, through the binary). Other flags: --reps N (listing repetitions, default 10),
// --reps-big N (at 10,000 sessions, default 5), --warm N (measured repeated
// calls per server, default 10), --warmup N (calls before those, not
// measured, default 3), --go-count N, --go-bench FILE (parse saved go test output instead
// of running it), --push-samples N, --poll-samples N, --json FILE (raw
// results, default bin/bench-results.json).
//
// A phase that fails is reported as not measured and the run exits 1;
// BENCHMARKS.md is then left alone unless --write is given, as it is after a
// --quick run. Set
// SESSIONLOCKS_BINARY to measure another build, SLBENCH_CLIENT=raw to bypass
// the typed client.

import { execFileSync } from 'node:child_process';
import { readFileSync, readdirSync, statSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { parseGoBench, runGoBench } from './lib/gobench.mjs';
import { cleanup, installCleanup, killAndWait, removeDir, stopAll, tempDir } from './lib/procs.mjs';
import { measureListing } from './lib/listing.mjs';
import { measurePush } from './lib/push.mjs';
import { BINARY, CLIENT, cpuSeconds, procUsage, Sidecar } from './lib/sidecar.mjs';
import { buildFakeCLI, deadPIDs, generate, REPO, run, SETTLE_MS, startHolder, startSleeper } from './lib/statedir.mjs';
import { median, now, sleep } from './lib/stats.mjs';
import { isAlive, isLockLive } from './peer/sessionLocks.mjs';
import { render } from './lib/report.mjs';

const { values: opt } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    sizes: { type: 'string' },
    reps: { type: 'string' },
    'reps-big': { type: 'string' },
    warm: { type: 'string' },
    warmup: { type: 'string' },
    only: { type: 'string' },
    'go-count': { type: 'string' },
    'go-bench': { type: 'string' },
    'push-samples': { type: 'string' },
    'poll-samples': { type: 'string' },
    write: { type: 'boolean', default: false },
    'no-write': { type: 'boolean', default: false },
    'from-json': { type: 'string' },
    json: { type: 'string', default: join(REPO, 'bin', 'bench-results.json') },
  },
});

const quick = opt.quick;
const cfg = {
  sizes: (opt.sizes ?? (quick ? '100,1000' : '100,1000,10000')).split(',').map(Number),
  reps: Number(opt.reps ?? (quick ? 3 : 10)),
  repsBig: Number(opt['reps-big'] ?? 5), // at 10,000 sessions the peer takes seconds per listing
  warm: Number(opt.warm ?? 10), // measured repeated calls per server, at every size
  // Calls made and not measured between the cold one and the warm ones. At
  // 10,000 sessions an answer is ~20 MB of objects in the client, and the
  // first few are slowed by V8 growing its heap to fit them: the median of
  // calls straight after the cold one measured that more than the steady
  // state the IDE lives in.
  warmup: Number(opt.warmup ?? 3),
  goCount: Number(opt['go-count'] ?? (quick ? 1 : 3)),
  pushSamples: Number(opt['push-samples'] ?? (quick ? 8 : 30)),
  pollSamples: Number(opt['poll-samples'] ?? (quick ? 3 : 16)), // p50 of a delay spread over two poll intervals: 8 samples gave 0.6-1.3 s on one build
  phases: new Set((opt.only ?? 'go,probe,listing,push,startup,limits,binaries').split(',')),
};

const log = (...a) => process.stderr.write(a.join(' ') + '\n');

if (opt['from-json']) {
  writeOutputs(JSON.parse(readFileSync(opt['from-json'], 'utf8')), !opt['no-write']);
  process.exit(0);
}

installCleanup();
const scratch = tempDir('slbench-run-');
const R = { machine: machine(), config: { ...cfg, quick, args: process.argv.slice(2), phases: [...cfg.phases] }, errors: [], seconds: {} };
let copilotBin;

await phase('setup', async () => {
  statSync(BINARY);
  copilotBin = await buildFakeCLI(scratch);
  R.machine.sidecarVersion = sh(BINARY, ['version']);
  R.machine.client = CLIENT;
});
const phases = { go: goPhase, probe: probePhase, listing: listingPhase, push: pushPhase, startup: startupPhase, limits: limitsPhase, binaries: binariesPhase };
for (const [name, fn] of Object.entries(phases)) {
  if (R.errors.length && R.errors[0].phase === 'setup') break; // nothing can run without the binary and the fake CLI
  if (cfg.phases.has(name)) await phase(name, fn);
}
R.machine.loadAfter = os.loadavg().map((l) => +l.toFixed(2));

mkdirSync(join(REPO, 'bin'), { recursive: true });
writeFileSync(opt.json, JSON.stringify(R, null, 1));
// A smoke run's figures are not the ones to publish: it writes BENCHMARKS.md only when asked to.
writeOutputs(R, opt.write || (!opt['no-write'] && !quick && R.errors.length === 0));
cleanup();
process.exit(R.errors.length ? 1 : 0);

// ---------------------------------------------------------------------------

async function phase(name, fn) {
  const t0 = now();
  log(`\n== ${name}`);
  try {
    await fn();
    log(`== ${name} done in ${((now() - t0) / 1000).toFixed(1)} s`);
  } catch (err) {
    log(`== ${name} FAILED: ${err?.stack ?? err}`);
    R.errors.push({ phase: name, message: String(err?.message ?? err).split('\n')[0] });
  } finally {
    R.seconds[name] = +((now() - t0) / 1000).toFixed(1);
  }
}

function sh(cmd, args) {
  try {
    return execFileSync(cmd, args, { encoding: 'utf8', cwd: REPO, stdio: ['ignore', 'pipe', 'ignore'] }).trim();
  } catch {
    return 'unknown';
  }
}

function machine() {
  const cpuinfo = readFileSync('/proc/cpuinfo', 'utf8');
  return {
    cpu: /model name\s*:\s*(.*)/.exec(cpuinfo)?.[1] ?? os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memGiB: +(os.totalmem() / 2 ** 30).toFixed(1),
    kernel: `${os.type()} ${os.release()} ${os.arch()}`,
    go: sh('go', ['env', 'GOVERSION']),
    node: process.version,
    commit: sh('git', ['describe', '--always', '--dirty']),
    date: new Date().toISOString().replace(/\.\d+Z$/, 'Z'),
    loadBefore: os.loadavg().map((l) => +l.toFixed(2)),
  };
}

function writeOutputs(results, write) {
  const { markdown, svg, text } = render(results);
  process.stdout.write('\n' + text + '\n');
  if (!write) {
    const why = results.errors?.length ? 'some phases failed' : results.config?.quick ? 'a --quick run' : '--no-write';
    log(`bench: ${why}: BENCHMARKS.md not written (use --write to force)`);
    return;
  }
  writeFileSync(join(REPO, 'BENCHMARKS.md'), markdown);
  writeFileSync(join(REPO, 'bench', 'chart.svg'), svg);
  log('bench: wrote BENCHMARKS.md and bench/chart.svg');
}

// go: the engine's own benchmarks (per-probe cost, ps spawn, listings).
async function goPhase() {
  const text = opt['go-bench'] ? readFileSync(opt['go-bench'], 'utf8') : await runGoBench({ cwd: REPO, count: cfg.goCount, echo: process.stderr });
  R.goBench = Object.fromEntries(parseGoBench(text));
  if (Object.keys(R.goBench).length === 0) throw new Error('go test -bench printed no benchmark lines');
}

// probe: the peer's per-lock probe, in Node as the IDE runs it.
async function probePhase() {
  const root = tempDir('slbench-probe-');
  const h = await startHolder(copilotBin, root, 'probe-session');
  const unrelated = startSleeper();
  const [dead] = deadPIDs(1, new Set([h.pid, unrelated.pid]));
  for (let i = 0; i < 5; i++) await isLockLive(h.pid);
  const timeIt = async (pid, n) => {
    const xs = [];
    for (let i = 0; i < n; i++) {
      const t0 = now();
      await isLockLive(pid);
      xs.push(now() - t0);
    }
    return xs;
  };
  const live = await timeIt(h.pid, quick ? 20 : 100);
  const other = await timeIt(unrelated.pid, quick ? 10 : 40);
  // A dead pid costs one kill(2); time batches of 1,000 to get above the clock's resolution.
  const deadBatches = [];
  for (let b = 0; b < 9; b++) {
    const t0 = now();
    for (let i = 0; i < 1000; i++) isAlive(dead);
    deadBatches.push((now() - t0) / 1000);
  }
  R.peerProbe = { liveMs: live, unrelatedMs: other, deadMs: deadBatches };
  log(`peer probe: live copilot ${median(live).toFixed(2)} ms, unrelated ${median(other).toFixed(2)} ms, dead ${(median(deadBatches) * 1000).toFixed(2)} µs`);
  await killAndWait(h.child);
  await killAndWait(unrelated.child);
  removeDir(root);
}

// listing: peer vs ours, cold and warm, at each size; footprint at >= 1,000.
async function listingPhase() {
  R.listing = [];
  R.footprint = [];
  for (const count of cfg.sizes) {
    log(`-- ${count} sessions: generating`);
    const sd = await generate({ count, copilotBin });
    log(`   generated in ${(sd.generateMs / 1000).toFixed(1)} s; waiting out the ${SETTLE_MS / 1000} s settle window`);
    await sd.settled();
    const reps = count >= 10000 ? cfg.repsBig : cfg.reps;
    const row = await measureListing(sd, { reps, warm: cfg.warm, warmup: cfg.warmup, scratch, log });
    R.listing.push(row);
    if (count >= 1000) {
      try {
        await footprint(sd, count);
      } catch (err) {
        log(`   footprint at ${count} FAILED: ${err?.stack ?? err}`);
        R.errors.push({ phase: `footprint ${count}`, message: String(err?.message ?? err).split('\n')[0] });
      }
    }
    await stopAll([...sd.holders, ...sd.sleepers]);
    removeDir(sd.root);
  }
}

/** footprint: idle RSS, open descriptors and idle CPU of a server that has listed count sessions. */
async function footprint(sd, count) {
  for (const mode of ['notify', 'poll']) {
    const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: scratch, args: ['--watch', mode] });
    try {
      await side.request('listSessions', {});
      await sleep(1500);
      const t0 = cpuSeconds(side.pid);
      const w0 = now();
      await sleep(quick ? 2000 : 4000);
      const cpuPct = ((cpuSeconds(side.pid) - t0) / ((now() - w0) / 1000)) * 100;
      const { rss, peak, fds } = procUsage(side.pid);
      const status = (await side.request('status')).result;
      R.footprint.push({ count, mode, rss, peak, fds, cpuPct, watch: status?.watch ?? null });
      log(`   footprint ${count} ${mode}: RSS ${(rss / 2 ** 20).toFixed(1)} MiB, ${fds} fds, idle CPU ${cpuPct.toFixed(2)}%`);
    } finally {
      await side.close();
    }
  }
}

// push: time from a file operation, a SIGKILL or a launcher's death to the matching sessionsChanged.
async function pushPhase() {
  const modes = [
    ['notify', cfg.pushSamples, 5000],
    ['poll', cfg.pollSamples, 10000],
  ];
  R.push = await measurePush({ copilotBin, scratch, modes, log });
}

// startup: spawn to the first answer (status), then the first listSessions over 1,000 sessions.
async function startupPhase() {
  const sd = await generate({ count: 1000, copilotBin, liveCap: 8 });
  await sd.settled();
  const n = quick ? 5 : 20;
  R.startup = { count: 1000, mix: sd.mix, status: [], list: [] };
  for (let i = 0; i < n; i++) {
    const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: scratch });
    try {
      R.startup.status.push(side.readyAt - side.spawnedAt);
      await side.request('listSessions', {});
      R.startup.list.push(now() - side.spawnedAt);
    } finally {
      await side.close();
    }
  }
  log(`   spawn -> status ${median(R.startup.status).toFixed(1)} ms, spawn -> listSessions(1,000) ${median(R.startup.list).toFixed(1)} ms`);
  await stopAll([...sd.holders, ...sd.sleepers]);
  removeDir(sd.root);
}

// limits: the server's time and peak RSS against a client that never reads
// its answers and a session of 100,000 dead locks (cmd/sessionlocks
// limits_bench_test.go). The dead locks are measured where TMPDIR is (a
// disk) and, where there is one, on tmpfs: removing 100,000 files costs what
// the file system makes it cost, which the unlink-floor row measures alone.
async function limitsPhase() {
  const bench = (pattern, env = process.env) =>
    runGoBench({ cwd: REPO, pkg: './cmd/sessionlocks/', pattern, count: 1, extra: ['-benchtime', '1x'], env, echo: process.stderr });
  R.limits = { disk: Object.fromEntries(parseGoBench(await bench('UnreadListings|ServeManyDeadLocks'))) };
  const shm = '/dev/shm';
  try {
    statSync(shm);
  } catch {
    return;
  }
  const tmp = join(shm, `slbench-limits-${process.pid}`);
  mkdirSync(tmp, { recursive: true });
  try {
    R.limits.tmpfs = Object.fromEntries(parseGoBench(await bench('ServeManyDeadLocks', { ...process.env, TMPDIR: tmp })));
  } finally {
    removeDir(tmp);
  }
}

// binaries: the shipped binaries, as `make cross` builds them (CGO_ENABLED=0 -trimpath -s -w).
async function binariesPhase() {
  try {
    await run('make', ['-s', 'cross'], { cwd: REPO });
  } catch (err) {
    // Several people share this tree and its build cache; a build that lost a race with another is worth one retry.
    log(`   make cross failed, retrying once: ${String(err.message).split('\n').slice(0, 3).join(' | ')}`);
    await run('make', ['-s', 'cross'], { cwd: REPO });
  }
  const base = join(REPO, 'dist', 'bin');
  R.binaries = readdirSync(base)
    .sort()
    .map((platform) => {
      const f = readdirSync(join(base, platform)).find((n) => n.startsWith('sessionlocks'));
      return { platform, bytes: statSync(join(base, platform, f)).size };
    });
}
