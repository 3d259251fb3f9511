// The state-dir generator: a session-state directory laid out as the Copilot
// CLI 1.0.102 writes it, with a known mix of locks so that both the peer and
// the sidecar can be checked against the truth as well as timed.
//
// Of the sessions, lockedFraction (10%) carry locks, split as follows:
//   30% live     real processes (the fake CLI, built as "copilot") holding
//                .lock + flocked .hold; a quarter of them in the old format
//                (.lock only). At most liveCap processes: the rest of this
//                share becomes reused-PID locks, so that half of all locks
//                always name a live pid and the peer's ps work per lock stays
//                the same at every size.
//   20%+ reused  locks naming a live pid that is not their writer, written
//                before that process started (mtime in the past, after boot):
//                three quarters name unrelated processes (`cat`), one quarter
//                name a live copilot holder of another session (the case that
//                fools the peer). Half have an unflocked .hold.
//   50% dead     locks naming a pid with no process (a SIGKILLed CLI): half
//                new format (.lock + unflocked .hold), half old (.lock only).
// Expected states: live -> inUse, reused and dead -> stale, others free.

import { randomUUID } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawnTracked, tempDir } from './procs.mjs';
import { now, sleep } from './stats.mjs';

/** REPO is the repository root. */
export const REPO = new URL('../../', import.meta.url).pathname.replace(/\/$/, '');

/** The settle window the sidecar uses by default: younger live locks are "starting", not hold-probed. */
export const SETTLE_MS = 5000;

/**
 * buildFakeCLI builds internal/fakecli/copilot into dir where npm puts the real CLI's native binary
 * (node_modules/@github/copilot-<os>-<arch>/copilot), which is how the sidecar recognises it: a program
 * merely named copilot may be AWS's. It returns the path.
 */
export async function buildFakeCLI(dir) {
  const pkg = join(dir, 'node_modules', '@github', `copilot-${process.platform}-${process.arch}`);
  mkdirSync(pkg, { recursive: true });
  const out = join(pkg, process.platform === 'win32' ? 'copilot.exe' : 'copilot');
  await run('go', ['build', '-o', out, './internal/fakecli/copilot'], { cwd: REPO });
  return out;
}

/** run runs a command to completion and rejects with its output on failure. */
export function run(cmd, args, opts = {}) {
  return new Promise((resolve, reject) => {
    const c = spawnTracked(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'], group: true });
    let out = '';
    let err = '';
    c.stdout.on('data', (d) => (out += d));
    c.stderr.on('data', (d) => (err += d));
    c.on('error', reject);
    c.on('exit', (code, sig) => {
      if (code === 0) resolve({ stdout: out, stderr: err });
      else reject(new Error(`${cmd} ${args.join(' ')}: exit ${code ?? sig}\n${err}${out}`));
    });
  });
}

/**
 * startHolder runs the fake CLI on one session and resolves once its .lock
 * and flocked .hold are in place. It exits (removing its files) when our end
 * of its stdin closes, so even a crashed benchmark leaves no holder behind.
 * With launched, it runs under a launcher of its own (`sh`, which waits for
 * it, in a new session without a controlling terminal, as a tool or an IDE
 * that spawned a CLI is): child is then the launcher, whose SIGKILL leaves
 * the CLI an orphan, and killGroup(child) ends both.
 */
export function startHolder(copilotBin, stateDir, sessionId, { old = false, launched = false } = {}) {
  const args = ['--state-dir', stateDir, '--session', sessionId, '--exit-on-eof'];
  if (old) args.push('--old');
  // Node closes a child's stdin when it exits, which would end a launched
  // CLI with its launcher: that CLI reads a pipe on the launcher's fd 3
  // instead, which stays open while the benchmark runs.
  const child = launched
    ? spawnTracked('sh', ['-c', '"$0" "$@" <&3 3<&-; true', copilotBin, ...args], { stdio: ['ignore', 'pipe', 'pipe', 'pipe'], group: true })
    : spawnTracked(copilotBin, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  return new Promise((resolve, reject) => {
    let out = '';
    let err = '';
    const timer = setTimeout(() => reject(new Error(`fake CLI for ${sessionId} not ready after 15s: ${err}`)), 15000);
    child.stdout.on('data', (d) => {
      out += d;
      const m = /ready (\d+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve({ child, pid: Number(m[1]), sessionId, old, launched });
      }
    });
    child.stderr.on('data', (d) => (err += d));
    child.on('error', (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`fake CLI for ${sessionId} exited ${code} before ready: ${err}`));
    });
  });
}

/** startSleeper starts an unrelated long-lived process (cat on a pipe; it exits when we do). */
export function startSleeper() {
  const child = spawnTracked('cat', [], { stdio: ['pipe', 'ignore', 'ignore'] });
  return { child, pid: child.pid };
}

/**
 * nameLine is session i's name as the real CLI writes it: names that need
 * quoting are single-quoted by 1.0.65 and later (a quote inside doubled),
 * double-quoted with escapes by 1.0.45. About one in four is single-quoted
 * (half of those with a doubled quote), one in twenty double-quoted, the
 * rest plain, so that the sidecar's reader meets every style. It returns
 * the line and the name a reader must make of it.
 */
export function nameLine(i) {
  if (i % 4 === 1) {
    if (i % 8 === 5) return { line: `name: 'don''t: retry the flaky test (session ${i})'`, name: `don't: retry the flaky test (session ${i})` };
    return { line: `name: 'fix: the flaky test (session ${i})'`, name: `fix: the flaky test (session ${i})` };
  }
  if (i % 20 === 3) return { line: `name: "fix: the \\"flaky\\" test (session ${i})"`, name: `fix: the "flaky" test (session ${i})` };
  return { line: `name: Fix the flaky test (session ${i})`, name: `Fix the flaky test (session ${i})` };
}

/**
 * writeSession writes one session directory with its metadata and the
 * subdirectories the CLI makes, the directory's and workspace.yaml's mtimes
 * at updatedAt: on a real machine an idle session's directory was last
 * modified long ago (the engine's directory cache relies on that, as it may).
 */
export function writeSession(stateDir, id, i, updatedAt) {
  const dir = join(stateDir, id);
  mkdirSync(dir);
  mkdirSync(join(dir, 'checkpoints'));
  mkdirSync(join(dir, 'files'));
  const created = new Date(updatedAt.getTime() - 3600_000).toISOString();
  writeFileSync(
    join(dir, 'workspace.yaml'),
    `id: ${id}\ncwd: /home/dev/src/project-${i % 37}\nclient_name: copilot-cli\n${nameLine(i).line}\n` +
      `user_named: false\nsummary_count: ${i % 3}\nfork_count: 0\ncreated_at: ${created}\nupdated_at: ${updatedAt.toISOString()}\n`,
  );
  writeFileSync(
    join(dir, 'events.jsonl'),
    JSON.stringify({
      type: 'session.start',
      data: { sessionId: id, copilotVersion: '1.0.102', startTime: created, context: { cwd: `/home/dev/src/project-${i % 37}` }, alreadyInUse: false },
    }) + '\n',
  );
  // The metadata file and the directory are what a scanner looks at; the rest keep their fresh times.
  utimesSync(join(dir, 'workspace.yaml'), updatedAt, updatedAt);
  utimesSync(dir, updatedAt, updatedAt);
  return dir;
}

/** writeLock plants inuse.<pid>.lock (and an unflocked .hold) with mtime at, as a crashed or foreign writer leaves them. */
export function writeLock(sessionDir, pid, { hold, at }) {
  const lock = join(sessionDir, `inuse.${pid}.lock`);
  writeFileSync(lock, `${pid}\n`);
  const files = [lock];
  if (hold) {
    const h = join(sessionDir, `inuse.${pid}.hold`);
    writeFileSync(h, '');
    files.push(h);
  }
  // The directory changed when the lock was written, too.
  if (at) for (const f of [...files, sessionDir]) utimesSync(f, at, at);
  return lock;
}

/** bootAgeSeconds is how long ago the machine booted. */
function bootAgeSeconds() {
  return Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
}

/**
 * deadPIDs returns n distinct pids that have no process now, and that the
 * kernel will not hand out soon: it gives pids in rising order from the last
 * one it gave, wrapping at pid_max, so a pid a little above that would go to
 * the next processes started (the test runner's, ps's) and a "dead" lock
 * would then name a live process. Only pids in the half of the range the
 * kernel reaches last are taken.
 */
export function deadPIDs(n, avoid) {
  const max = Number(readFileSync('/proc/sys/kernel/pid_max', 'utf8'));
  const span = max - 300; // the kernel wraps to 300, not to 1
  let last = NaN;
  try {
    last = Number(readFileSync('/proc/sys/kernel/ns_last_pid', 'utf8'));
  } catch {
    // not readable here: any unused pid will do
  }
  const soon = (pid) => Number.isFinite(last) && (((pid - last) % span) + span) % span < span / 2;
  const out = new Set();
  let guard = 0;
  while (out.size < n) {
    if (++guard > n * 1000) throw new Error(`cannot find ${n} unused pids below ${max}`);
    const pid = 300 + Math.floor(Math.random() * span);
    if (avoid.has(pid) || out.has(pid) || soon(pid) || existsSync(`/proc/${pid}`)) continue;
    out.add(pid);
  }
  return [...out];
}

/** mixFor is the number of sessions of each kind for count sessions (see the file comment). */
export function mixFor(count, { lockedFraction = 0.1, liveCap = 32 } = {}) {
  const locked = Math.round(count * lockedFraction);
  const liveShare = Math.round(locked * 0.3);
  const live = Math.min(liveShare, liveCap);
  const liveOld = Math.round(live * 0.25);
  const reused = Math.round(locked * 0.2) + (liveShare - live);
  const reusedCopilot = live > 0 ? Math.round(reused * 0.25) : 0;
  const dead = locked - live - reused;
  return { count, locked, live, liveOld, reused, reusedCopilot, reusedUnrelated: reused - reusedCopilot, dead };
}

/** pool runs fn over items with at most n in flight. */
async function pool(items, n, fn) {
  const out = new Array(items.length);
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, items.length) }, async () => {
      while (next < items.length) {
        const i = next++;
        out[i] = await fn(items[i], i);
      }
    }),
  );
  return out;
}

/**
 * generate creates a state dir of count sessions with the lock mix above.
 * It returns the dir, the mix, the expected state of every session, the live
 * processes (holders and sleepers) and settled(), which waits until every
 * live lock is older than the settle window (so the sidecar takes the hold
 * path, as it would for a CLI that has been running a while).
 */
export async function generate({ count, copilotBin, lockedFraction = 0.1, liveCap = 32, sleepers = 4, root }) {
  // A caller-supplied root is kept at exit; the default temp dir is removed.
  root ??= tempDir(`slbench-${count}-`);
  const stateDir = join(root, 'session-state');
  mkdirSync(stateDir, { recursive: true });
  const mix = mixFor(count, { lockedFraction, liveCap });
  const t0 = now();

  // Sessions, newest first by updated_at spread over 30 days.
  const base = Date.now();
  const sessions = [];
  for (let i = 0; i < count; i++) {
    const id = randomUUID();
    const updatedAt = new Date(base - Math.floor(Math.random() * 30 * 86400_000));
    sessions.push({ id, dir: writeSession(stateDir, id, i, updatedAt), name: nameLine(i).name, kind: 'free', expect: 'free' });
  }
  // Which sessions get which locks: a random subset, so that locked sessions
  // are spread through the directory order.
  const order = sessions.map((_, i) => i);
  for (let i = order.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [order[i], order[j]] = [order[j], order[i]];
  }
  let k = 0;
  const take = (n, kind, expect) => order.slice(k, (k += n)).map((i) => Object.assign(sessions[i], { kind, expect }));
  const live = take(mix.live, 'live', 'inUse');
  const reused = take(mix.reused, 'reused', 'stale');
  const dead = take(mix.dead, 'dead', 'stale');

  // Stale locks were written after boot but before any process we start, so
  // that the sidecar must look at the process (pid-reused, process-exited)
  // rather than dismiss the lock as predating the boot.
  const staleAt = new Date(Date.now() - 1000 * Math.min(3600, Math.max(3, bootAgeSeconds() / 2)));
  await sleep(20);

  const sleeperProcs = Array.from({ length: mix.reusedUnrelated ? sleepers : 0 }, startSleeper);
  const holders = await pool(live, 8, (s, i) => startHolder(copilotBin, stateDir, s.id, { old: i < mix.liveOld }));
  for (let i = 0; i < live.length; i++) live[i].pids = [holders[i].pid];

  const livePids = new Set([...holders.map((h) => h.pid), ...sleeperProcs.map((s) => s.pid), process.pid]);
  reused.forEach((s, i) => {
    const pid = i < mix.reusedCopilot ? holders[i % holders.length].pid : sleeperProcs[i % sleeperProcs.length].pid;
    writeLock(s.dir, pid, { hold: i % 2 === 1, at: staleAt });
    s.pids = [pid];
    s.copilotPid = i < mix.reusedCopilot;
  });
  deadPIDs(dead.length, livePids).forEach((pid, i) => {
    writeLock(dead[i].dir, pid, { hold: i % 2 === 0, at: staleAt });
    dead[i].pids = [pid];
  });
  const readyAt = now();

  return {
    root,
    stateDir,
    mix,
    sessions,
    holders,
    sleepers: sleeperProcs,
    generateMs: readyAt - t0,
    expected: new Map(sessions.map((s) => [s.id, s.expect])),
    /** settled waits until the newest live lock is older than the settle window. */
    async settled() {
      const wait = readyAt + SETTLE_MS + 300 - now();
      if (wait > 0) await sleep(wait);
    },
  };
}

/** describeMix renders a mix as one line for the report. */
export function describeMix(m) {
  return (
    `${m.count.toLocaleString('en-US')} sessions, ${m.locked.toLocaleString('en-US')} locked: ${m.live} live holders (${m.liveOld} old format), ` +
    `${m.reused} reused-PID (${m.reusedCopilot} naming another session's live copilot, ${m.reusedUnrelated} naming unrelated processes), ` +
    `${m.dead} dead-PID`
  );
}
