// The client's restart policy, with the real binary: kill -9 the child, change
// the state dir while it is down (a session removed, a stale lock left, a CLI
// closed, a session created, a CLI opened), and check that a view kept only
// from the first listing plus sessionsChanged ends up as a fresh listing says,
// through one sessionsChanged made after the respawn. Also: calls during the
// restart, onStateChange, backoff, giving up, and dispose stopping it all;
// reads pending at the crash sent once more, acting calls never, with
// whether they had reached the child.

import assert from 'node:assert/strict';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostBinary, startFakeSession, stopProcess, tmpdir, writeSession, writeStaleLock } from '../scripts/testenv.mjs';

const require = createRequire(import.meta.url);
const { SessionLocks, ErrorCodes } = require('../sessionlocks');

/** Resolves with the first state change after this call for which pred is true. */
function nextState(locks, pred, ms = 15_000) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      sub.dispose();
      reject(new Error(`no matching state change within ${ms} ms (state ${locks.state})`));
    }, ms);
    const sub = locks.onStateChange((s) => {
      if (!pred(s)) return;
      clearTimeout(timer);
      sub.dispose();
      resolve(s);
    });
  });
}

// What a view must agree on with the disk; verdicts' wording and probe times
// may differ between two listings made moments apart.
const essence = (sessions) =>
  [...sessions]
    .map((s) => ({ id: s.id, name: s.name, state: s.state, holders: s.holders.map((h) => [h.pid, h.verdict]).sort() }))
    .sort((a, b) => a.id.localeCompare(b.id));

describe('restart', { skip: process.platform === 'win32' && 'kill -9 and SIGSTOP are POSIX' }, () => {
  test('after kill -9 the client respawns, and the view kept from notifications converges to the disk', async (t) => {
    const stateDir = path.join(tmpdir(), 'session-state');
    const ids = Object.fromEntries(['kept', 'gone', 'staled', 'closed', 'created', 'opened'].map((k) => [k, crypto.randomUUID()]));
    for (const k of ['kept', 'gone', 'staled', 'closed']) writeSession(stateDir, ids[k], { name: k });
    const fakes = { closed: await startFakeSession(stateDir, ids.closed) };
    t.after(() => Promise.all(Object.values(fakes).map((f) => f.stop())));

    // The backoff is the window in which the state dir changes with no child to see it.
    const backoffMs = 2_500;
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir, restart: { backoffMs, maxBackoffMs: backoffMs } });
    t.after(() => locks.dispose());
    assert.equal(locks.state, 'running');

    // The IDE's view: one listing, then every sessionsChanged applied in order.
    const view = new Map((await locks.listSessions()).sessions.map((s) => [s.id, s]));
    assert.equal(view.get(ids.closed).state, 'inUse');
    const notes = [];
    locks.onSessionsChanged((n) => {
      notes.push({ n, state: locks.state });
      for (const s of n.changed) view.set(s.id, s);
      for (const id of n.removed) view.delete(id);
    });
    const states = [];
    locks.onStateChange((s) => states.push(s));

    const oldPid = locks.pid;
    const down = nextState(locks, (s) => s.state === 'exited');
    const running = nextState(locks, (s) => s.state === 'running');
    // Stopped, the child cannot answer before it dies: the call is surely pending.
    await stopProcess(oldPid);
    const pending = locks.status();
    process.kill(oldPid, 'SIGKILL');
    const exited = await down;
    assert.equal(exited.exit.signal, 'SIGKILL');
    assert.equal(exited.exit.expected, false);
    assert.equal(exited.willRestart, true);
    assert.equal(exited.restartInMs, backoffMs);

    // While it is down: a call waits for the new child; the disk changes.
    const during = locks.status();
    fs.rmSync(path.join(stateDir, ids.gone), { recursive: true });
    const stale = writeStaleLock(stateDir, ids.staled);
    await fakes.closed.stop();
    delete fakes.closed;
    writeSession(stateDir, ids.created, { name: 'created' });
    writeSession(stateDir, ids.opened, { name: 'opened' });
    fakes.opened = await startFakeSession(stateDir, ids.opened);
    assert.equal(locks.state, 'exited', `the child came back before the state dir was changed; raise backoffMs above ${backoffMs}`);
    const noted = notes.length;

    await running;
    assert.notEqual(locks.pid, oldPid);
    assert.equal(locks.restarts, 1);
    assert.deepEqual(
      states.map((s) => s.state),
      ['exited', 'starting', 'running'],
    );
    assert.equal(states[1].pid, locks.pid);
    assert.equal((await during).pid, locks.pid, 'the call made while down was answered by the new child');
    assert.equal((await pending).pid, locks.pid, 'the read pending at the crash was sent again, to the new child');

    // One notification, made by the client, carried the difference: only
    // what changed (the untouched session is not in it), and what went.
    const after = notes.slice(noted);
    assert.equal(after.length, 1, `sessionsChanged during the restart: ${JSON.stringify(after)}`);
    const diff = after[0].n;
    assert.deepEqual(diff.removed, [ids.gone]);
    const changed = new Map(diff.changed.map((s) => [s.id, s]));
    assert.deepEqual([...changed.keys()].sort(), [ids.staled, ids.closed, ids.created, ids.opened].sort());
    assert.equal(changed.get(ids.staled).state, 'stale');
    assert.equal(changed.get(ids.staled).holders[0].pid, stale.pid);
    assert.equal(changed.get(ids.closed).state, 'free');
    assert.equal(changed.get(ids.created).state, 'free');
    assert.equal(changed.get(ids.opened).state, 'inUse');

    assert.deepEqual(essence(view.values()), essence((await locks.listSessions()).sessions));

    // The new child's own notifications reach the same listeners.
    await fakes.opened.stop();
    delete fakes.opened;
    for (let i = 0; i < 200 && view.get(ids.opened).state !== 'free'; i++) await new Promise((r) => setTimeout(r, 50));
    assert.equal(view.get(ids.opened).state, 'free', 'no sessionsChanged from the respawned child');
  });

  test('reads pending when the child dies are answered by the next one; forceResume and reclaimStale are not sent again', async (t) => {
    const stateDir = path.join(tmpdir(), 'session-state');
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    const stale = [a, b].map((id) => {
      writeSession(stateDir, id);
      return writeStaleLock(stateDir, id);
    });
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir, restart: { backoffMs: 50 } });
    t.after(() => locks.dispose());
    const oldPid = locks.pid;
    const running = nextState(locks, (s) => s.state === 'running');
    // Stopped, the child reads nothing: every call is written to its stdin and pending when it dies.
    await stopProcess(oldPid);
    const status = locks.status();
    const list = locks.listSessions();
    const verdict = locks.canResume({ sessionId: a });
    const force = locks.forceResume({ sessionId: a });
    const reclaim = locks.reclaimStale({ sessionIds: [b] });
    await sleep(200);
    process.kill(oldPid, 'SIGKILL');

    for (const [call, method] of [[force, 'forceResume'], [reclaim, 'reclaimStale']]) {
      await assert.rejects(call, (err) => {
        assert.equal(err.code, ErrorCodes.ChildExited, err.message);
        assert.equal(err.method, method);
        assert.equal(err.data.signal, 'SIGKILL');
        assert.equal(err.data.mayHaveActed, true, 'written to its stdin: it may have acted');
        assert.match(err.message, /may have acted/);
        return true;
      });
    }
    await running;
    assert.notEqual(locks.pid, oldPid);
    assert.equal((await status).pid, locks.pid, 'status was answered by the new child');
    assert.equal((await list).total, 2);
    assert.equal((await verdict).state, 'stale');
    // Never sent again: the new child would have removed the stale locks.
    await sleep(300);
    for (const s of stale) assert.ok(fs.existsSync(s.lockFile), `${s.lockFile} was removed: an acting call was sent again`);
  });

  test('a read is sent once more, not twice: pending at two crashes in a row, it rejects', async (t) => {
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir: path.join(tmpdir(), 'empty'), restart: { backoffMs: 50 } });
    t.after(() => locks.dispose());
    // The second child is stopped the moment it runs, before the waiting call is sent to it.
    let second;
    locks.onStateChange((s) => {
      if (s.state !== 'running' || second) return;
      second = s.pid;
      process.kill(second, 'SIGSTOP');
    });
    await stopProcess(locks.pid);
    const call = locks.status();
    process.kill(locks.pid, 'SIGKILL');
    await nextState(locks, (s) => s.state === 'running');
    await sleep(100);
    process.kill(second, 'SIGKILL');
    await assert.rejects(call, (err) => {
      assert.equal(err.code, ErrorCodes.ChildExited, err.message);
      assert.match(err.message, new RegExp(`pid ${second}\\b`), 'rejected at the second crash');
      assert.equal(err.data.mayHaveActed, undefined, 'a read has no mayHaveActed');
      return true;
    });
    await nextState(locks, (s) => s.state === 'running');
    assert.equal((await locks.status()).pid, locks.pid, 'the third child serves');
  });

  test('an acting call still queued behind a write the child never read: mayHaveActed is false', async () => {
    const stateDir = path.join(tmpdir(), 'session-state');
    const id = crypto.randomUUID();
    writeSession(stateDir, id);
    const stale = writeStaleLock(stateDir, id);
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir });
    await stopProcess(locks.pid);
    // A request far larger than a pipe holds: its write cannot finish, and the next waits behind it.
    const filler = locks.request('someFutureMethod', { pad: 'x'.repeat(4 << 20) });
    const force = locks.forceResume({ sessionId: id });
    await sleep(200);
    process.kill(locks.pid, 'SIGKILL');
    await assert.rejects(filler, { code: ErrorCodes.ChildExited });
    await assert.rejects(force, (err) => {
      assert.equal(err.code, ErrorCodes.ChildExited, err.message);
      assert.equal(err.data.mayHaveActed, false);
      assert.match(err.message, /never reached it: nothing was done/);
      return true;
    });
    assert.ok(fs.existsSync(stale.lockFile));
    await locks.dispose();
  });

  test('restarts back off exponentially, then give up: waiting calls and exited say so', async () => {
    // A copy of the binary that can be taken away, so that respawning fails.
    const binary = path.join(tmpdir(), 'sessionlocks');
    fs.copyFileSync(hostBinary(), binary);
    fs.chmodSync(binary, 0o755);
    const locks = await SessionLocks.spawn({
      binary,
      stateDir: path.join(tmpdir(), 'empty'),
      restart: { maxRestarts: 3, backoffMs: 50, maxBackoffMs: 150 },
    });
    const states = [];
    locks.onStateChange((s) => states.push(s));
    const final = nextState(locks, (s) => s.state === 'exited' && !s.willRestart);
    fs.rmSync(binary);
    process.kill(locks.pid, 'SIGKILL');
    await nextState(locks, (s) => s.state === 'exited');
    const waiting = locks.listSessions();
    const last = await final;

    assert.deepEqual(
      states.filter((s) => s.state === 'exited').map((s) => s.restartInMs),
      [50, 100, 150, undefined],
      'backoff doubles up to maxBackoffMs, and the last exit has no restart',
    );
    assert.equal(locks.restarts, 3);
    assert.match(last.exit.error?.message ?? '', /ENOENT/);
    await assert.rejects(waiting, (err) => {
      assert.equal(err.code, ErrorCodes.ChildExited);
      assert.match(err.message, /gave up after 3 restarts/);
      return true;
    });
    const exit = await locks.exited;
    assert.equal(exit.expected, false);
    assert.equal(locks.state, 'exited');
    await assert.rejects(locks.status(), { code: ErrorCodes.ChildExited });
    await locks.dispose();
  });

  test('dispose during the backoff stops the restart and rejects waiting calls', async () => {
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir: path.join(tmpdir(), 'empty'), restart: { backoffMs: 300 } });
    const states = [];
    locks.onStateChange((s) => states.push(s));
    const pid = locks.pid;
    process.kill(pid, 'SIGKILL');
    await nextState(locks, (s) => s.state === 'exited');
    const waiting = locks.canResume({ sessionId: crypto.randomUUID() });
    await locks.dispose();
    await assert.rejects(waiting, { code: ErrorCodes.Disposed });
    // Well past the backoff: nothing was spawned.
    await new Promise((r) => setTimeout(r, 800));
    assert.deepEqual(
      states.map((s) => [s.state, s.willRestart]),
      [
        ['exited', true],
        ['exited', false],
      ],
    );
    assert.equal(locks.pid, pid);
    assert.equal(locks.restarts, 0);
    assert.equal((await locks.exited).expected, true);
  });

  test('without a restart policy a crash is the end, and onStateChange says so', async () => {
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir: path.join(tmpdir(), 'empty') });
    const exited = nextState(locks, (s) => s.state === 'exited');
    process.kill(locks.pid, 'SIGKILL');
    const s = await exited;
    assert.equal(s.willRestart, false);
    assert.equal(s.exit.signal, 'SIGKILL');
    assert.deepEqual(await locks.exited, s.exit);
    await assert.rejects(locks.status(), { code: ErrorCodes.ChildExited });
  });
});
