// render turns the results of one run into BENCHMARKS.md, bench/chart.svg and
// the text `make bench` prints. It works from the JSON the driver saves, so
// the report can be re-rendered without re-running (run.mjs --from-json).
// Each section fills the rows of the goal tables it measures; a row no phase
// filled reads "not measured".

import { lineChart } from './chart.mjs';
import { metricMedian } from './gobench.mjs';
import { describeMix } from './statedir.mjs';
import { fmtBytes, fmtMs, fmtRatio, median, quantile, ratios } from './stats.mjs';

const PEER = '#c0392b';
const OURS = '#1f618d';
const MiB = 2 ** 20;

/**
 * BUDGETS are what the lean code promises, each measured through the binary
 * (and, for listings and pushes, the typed client); GOALS the rest of what the
 * product promises. Both in the order the report lists them.
 */
export const BUDGETS = [
  ['cold1k', 'cold listing of 1,000 sessions ≤ 50 ms (as the IDE spawns it, and with `--no-watch`)'],
  ['coldPeer', 'cold listing of 1,000 sessions ≥ 15x faster than the peer in the same run (both ways)'],
  ['cold10k', 'cold listing of 10,000 sessions ≤ 500 ms (both ways)'],
  ['warm1k', 'warm listing (the whole answer) of 1,000 sessions ≤ 8 ms'],
  ['warm10k', 'warm listing (the whole answer) of 10,000 sessions ≤ 60 ms'],
  ['pushFile', 'lock created / removed → `sessionsChanged` p50 ≤ 20 ms (notify)'],
  ['pushKill', 'holder SIGKILLed → stale pushed p50 ≤ 20 ms (notify)'],
  ['rss1k', 'RSS ≤ 24 MiB, idle after listing 1,000 sessions (notify and poll)'],
  ['unread', 'a client that never reads (10,000 pipelined `listSessions` over 3,000 sessions): peak RSS ≤ 64 MiB'],
];
export const GOALS = [
  ['truth', 'every session\'s state and name agree with what was planted, cold and warm, at every size'],
  ['youngKill', 'CLI SIGKILLed within its settle window (its lock young) → stale pushed ≤ 1 s, p50 and max (notify and poll)'],
  ['orphan', 'a live holder\'s launcher SIGKILLed → orphaned pushed p50 ≤ 1 s (notify and poll)'],
  ['missed', 'no event missed (push latency, every event and mode)'],
  ['poll', 'poll mode: lock created, lock removed, holder SIGKILLed, each pushed p50 ≤ 1.5 s'],
  ['spawn', 'spawn to first answer (`status`) ≤ 20 ms'],
  ['cpuNotify', 'idle CPU < 1% watching 10,000 sessions (notify: auto on Linux)'],
  ['cpuPoll', 'idle CPU < 1% watching 10,000 sessions (poll: auto on macOS and Windows)'],
  ['fdsPoll', 'poll mode: 10,000 sessions watched with fewer than 256 open descriptors'],
  ['probe', 'uncached probe of a live CLI (`.hold`) ≤ 25 µs and ≥ 250x faster than a `ps` spawn'],
  ['canResume-disk', '`canResume` of one session with 100,000 dead locks ≤ 200 ms, peak RSS ≤ 64 MiB (disk)'],
  ['reclaim-disk', '`reclaimStale` of those 100,000 dead locks ≤ 2 s, peak RSS ≤ 64 MiB (disk)'],
  ['canResume-tmpfs', '`canResume` of one session with 100,000 dead locks ≤ 200 ms, peak RSS ≤ 64 MiB (tmpfs)'],
  ['reclaim-tmpfs', '`reclaimStale` of those 100,000 dead locks ≤ 2 s, peak RSS ≤ 64 MiB (tmpfs)'],
];

/** goFind returns the first Go benchmark whose name matches one of res. */
function goFind(goBench, ...res) {
  if (!goBench) return null;
  for (const re of res) for (const [name, b] of Object.entries(goBench)) if (re.test(name)) return { name, ...b };
  return null;
}

const nsToMs = (ns) => ns / 1e6;
const goMs = (b) => nsToMs(metricMedian(b, 'ns/op'));
const n = (x) => x.toLocaleString('en-US');

/** table renders a Markdown table; align has one letter per column (l, r, c), default: first left, rest right. */
function table(head, rows, align = 'l' + 'r'.repeat(head.length - 1)) {
  const rule = { l: ' --- ', r: ' ---: ', c: ' :---: ' };
  const out = [`| ${head.join(' | ')} |`, `|${head.map((_, i) => rule[align[i] ?? 'r']).join('|')}|`];
  for (const r of rows) out.push(`| ${r.join(' | ')} |`);
  return out.join('\n');
}

const goalMark = (ok) => (ok === null ? '–' : ok ? '✅' : '❌');

/** growth is how much a series multiplies between two sizes, with the exponent. */
export function growth(t1, t2, n1, n2) {
  const k = t2 / t1;
  const e = Math.log(k) / Math.log(n2 / n1);
  return { k, e, text: Number.isFinite(k) ? `×${k.toFixed(1)} (n^${e.toFixed(2)})` : 'n/a' };
}

/** Goals holds the rows of the two goal tables; set fills one: its value in this run and whether it is met. */
class Goals {
  constructor() {
    this.rows = new Map([...BUDGETS, ...GOALS].map(([key, name]) => [key, { name, value: 'not measured in this run', ok: null }]));
  }

  set(key, value, ok) {
    const row = this.rows.get(key);
    if (!row) throw new Error(`no goal ${key}`);
    Object.assign(row, { value, ok: Boolean(ok) });
  }

  table(list) {
    return table(['goal', 'this run', ''], list.map(([key]) => this.rows.get(key)).map((r) => [r.name, r.value, goalMark(r.ok)]), 'lrc');
  }
}

export function render(R) {
  const goals = new Goals();
  const sections = [probeSection, listingSection, pushSection, footprintSection, limitsSection, goBenchSection].flatMap((f) => f(R, goals));
  const md = [...header(R), '', '## Budgets', '', 'What the lean code promises, each measured through the binary, listings and pushes through the typed client.', '',
    goals.table(BUDGETS), '', '## Other goals', '', goals.table(GOALS), ...sections, ...reproduce(R)];
  const markdown = md.join('\n') + '\n';
  const svg = listingChart(R.listing) ?? lineChart({ title: 'no listing data', series: [{ name: 'none', color: '#999', points: [[100, 1]] }] });
  // The console copy: everything but the chart link.
  const text = markdown.replace(/^!\[.*\n\n?/m, '');
  return { markdown, svg, text };
}

function header(R) {
  const m = R.machine;
  const md = [];
  md.push('# Benchmarks: sessionlocks beside the IDE\'s kill + ps check');
  md.push('');
  md.push('Generated by `make bench` (bench/run.mjs); do not edit by hand. Every figure is a median over repeated runs;');
  md.push('every ratio is taken pair by pair within one repetition of this run and its median is shown.');
  md.push('');
  md.push(table(['machine', ''], [
    ['CPU', `${m.cpu}, ${m.cores} cores, ${m.memGiB} GiB`],
    ['kernel', m.kernel],
    ['Go / Node', `${m.go} / ${m.node}`],
    ['sidecar', `${m.sidecarVersion ?? 'unknown'} (commit ${m.commit})`],
    ['client', m.client ?? 'unknown'],
    ['date', m.date],
    ['load average before / after', `${m.loadBefore?.join(' ')} / ${m.loadAfter?.join(' ') ?? 'n/a'}`],
    ['run', R.config?.args?.length ? `\`node bench/run.mjs ${R.config.args.join(' ')}\`${R.config.quick ? ' (a smoke run: not the figures to quote)' : ''}` : 'full (`make bench`, no flags)'],
  ], 'll'));
  md.push('');
  md.push('**The peer** is the algorithm copilot-ide\'s sessionLocks.ts uses today, as a Node script');
  md.push('([bench/peer/sessionLocks.mjs](bench/peer/sessionLocks.mjs)): list the session dirs, and for every');
  md.push('`inuse.<pid>.lock` call `process.kill(pid, 0)` and, for a live pid, spawn `ps -p <pid> -o command=` and look');
  md.push('for "copilot". **Ours** is `sessionlocks serve` spawned as a child and driven through the client named above, as');
  md.push('the IDE would.');
  if (R.errors?.length) {
    md.push('');
    md.push('**Not measured in this run:** ' + R.errors.map((e) => `${e.phase} (${e.message})`).join('; ') + '.');
  }
  return md;
}

function probeSection(R, goals) {
  const hold = goFind(R.goBench, /^Probe\/hold$/i);
  const nohold = goFind(R.goBench, /^Probe\/no-?hold$/i);
  const dead = goFind(R.goBench, /^Probe\/dead$/i);
  const ps = goFind(R.goBench, /^PSSpawn$/i);
  const decide = (k) => goFind(R.goBench, new RegExp(`^Probe/decide-${k}$`, 'i'));
  if (!R.peerProbe && !hold) return [];
  const peerLive = median(R.peerProbe?.liveMs ?? []);
  const peerDead = median(R.peerProbe?.deadMs ?? []);
  const psGo = goMs(ps);
  const row = (label, b, peerMs, peerLabel) => {
    const ours = goMs(b);
    return [label, b ? fmtMs(ours) : 'n/a', `${fmtMs(peerMs)} ${peerLabel}`, fmtRatio(peerMs / ours), fmtRatio(psGo / ours)];
  };
  const md = ['', '## Per-lock probe', ''];
  md.push(table(['lock', 'ours (engine, uncached)', 'peer (Node)', 'peer / ours', '`ps` spawn from Go / ours'], [
    row('live CLI, new format: `.hold` flock probe', hold, peerLive, '(kill + ps)'),
    row('live CLI, old format: /proc stat + cmdline', nohold, peerLive, '(kill + ps)'),
    row('dead pid', dead, peerDead, '(kill only)'),
    ...[['hold', 'decision, live CLI, new format', peerLive, '(kill + ps)'], ['nohold', 'decision, live CLI, old format', peerLive, '(kill + ps)'], ['dead', 'decision, dead pid', peerDead, '(kill only)']]
      .filter(([k]) => decide(k)).map(([k, label, p, pl]) => row(label, decide(k), p, pl)),
  ]));
  md.push('');
  md.push('A listing judges each lock against one look at the machine shared by the whole listing; a decision (`canResume`,');
  md.push('`forceResume`, `reclaimStale`) looks afresh, for one session, and also names the process that holds it, which');
  md.push('takes a walk of /proc for owners in other PID namespaces.');
  md.push('');
  md.push(`Ours: the engine's Go benchmarks (${[hold, nohold, dead].filter(Boolean).map((b) => '`Benchmark' + b.name + '`').join(', ') || 'not found'}), median ns/op of ` +
    `\`-count ${R.config?.goCount}\`. The \`ps\` spawn column is \`BenchmarkPSSpawn\` (${fmtMs(psGo)}) from the same \`go test\` run. ` +
    `Peer: \`kill(pid, 0)\` + awaited \`execFile('ps', ...)\` on a live copilot pid, ${R.peerProbe?.liveMs?.length ?? 0} sequential calls ` +
    `(an unrelated live pid: ${fmtMs(median(R.peerProbe?.unrelatedMs ?? []))}); a dead pid costs the peer one \`kill\`, ` +
    'which is all it does there (and why it cannot tell a reused pid from its writer).');
  if (hold && ps) goals.set('probe', `${fmtMs(goMs(hold))}, ${fmtRatio(psGo / goMs(hold))}`, goMs(hold) <= 0.025 && psGo / goMs(hold) >= 250);
  return md;
}

/** summarise adds the medians and pairwise ratios of one listing row as r.summary. */
function summarise(r) {
  r.summary = {
    peer: median(r.peer),
    cold: median(r.cold),
    coldBare: median(r.coldBare),
    warm: median(r.warm),
    warmWire: median(r.warmWire ?? []),
    rCold: median(ratios(r.peer, r.cold)),
    rColdBare: median(ratios(r.peer, r.coldBare)),
    rWarm: median(ratios(r.peer, r.warm)),
  };
  return r.summary;
}

function listingSection(R, goals) {
  if (!R.listing?.length) return [];
  const md = ['', '## Listing sessions', ''];
  const rows = R.listing.map((r) => {
    const x = summarise(r);
    return [n(r.count), fmtMs(x.peer), fmtMs(x.cold), fmtMs(x.coldBare), fmtMs(x.warm), fmtMs(x.warmWire), fmtRatio(x.rCold), fmtRatio(x.rColdBare), fmtRatio(x.rWarm), String(r.reps)];
  });
  md.push(table(['sessions', 'peer', 'ours cold', 'ours cold, no watcher', 'ours warm', 'ours warm, server\'s share', 'peer / cold', 'peer / cold, no watcher', 'peer / warm', 'reps'], rows));
  md.push('');
  if (R.listing.length > 1) {
    const keys = ['peer', 'cold', 'coldBare', 'warm', 'warmWire'];
    const g = [];
    for (let i = 1; i < R.listing.length; i++) {
      const [a, b] = [R.listing[i - 1], R.listing[i]];
      g.push([`${n(a.count)} → ${n(b.count)}`, ...keys.map((k) => growth(a.summary[k], b.summary[k], a.count, b.count).text)]);
    }
    md.push('Growth with the session count (n^1.00 is linear):');
    md.push('');
    md.push(table(['sessions', 'peer', 'ours cold', 'ours cold, no watcher', 'ours warm', 'ours warm, server\'s share'], g));
    md.push('');
  }
  md.push('![listing time against session count](bench/chart.svg)');
  md.push('');
  md.push('What each state dir held (10% of sessions locked; half of all locks name a live pid at every size, so the peer\'s');
  md.push('`ps` work per lock is the same throughout; live holders are capped so that 10,000 sessions do not need 1,000 processes;');
  md.push('names as the real CLI writes them: a quarter single-quoted, some with a doubled quote inside, one in twenty');
  md.push('double-quoted with escapes, the rest plain):');
  md.push('');
  for (const r of R.listing) {
    const c = r.check;
    md.push(`- ${describeMix(r.mix)}.` + (c ? ` Answers checked against what was planted: ours ${c.oursCold}/${c.total} cold, ${c.oursWarm}/${c.total} warm; ` +
      `peer ${c.peer}/${c.total} (${c.peerFooled} reused-PID locks it took for live sessions).` : ''));
  }
  md.push('');
  md.push('Peer: one `listSessionLocks()` call in the benchmark\'s Node process per repetition (it has no cache, so cold and');
  md.push('warm are the same for it). Ours cold: a freshly spawned `sessionlocks serve` (default flags, as the IDE spawns it) that has');
  md.push('answered `status`, then its first `listSessions {}`; its watcher starts with a listing of its own, so some verdicts may');
  md.push('already be cached. "No watcher" is the same first call on a server started with `--no-watch`: an empty cache, every');
  md.push(`holder probed. Ours warm: on the first server, after ${[...new Set(R.listing.map((r) => r.warmup))].join(' or ')} unmeasured calls, the median of the next ${[...new Set(R.listing.map((r) => r.warmCalls))].join(' or ')} calls, one after`);
  md.push('another (the probe cache keeps verdicts 3 s). Every answer is the whole listing, every session sent and parsed anew.');
  md.push('Times are round trips seen by the client, from the call to the whole list in hand. "Server\'s share" is the same warm');
  md.push('round trip on a bare Content-Length connection whose answer counts as received when its last byte is in the');
  md.push('benchmark\'s process, nothing parsed; the rest of "warm" is the client\'s JSON.parse and the garbage collection of');
  md.push('what that builds. The peer reads no `workspace.yaml`; the sidecar returns each session\'s metadata too.');
  if (R.listing.some((r) => median(r.coldCached ?? []) > 0)) {
    md.push(`In this run the cold answers had ${R.listing.map((r) => `${Math.round(100 * median(r.coldCached ?? []))}%`).join(', ')} of their holders from the cache (median per size).`);
  }
  listingGoals(R.listing, goals);
  return md;
}

function listingGoals(listing, goals) {
  const at = (c) => listing.find((r) => r.count === c)?.summary;
  const both = (x, limit) => [`${fmtMs(x.cold)} (no watcher ${fmtMs(x.coldBare)})`, x.cold <= limit && x.coldBare <= limit];
  const k1 = at(1000);
  const k10 = at(10000);
  if (k1) {
    goals.set('cold1k', ...both(k1, 50));
    goals.set('coldPeer', `${fmtRatio(k1.rCold)} (no watcher ${fmtRatio(k1.rColdBare)})`, k1.rCold >= 15 && k1.rColdBare >= 15);
    goals.set('warm1k', `${fmtMs(k1.warm)} (server's share ${fmtMs(k1.warmWire)})`, k1.warm <= 8);
  }
  if (k10) {
    goals.set('cold10k', ...both(k10, 500));
    goals.set('warm10k', `${fmtMs(k10.warm)} (server's share ${fmtMs(k10.warmWire)})`, k10.warm <= 60);
  }
  const checked = listing.filter((r) => r.check);
  if (checked.length) goals.set('truth', checked.map((r) => `${r.check.oursCold}/${r.check.total}`).join(', '), checked.every((r) => r.check.oursCold === r.check.total && r.check.oursWarm === r.check.total));
}

function listingChart(listing) {
  if (!listing?.length) return null;
  return lineChart({
    title: 'Listing every session: the IDE\'s kill + ps check vs sessionlocks',
    series: [
      { name: 'peer (kill + ps)', color: PEER, points: listing.map((r) => [r.count, r.summary.peer]) },
      { name: 'ours, cold', color: OURS, dash: '7 5', points: listing.map((r) => [r.count, r.summary.cold]) },
      { name: 'ours, cold, no watcher', color: '#5dade2', dash: '2 4', points: listing.map((r) => [r.count, r.summary.coldBare]) },
      { name: 'ours, warm', color: OURS, points: listing.map((r) => [r.count, r.summary.warm]) },
    ],
  });
}

/** PUSH_EVENTS are the push phase's events, as the driver records them, with their rows' labels. */
export const PUSH_EVENTS = [
  ['created', 'lock created'],
  ['removed', 'lock removed'],
  ['killed', 'holder SIGKILLed'],
  ['youngKilled', 'CLI SIGKILLed within its settle window → stale'],
  ['orphaned', 'a live holder\'s launcher SIGKILLed → orphaned'],
];

function pushSection(R, goals) {
  const M = R.push?.modes;
  if (!M || !Object.keys(M).length) return [];
  const modes = Object.keys(M);
  const p50 = (xs) => quantile(xs ?? [], 0.5);
  const max = (xs) => (xs?.length ? Math.max(...xs) : NaN);
  const md = ['', '## Push latency: file operation, SIGKILL or a launcher\'s death → `sessionsChanged` at the client', ''];
  const rows = PUSH_EVENTS.map(([k, label]) => [label, ...modes.flatMap((mo) => {
    const r = M[mo];
    return [fmtMs(p50(r[k])), fmtMs(max(r[k])) + (r.missed?.[k] ? ` (${r.missed[k]} missed)` : '')];
  })]);
  md.push(table(['event', ...modes.flatMap((mo) => [`${mo} p50`, `${mo} max`])], rows));
  md.push('');
  md.push(`A server (\`serve --watch MODE\`) on a state dir of ${R.push.mix ? describeMix(R.push.mix) : `${n(R.push.count)} sessions`}, plus the fake CLIs ` +
    'to be killed; samples per event: ' + modes.map((mo) => `${mo} ${M[mo].n}`).join(', ') + '. The clock starts just before the benchmark ' +
    'acts and stops when the first notification showing the effect reaches the client: `inuse.<pid>.lock` written (naming a live ' +
    'unrelated process) or unlinked; a fake CLI holding `.lock` + flocked `.hold` for longer than the 5 s settle window SIGKILLed ' +
    '(which changes no file); a fake CLI SIGKILLed as soon as the server has pushed it in use, its lock younger than the settle ' +
    'window, until stale is pushed; and a settled fake CLI\'s launcher (`sh`, in a session of its own with no terminal, seen alive ' +
    'by the server) SIGKILLed, until the holder is pushed `orphaned: true`. A missed event is one with no matching notification ' +
    'within the timeout (5 s notify, 10 s poll).');
  const nt = M.notify;
  if (nt) {
    goals.set('pushFile', `${fmtMs(p50(nt.created))} / ${fmtMs(p50(nt.removed))}`, p50(nt.created) <= 20 && p50(nt.removed) <= 20);
    goals.set('pushKill', fmtMs(p50(nt.killed)), p50(nt.killed) <= 20);
  }
  const young = modes.map((mo) => `${fmtMs(p50(M[mo].youngKilled))}, max ${fmtMs(max(M[mo].youngKilled))} (${mo})`).join('; ');
  goals.set('youngKill', young, modes.every((mo) => max(M[mo].youngKilled) <= 1000 && !M[mo].missed?.youngKilled));
  goals.set('orphan', modes.map((mo) => `${fmtMs(p50(M[mo].orphaned))} (${mo})`).join('; '), modes.every((mo) => p50(M[mo].orphaned) <= 1000));
  if (M.poll) {
    const worst = Math.max(...['created', 'removed', 'killed'].map((k) => p50(M.poll[k])));
    goals.set('poll', `${fmtMs(worst)} (the slowest)`, worst <= 1500);
  }
  const missed = modes.reduce((a, mo) => a + Object.values(M[mo].missed ?? {}).reduce((x, y) => x + y, 0), 0);
  goals.set('missed', String(missed), missed === 0);
  return md;
}

function footprintSection(R, goals) {
  if (!R.startup && !R.footprint?.length && !R.binaries?.length) return [];
  const md = ['', '## Startup and footprint', ''];
  const rows = [];
  if (R.startup?.status?.length) {
    rows.push(['spawn → first answer (`status`)', fmtMs(median(R.startup.status)), `p99 ${fmtMs(quantile(R.startup.status, 0.99))}, n=${R.startup.status.length}`]);
    rows.push([`spawn → first \`listSessions\` (${n(R.startup.count)} sessions)`, fmtMs(median(R.startup.list)), `p99 ${fmtMs(quantile(R.startup.list, 0.99))}, n=${R.startup.list.length}`]);
    goals.set('spawn', fmtMs(median(R.startup.status)), median(R.startup.status) <= 20);
  }
  for (const f of R.footprint ?? []) {
    const peak = f.peak ? `, peak ${fmtBytes(f.peak)}` : '';
    rows.push([`idle, ${n(f.count)} sessions, --watch ${f.mode}`, `${fmtBytes(f.rss)} RSS`, `${f.fds} open fds, idle CPU ${f.cpuPct.toFixed(2)}%${peak}`]);
  }
  if (rows.length) {
    md.push(table(['measure', 'value', ''], rows, 'lrl'));
    md.push('');
    md.push('Spawn times run from just before the client spawns the binary to the answer of its first `status` (which the');
    md.push('client sends at once), and to the answer of the `listSessions` that follows' + (R.startup?.mix ? ` (${describeMix(R.startup.mix)})` : '') + '. Idle figures: the server has');
    md.push('answered one `listSessions`, then sits 1.5 s; RSS is VmRSS (peak: VmHWM) and descriptors are the entries of /proc/<pid>/fd');
    md.push('after a further idle window over which CPU is the run time of all its threads (schedstat, in nanoseconds). These are');
    md.push('Linux\'s figures: the Windows build\'s memory under Wine is measured apart, not by `make bench`.');
  }
  const fp = R.footprint ?? [];
  const f1 = fp.filter((f) => f.count === 1000);
  if (f1.length) goals.set('rss1k', f1.map((f) => `${fmtBytes(f.rss)} (${f.mode})`).join(', '), f1.every((f) => f.rss <= 24 * MiB));
  const f10 = (mode) => fp.find((f) => f.count === 10000 && f.mode === mode);
  if (f10('notify')) goals.set('cpuNotify', `${f10('notify').cpuPct.toFixed(2)}%`, f10('notify').cpuPct < 1);
  if (f10('poll')) {
    goals.set('cpuPoll', `${f10('poll').cpuPct.toFixed(2)}%`, f10('poll').cpuPct < 1);
    goals.set('fdsPoll', String(f10('poll').fds), f10('poll').fds < 256);
  }
  if (R.binaries?.length) {
    md.push('');
    md.push('Binary size per platform (`make cross`: CGO_ENABLED=0, -trimpath, -ldflags "-s -w"):');
    md.push('');
    md.push(table(['platform', 'size'], R.binaries.map((b) => [b.platform, `${(b.bytes / MiB).toFixed(2)} MiB`])));
  }
  return md;
}

function limitsSection(R, goals) {
  if (!R.limits?.disk) return [];
  const L = (where, name) => R.limits[where]?.[name];
  const mib = (b) => metricMedian(b, 'peak-MiB');
  const md = ['', '## Limits: a client that never reads, a session of 100,000 dead locks', ''];
  const rows = [];
  const unread = L('disk', 'UnreadListings');
  if (unread) rows.push(['10,000 pipelined `listSessions` over 3,000 sessions, answers never read', '', `${mib(unread).toFixed(1)} MiB`, `${metricMedian(unread, 'accepted-%')}% of the requests read`]);
  for (const where of ['disk', 'tmpfs']) {
    if (!R.limits[where]) continue;
    const cr = L(where, 'ServeManyDeadLocks/canResume');
    const rc = L(where, 'ServeManyDeadLocks/reclaimStale');
    const fl = L(where, 'ServeManyDeadLocks/unlink-floor');
    const sf = L(where, 'ServeManyDeadLocks/stat-floor');
    if (cr) rows.push([`\`canResume\`, 100,000 dead locks (${where})`, fmtMs(goMs(cr)), `${mib(cr).toFixed(1)} MiB`, sf ? `${fmtRatio(goMs(cr) / goMs(sf))} of the file system's floor` : '']);
    if (sf) rows.push([`os.ReadDir + an os.Lstat per file (${where}; floor)`, fmtMs(goMs(sf)), '', 'nothing judged, one goroutine, in the benchmark\'s process']);
    if (rc) rows.push([`\`reclaimStale\`, 100,000 dead locks (${where})`, fmtMs(goMs(rc)), `${mib(rc).toFixed(1)} MiB`, fl ? `${fmtRatio(goMs(rc) / goMs(fl))} of the file system's floor` : '']);
    if (fl) rows.push([`unlink(2) of the same 100,000 files (${where}; floor)`, fmtMs(goMs(fl)), '', 'one os.Remove each, in the benchmark\'s process']);
    const floor = (b) => (b ? `; floor ${fmtMs(goMs(b))}` : '');
    if (cr) goals.set(`canResume-${where}`, `${fmtMs(goMs(cr))}, ${mib(cr).toFixed(1)} MiB${floor(sf)}`, goMs(cr) <= 200 && mib(cr) <= 64);
    if (rc) goals.set(`reclaim-${where}`, `${fmtMs(goMs(rc))}, ${mib(rc).toFixed(1)} MiB${floor(fl)}`, goMs(rc) <= 2000 && mib(rc) <= 64);
  }
  md.push(table(['case', 'time', 'server peak RSS', ''], rows, 'lrrl'));
  md.push('');
  md.push('`go test -run ^$ -bench \'UnreadListings|ServeManyDeadLocks\' -benchtime 1x ./cmd/sessionlocks/`: the real binary, spawned');
  md.push('and driven over its pipes; peak RSS is the server\'s VmHWM. The dead locks are synced to disk before each reclaim,');
  md.push('as a crashed machine leaves them. The floor rows do the same file-system work with nothing else; on a disk mounted');
  md.push('with `discard` each unlink of a synced file costs tens of microseconds in the kernel, so the reclaim\'s time there is');
  md.push('the file system\'s, and the tmpfs rows show what the server itself costs.');
  if (unread) goals.set('unread', `${mib(unread).toFixed(1)} MiB`, mib(unread) <= 64);
  return md;
}

function goBenchSection(R) {
  if (!R.goBench || !Object.keys(R.goBench).length) return [];
  return ['', `## Engine benchmarks (\`go test -bench . -benchmem -count ${R.config?.goCount} ./sessionlocks/\`, medians)`, '',
    table(['benchmark', 'time/op', 'B/op', 'allocs/op', 'samples'], Object.entries(R.goBench).map(([name, b]) => [
      name, fmtMs(goMs(b)), String(Math.round(metricMedian(b, 'B/op')) || 0), String(Math.round(metricMedian(b, 'allocs/op')) || 0), String(b.samples.length),
    ])), '',
    '`List` is the engine alone over the state dirs of `sessionlocks/bench_test.go` (names quoted as the CLI quotes them): ' +
    '"cold" a new engine, "cached" within the probe cache\'s TTL, "one-changed" after one session was invalidated, as the ' +
    'watcher does on an event.'];
}

function reproduce(R) {
  const md = ['', '## Reproduce', ''];
  if (R.seconds && Object.keys(R.seconds).length) {
    const total = Object.values(R.seconds).reduce((a, b) => a + b, 0);
    md.push(`This run took ${(total / 60).toFixed(1)} minutes (${Object.entries(R.seconds).map(([k, v]) => `${k} ${Math.round(v)} s`).join(', ')}).`);
  }
  md.push('`make bench` (about 8-12 minutes on 2 cores; `make bench BENCH_ARGS=--quick` for a short smoke run). The raw results');
  md.push('of the last run are in bin/bench-results.json; `node bench/run.mjs --from-json bin/bench-results.json` re-renders this');
  md.push('file. The machine above was shared with other work while this ran; compare ratios rather than absolute times.');
  return md;
}
