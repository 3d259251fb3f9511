// The push phase: the time from a file operation, a SIGKILL or a launcher's
// death to the first sessionsChanged at the client that shows its effect, on a
// server per watch mode over a state dir of 1,000 sessions.

import { unlinkSync } from 'node:fs';
import { join } from 'node:path';
import { kill, killGroup, removeDir, stopAll } from './procs.mjs';
import { PUSH_EVENTS } from './report.mjs';
import { Sidecar } from './sidecar.mjs';
import { generate, SETTLE_MS, startHolder, startSleeper, writeLock } from './statedir.mjs';
import { now, quantile, sleep } from './stats.mjs';

/**
 * measurePush times each event of PUSH_EVENTS in each of modes ([mode,
 * samples, timeoutMs]) and returns {count, mix, modes: {mode: {n, missed,
 * event: [ms...]}}}. scratch receives the servers' logs.
 */
export async function measurePush({ copilotBin, scratch, modes, log }) {
  const count = 1000;
  const sd = await generate({ count, copilotBin, liveCap: 8 });
  const free = sd.sessions.filter((s) => s.kind === 'free');
  let k = 0;
  const nextFree = () => free[k++];
  const sleeper = startSleeper();
  // CLIs to SIGKILL and CLIs whose launcher to SIGKILL, started up front so
  // that all of them are past the settle window, as long-running CLIs are.
  const targets = {};
  const launched = {};
  for (const [mode, n] of modes) {
    targets[mode] = [];
    launched[mode] = [];
    for (let i = 0; i < n; i++) {
      targets[mode].push(await startHolder(copilotBin, sd.stateDir, nextFree().id));
      launched[mode].push(await startHolder(copilotBin, sd.stateDir, nextFree().id, { launched: true }));
    }
  }
  await sleep(SETTLE_MS + 300);
  const out = { count, mix: sd.mix, modes: {} };
  const young = [];
  try {
    for (const [mode, n, timeoutMs] of modes) {
      const ctx = { copilotBin, scratch, log, sd, sleeper, nextFree, targets: targets[mode], launched: launched[mode], young };
      out.modes[mode] = await pushSamples(mode, n, timeoutMs, ctx);
    }
  } finally {
    // A launched CLI outlives its launcher, in the launcher's group.
    for (const h of Object.values(launched).flat()) killGroup(h.child);
    await stopAll([...sd.holders, ...Object.values(targets).flat(), ...Object.values(launched).flat(), ...young, ...sd.sleepers, sleeper]);
    removeDir(sd.root);
  }
  return out;
}

/**
 * pushSamples starts a server in one watch mode and times n of each event:
 * a lock created and removed (by a live unrelated pid), a settled CLI
 * SIGKILLed, a CLI SIGKILLed right after the server pushed it in use (its
 * lock younger than the settle window), and a live CLI's launcher SIGKILLed.
 * young collects the CLIs it starts, for the caller to reap.
 */
async function pushSamples(mode, n, timeoutMs, { copilotBin, scratch, log, sd, sleeper, nextFree, targets, launched, young }) {
  // Each timed from just before the benchmark acts to the first sessionsChanged that shows its effect.
  const EVENTS = PUSH_EVENTS.map(([k]) => k);
  const res = { n, missed: Object.fromEntries(EVENTS.map((e) => [e, 0])), ...Object.fromEntries(EVENTS.map((e) => [e, []])) };
  const side = await Sidecar.start({ stateDir: sd.stateDir, logDir: scratch, args: ['--watch', mode] });
  const changed = (p, id) => (p?.changed ?? []).find((s) => s.id === id);
  const holderOf = (s, pid) => (s?.holders ?? []).find((h) => h.pid === pid);
  // waitFor resolves with the notification's arrival time, or null after timeoutMs.
  const waitFor = async (test, from) => {
    try {
      return (await side.waitNote(test, { from, timeoutMs })).at;
    } catch (err) {
      if (/exited/.test(err.message)) throw err;
      return null;
    }
  };
  const measure = async (event, act, test) => {
    const from = side.notes.length;
    const t0 = now();
    await act();
    const at = await waitFor(test, from);
    if (at === null) res.missed[event]++;
    else res[event].push(at - t0);
  };
  try {
    const first = await side.request('listSessions', {});
    // The orphan push needs a launcher the server saw alive; one it did not see is counted as missed.
    const sessions = new Map(first.result.sessions.map((s) => [s.id, s]));
    const seen = launched.filter((h) => holderOf(sessions.get(h.sessionId), h.pid)?.launcher?.alive === true);
    res.missed.orphaned += launched.length - seen.length;
    await sleep(1000);
    const jitter = () => sleep(mode === 'poll' ? Math.random() * 500 : 30 + Math.random() * 70);
    for (let i = 0; i < n; i++) {
      const s = nextFree();
      const lock = join(s.dir, `inuse.${sleeper.pid}.lock`);
      await measure('created', () => writeLock(s.dir, sleeper.pid, { hold: false }), (p) => holderOf(changed(p, s.id), sleeper.pid));
      await jitter();
      await measure('removed', () => unlinkSync(lock), (p) => {
        const c = changed(p, s.id);
        return (c && (c.holders ?? []).length === 0) || (p?.removed ?? []).includes(s.id);
      });
      await jitter();
      const h = targets[i];
      await measure('killed', () => kill(h.child), (p) => changed(p, h.sessionId)?.state === 'stale');
      await jitter();
      // A CLI killed moments after it opened its session: the server has pushed it in use, its lock is young.
      const y = nextFree();
      const from = side.notes.length;
      const c = await startHolder(copilotBin, sd.stateDir, y.id);
      const born = now();
      young.push(c);
      const seenInUse = (await waitFor((p) => changed(p, y.id)?.state === 'inUse', from)) !== null;
      if (!seenInUse || now() - born >= SETTLE_MS) res.missed.youngKilled++; // never pushed while young
      else await measure('youngKilled', () => kill(c.child), (p) => changed(p, y.id)?.state === 'stale');
      await jitter();
      if (seen[i]) {
        const o = seen[i];
        await measure('orphaned', () => process.kill(o.child.pid, 'SIGKILL'), (p) => holderOf(changed(p, o.sessionId), o.pid)?.orphaned === true);
        await jitter();
      }
    }
  } finally {
    await side.close();
  }
  const f = (xs) => `p50 ${quantile(xs, 0.5)?.toFixed(1)} ms max ${Math.max(...xs).toFixed(1)} ms`;
  log(`   ${mode}: ${EVENTS.map((e) => `${e} ${f(res[e])}`).join(', ')}, missed ${JSON.stringify(res.missed)}`);
  return res;
}
