// Tests of the benchmark harness itself: the peer judges real processes as
// the IDE's algorithm does (flaw included), the generator plants the mix it
// describes, the push phase's events reach the sidecar as the events they
// stand for, the report judges each goal at its bound, and the parsers and
// statistics read what they are given.
// Run: node --test bench/   (needs Go for the fake CLI, and Linux's /proc for the tests on real processes)

import assert from 'node:assert/strict';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { lineChart } from './lib/chart.mjs';
import { BUDGETS, GOALS } from './lib/goals.mjs';
import { metricMedian, parseGoBench } from './lib/gobench.mjs';
import { cleanup, kill, killAndWait, killGroup, liveChildren, tempDir } from './lib/procs.mjs';
import { render } from './lib/report.mjs';
import { Sidecar } from './lib/sidecar.mjs';
import { buildFakeCLI, generate, mixFor, nameLine, startHolder } from './lib/statedir.mjs';
import { median, quantile, ratios } from './lib/stats.mjs';
import { isAlive, listSessionLocks } from './peer/sessionLocks.mjs';

// The generator picks dead pids from /proc (pid_max) and boot time from /proc/uptime, and
// the peer runs ps: Linux's; on macOS and Windows these tests skip, the pure ones below still run.
const noProc = !existsSync('/proc/sys/kernel/pid_max') && 'the generator reads /proc (Linux only)';

describe('peer and generator on real processes', { skip: noProc }, () => {
  let sd;
  let peer;
  let bin;
  before(async () => {
    bin = await buildFakeCLI(tempDir('slbench-test-'));
    sd = await generate({ count: 200, copilotBin: bin });
    peer = new Map((await listSessionLocks(sd.stateDir)).map((s) => [s.id, s]));
  });
  after(cleanup);

  test('the generator plants the mix it reports', () => {
    const kinds = {};
    for (const s of sd.sessions) (kinds[s.kind] ??= []).push(s);
    assert.equal(kinds.live.length, sd.mix.live);
    assert.equal(kinds.reused.length, sd.mix.reused);
    assert.equal(kinds.dead.length, sd.mix.dead);
    for (const s of kinds.free) assert.deepEqual(readdirSync(s.dir).filter((f) => f.startsWith('inuse.')), []);
    for (const s of kinds.dead) assert.equal(isAlive(s.pids[0]), false, `dead pid ${s.pids[0]} is alive`);
    for (const s of [...kinds.live, ...kinds.reused]) assert.equal(isAlive(s.pids[0]), true);
    for (const s of kinds.live) {
      assert.ok(existsSync(join(s.dir, `inuse.${s.pids[0]}.lock`)));
      assert.equal(existsSync(join(s.dir, `inuse.${s.pids[0]}.hold`)), !sd.holders.find((h) => h.pid === s.pids[0]).old);
    }
  });

  // The listing table's "ours agrees with the planted truth" row rests on this: a fake CLI
  // the sidecar does not recognise (one merely named copilot) reads unknown, not inUse.
  test('the sidecar calls every planted session what the generator expects', async () => {
    await sd.settled(); // young locks read starting, which proves nothing about recognition
    const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: tempDir('slbench-log-') });
    try {
      const res = await side.send('listSessions', {});
      const got = new Map(res.sessions.map((s) => [s.id, s.state]));
      const wrong = sd.sessions.filter((s) => got.get(s.id) !== s.expect).map((s) => `${s.kind}${s.pids?.length ? ` pid ${s.pids[0]}` : ''}: ${got.get(s.id)}, expected ${s.expect}`);
      assert.deepEqual(wrong, []);
    } finally {
      await side.close();
    }
  });

  test('the peer calls live holders in use and dead or unrelated pids free', () => {
    for (const s of sd.sessions) {
      const p = peer.get(s.id);
      assert.ok(p, `peer missed session ${s.id}`);
      if (s.kind === 'live') assert.equal(p.inUse, true, `live ${s.id}`);
      if (s.kind === 'dead' || s.kind === 'free') assert.equal(p.inUse, false, `${s.kind} ${s.id}`);
      if (s.kind === 'reused' && !s.copilotPid) assert.equal(p.inUse, false, `reused (unrelated) ${s.id}`);
    }
  });

  test('the peer is fooled by a pid reused by another copilot process', () => {
    const fooling = sd.sessions.filter((s) => s.kind === 'reused' && s.copilotPid);
    assert.ok(fooling.length > 0, 'the 200-session mix should hold a reused copilot pid');
    for (const s of fooling) assert.equal(peer.get(s.id).inUse, true);
  });

  // The push phase's young kill and orphan rows rest on these: a CLI killed
  // as soon as it is pushed in use is pushed stale, and a launched CLI is seen
  // with its launcher alive and is pushed orphaned (not exited) once the
  // launcher dies, which it would not be if it had a terminal or died too.
  test('a young CLI killed is pushed stale, and a launched CLI whose launcher dies is pushed orphaned', async () => {
    const free = sd.sessions.filter((s) => s.kind === 'free');
    const launched = await startHolder(bin, sd.stateDir, free[0].id, { launched: true });
    await sd.settled(); // the launched CLI's lock must be past the settle window, as the push phase's are
    const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: tempDir('slbench-log-') });
    const changed = (p, id) => (p?.changed ?? []).find((s) => s.id === id);
    try {
      const first = (await side.request('listSessions', {})).result.sessions.find((s) => s.id === free[0].id);
      assert.equal(first?.holders?.[0]?.launcher?.alive, true, `launcher not seen alive: ${JSON.stringify(first?.holders)}`);
      assert.equal(first.holders[0].launcher.pid, launched.child.pid);

      let from = side.notes.length;
      const young = await startHolder(bin, sd.stateDir, free[1].id);
      await side.waitNote((p) => changed(p, free[1].id)?.state === 'inUse', { from });
      from = side.notes.length;
      kill(young.child);
      const stale = await side.waitNote((p) => changed(p, free[1].id)?.state === 'stale', { from, timeoutMs: 1000 });
      assert.equal(changed(stale.params, free[1].id).holders[0].reason, 'process-exited');
      await killAndWait(young.child);

      from = side.notes.length;
      process.kill(launched.child.pid, 'SIGKILL');
      const note = await side.waitNote((p) => changed(p, free[0].id)?.holders?.[0]?.orphaned === true, { from, timeoutMs: 1000 });
      assert.equal(changed(note.params, free[0].id).state, 'inUse', 'an orphan is live');
    } finally {
      await side.close();
      killGroup(launched.child);
    }
  });

  test('cleanup kills every process the harness started', () => {
    assert.ok(liveChildren() > 0);
    const pids = sd.holders.map((h) => h.pid);
    cleanup();
    // Killed, a holder is a zombie until Node reaps it, which on a busy
    // machine may take a while: wait for that, not for a fixed time.
    const deadline = Date.now() + 10_000;
    const wait = () =>
      pids.some(isAlive) && Date.now() < deadline ? new Promise((resolve) => setTimeout(resolve, 20)).then(wait) : undefined;
    return wait().then(() => {
      for (const pid of pids) assert.equal(isAlive(pid), false, `holder ${pid} survived cleanup`);
    });
  });
});

test('mixFor keeps half the locks on live pids and caps live holders', () => {
  for (const count of [100, 1000, 10000]) {
    const m = mixFor(count);
    assert.equal(m.live + m.reused + m.dead, m.locked);
    assert.equal(m.locked, count / 10);
    assert.equal(m.live + m.reused, m.locked / 2);
    assert.ok(m.live <= 32);
    assert.equal(m.reusedCopilot + m.reusedUnrelated, m.reused);
  }
  assert.deepEqual(mixFor(10000).live, 32);
  assert.deepEqual(mixFor(5, { liveCap: 0 }).live, 0);
});

test('nameLine quotes a quarter of the names singly and one in twenty doubly, as the CLI would', () => {
  const lines = Array.from({ length: 1000 }, (_, i) => nameLine(i));
  const single = lines.filter((l) => l.line.startsWith("name: '"));
  const double = lines.filter((l) => l.line.startsWith('name: "'));
  assert.equal(single.length, 250);
  assert.equal(double.length, 50);
  assert.ok(single.some((l) => l.line.includes("''")));
  for (const l of single) assert.equal(l.line.slice(7, -1).replaceAll("''", "'"), l.name);
  for (const l of double) assert.equal(JSON.parse(l.line.slice(6)), l.name);
  for (const l of lines) if (!single.includes(l) && !double.includes(l)) assert.equal(l.line, `name: ${l.name}`);
});

test('parseGoBench reads the benchstat format', () => {
  const text = [
    'goos: linux',
    'BenchmarkProbe/hold-2         \t   23821\t     45217 ns/op\t    2282 B/op\t      29 allocs/op',
    'BenchmarkProbe/hold-2         \t   23000\t     40000 ns/op\t    2282 B/op\t      29 allocs/op',
    'BenchmarkProbe/hold-2         \t   23000\t     50000 ns/op\t    2282 B/op\t      29 allocs/op',
    'BenchmarkList/sessions=1000/cold-2     \t      15\t 167798221 ns/op\t16405418 B/op\t  188752 allocs/op',
    'BenchmarkPSSpawn \t 82 \t 15859744 ns/op',
    '    bench_test.go:99: 1000 sessions: map[live:20]',
    'PASS',
  ].join('\n');
  const b = parseGoBench(text);
  assert.deepEqual([...b.keys()], ['Probe/hold', 'List/sessions=1000/cold', 'PSSpawn']);
  assert.equal(b.get('Probe/hold').samples.length, 3);
  assert.equal(metricMedian(b.get('Probe/hold'), 'ns/op'), 45217);
  assert.equal(metricMedian(b.get('List/sessions=1000/cold'), 'allocs/op'), 188752);
  assert.equal(metricMedian(b.get('PSSpawn'), 'ns/op'), 15859744);
  assert.ok(Number.isNaN(metricMedian(b.get('PSSpawn'), 'B/op')));
});

test('median, quantile and pairwise ratios', () => {
  assert.equal(median([3, 1, 2]), 2);
  assert.equal(median([4, 1, 3, 2]), 2.5);
  assert.equal(quantile([1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 0.5), 5);
  assert.equal(quantile([5, 1, 9], 0.99), 9);
  assert.deepEqual(ratios([10, 20, 30], [2, 4]), [5, 5]);
});

test('lineChart draws every series on log axes', () => {
  const svg = lineChart({
    title: 'a < b',
    series: [
      { name: 'peer', color: '#f00', points: [[100, 50], [1000, 500], [10000, 5000]] },
      { name: 'ours', color: '#00f', points: [[100, 1], [1000, 2], [10000, NaN]] },
    ],
  });
  assert.match(svg, /^<svg xmlns="http:\/\/www.w3.org\/2000\/svg"/);
  assert.equal((svg.match(/<path /g) ?? []).length, 2);
  assert.equal((svg.match(/<circle /g) ?? []).length, 5, 'a NaN point is left out, not drawn at 0');
  assert.match(svg, /a &lt; b/);
  assert.match(svg, />10,000</);
});

// A run's results as the driver saves them, every figure at the bound its
// goal allows (at is the factor: 1 on the bound, above 1 past it).
function resultsAt(at) {
  const listing = (count, cold, warm) => ({
    count, reps: 1, warmup: 3, warmCalls: 10, mix: mixFor(count), coldCached: [0],
    peer: [cold * 15], cold: [cold * at], coldBare: [cold * at], warm: [warm * at], warmWire: [warm / 2],
    check: { total: count, oursCold: count, oursWarm: count, peer: count, peerFooled: 0 },
  });
  const events = (ms, slow) => ({ n: 1, missed: {}, created: [ms], removed: [ms], killed: [ms], youngKilled: [slow], orphaned: [slow] });
  const bench = (ns, extra = {}) => ({ samples: [{ iterations: 1, metrics: { 'ns/op': ns, ...extra } }] });
  const MiB = 2 ** 20;
  return {
    machine: { loadBefore: [0, 0, 0] }, config: { goCount: 1 }, errors: [],
    goBench: { 'Probe/hold': bench(25e3 * at), PSSpawn: bench(25e3 * 250) },
    listing: [listing(1000, 50, 8), listing(10000, 500, 60)],
    push: { count: 1000, modes: { notify: events(20 * at, 1000 * at), poll: events(1500 * at, 1000 * at) } },
    startup: { count: 1000, status: [20 * at], list: [30] },
    footprint: [1000, 10000].flatMap((count) => ['notify', 'poll'].map((mode) => ({ count, mode, rss: 24 * MiB * at, fds: 255 * at, cpuPct: 0.999 * at }))),
    limits: Object.fromEntries(['disk', 'tmpfs'].map((where) => [where, {
      UnreadListings: bench(1, { 'peak-MiB': 64 * at, 'accepted-%': 100 }),
      'ServeManyDeadLocks/canResume': bench(200e6 * at, { 'peak-MiB': 64 }),
      'ServeManyDeadLocks/reclaimStale': bench(2e9 * at, { 'peak-MiB': 64 }),
      'ServeManyDeadLocks/stat-floor': bench(100e6),
      'ServeManyDeadLocks/unlink-floor': bench(1e9),
    }])),
  };
}

// goalRows reads the two goal tables of a rendered report: name -> mark.
function goalRows(markdown) {
  const rows = new Map();
  for (const line of markdown.split('\n')) {
    const m = /^\| (.*) \| .* \| (✅|❌|–) \|$/.exec(line);
    if (m) rows.set(m[1], m[2]);
  }
  return rows;
}

test('the report holds every budget and goal, met on its bound and missed past it', () => {
  const names = [...BUDGETS, ...GOALS].map(([, name]) => name);
  const met = goalRows(render(resultsAt(1)).markdown);
  assert.deepEqual([...met.keys()], names);
  for (const [name, mark] of met) assert.equal(mark, '✅', name);
  const missed = goalRows(render(resultsAt(1.01)).markdown);
  // Agreement with the truth and missed events do not scale with time.
  const timeless = new Set([GOALS[0][1], GOALS[3][1]]);
  for (const [name, mark] of missed) assert.equal(mark, timeless.has(name) ? '✅' : '❌', name);
});

test('the report names no issue and no layer that is gone, and lists what was not measured', () => {
  const { markdown } = render({ machine: {}, config: { goCount: 1, quick: true, args: ['--quick'] }, errors: [], listing: resultsAt(1).listing.slice(0, 1) });
  assert.doesNotMatch(markdown, /issue \d|delta|whole answer,|fresh: true|Layers|watched trust/i);
  assert.match(markdown, /cold listing of 10,000 sessions ≤ 500 ms \(both ways\) \| not measured in this run \| – \|/);
  assert.match(markdown, /a smoke run/);
});
