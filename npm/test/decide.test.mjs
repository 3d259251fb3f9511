// Decisions through the typed client, with the real binary and real
// processes (issue 16): forceResume acts on the canResume answer the user
// decided on and on nothing else (expect), and a forceResume or reclaimStale
// that is aborted either did nothing (RequestCancelled, the server's word) or
// resolves, late, with what it did: the client never drops that answer.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostBinary, npmDir, startFakeSession, tmpdir, writeSession, writeStaleLock } from '../scripts/testenv.mjs';

const require = createRequire(import.meta.url);
const { SessionLocks, SessionLocksError, SessionChangedError, ErrorCodes } = require('../sessionlocks');

const files = (stateDir, id, pid) => ['lock', 'hold'].map((ext) => path.join(stateDir, id, `inuse.${pid}.${ext}`));
const exists = (file) => fs.existsSync(file);

/** A client on a fresh state dir; t.after disposes it and stops the fake CLIs it lists. */
async function setup(t, { args = [] } = {}) {
  const stateDir = path.join(tmpdir(), 'session-state');
  fs.mkdirSync(stateDir, { recursive: true });
  const fakes = [];
  const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir, args });
  t.after(async () => {
    await locks.dispose();
    await Promise.all(fakes.map((f) => f.stop()));
  });
  return { stateDir, locks, fakes };
}

// flock(1) from util-linux, with --no-fork (2.33 and later): macOS has none.
const flockHelp = spawnSync('flock', ['--help'], { encoding: 'utf8' });
const noFlock = !flockHelp.stdout?.includes('--no-fork') && 'needs flock(1) with --no-fork (util-linux)';

/**
 * Holds the CLI's operation lock on session id with flock(1), as a CLI
 * opening the session does (`flock -x <lock> sleep 60`, sleep exec'd in
 * flock's own process); resolves with its child process once it is held.
 */
async function holdOperationLock(t, stateDir, id) {
  const file = path.join(stateDir, '.session-operation-locks', `${id}.lock`);
  fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 });
  const holder = spawn('flock', ['--no-fork', '-x', file, 'sh', '-c', 'echo locked; exec sleep 60'], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise((resolve) => holder.on('exit', resolve));
  t.after(() => {
    holder.kill('SIGKILL');
    return exited;
  });
  await new Promise((resolve, reject) => {
    holder.on('error', reject);
    holder.stdout.on('data', (chunk) => String(chunk).includes('locked') && resolve());
    exited.then((code) => reject(new Error(`flock exited with ${code} before it held ${file}`)));
  });
  return holder;
}

describe('forceResume with the canResume answer the user decided on', () => {
  test('a CLI that opened the session since: SessionChanged with the fresh answer, its files kept; then the fresh answer succeeds', async (t) => {
    const { stateDir, locks, fakes } = await setup(t);
    const id = crypto.randomUUID();
    writeSession(stateDir, id);
    const stale = writeStaleLock(stateDir, id);

    const seen = await locks.canResume({ sessionId: id });
    assert.equal(seen.state, 'stale');
    assert.equal(seen.canResume, true);
    assert.equal(typeof seen.token, 'string');

    // While the IDE asks "Force resume?", a CLI opens the session.
    const cli = await startFakeSession(stateDir, id);
    fakes.push(cli);

    let changed;
    await assert.rejects(locks.forceResume({ expect: seen, terminate: true }), (err) => {
      changed = err;
      return true;
    });
    assert.ok(changed instanceof SessionLocksError, `not a SessionLocksError: ${changed}`);
    assert.ok(changed instanceof SessionChangedError, 'not a SessionChangedError');
    assert.equal(changed.code, ErrorCodes.SessionChanged);
    assert.equal(changed.method, 'forceResume');
    const fresh = changed.data;
    assert.equal(fresh.sessionId, id);
    assert.equal(fresh.canResume, false);
    assert.equal(fresh.state, 'inUse');
    const holder = fresh.holders.find((h) => h.pid === cli.pid);
    assert.ok(holder, `the fresh answer does not show the new CLI (pid ${cli.pid}): ${JSON.stringify(fresh.holders)}`);
    assert.equal(holder.verdict, 'live');
    assert.notEqual(fresh.token, seen.token);
    for (const f of files(stateDir, id, cli.pid)) assert.ok(exists(f), `the new CLI's ${path.basename(f)} was removed`);
    assert.ok(exists(stale.lockFile), 'nothing is done when the session changed: the stale lock is still there');

    // Asked again with what is there now, the user takes the session over.
    const taken = await locks.forceResume({ sessionId: id, expect: fresh, terminate: true });
    assert.deepEqual(taken.signalled, [cli.pid]);
    assert.deepEqual(taken.exited, [cli.pid]);
    assert.deepEqual(taken.stillRunning, []);
    assert.deepEqual(taken.removed.map((h) => h.pid).sort(), [stale.pid, cli.pid].sort());
    assert.equal(taken.session.state, 'free');
    assert.equal((await cli.exited).signal, 'SIGTERM');
    for (const f of [...files(stateDir, id, cli.pid), stale.lockFile, stale.holdFile]) assert.ok(!exists(f), `${f} is still there`);
  });

  test('expect as a token, and mistakes the client catches before sending', async (t) => {
    const { stateDir, locks } = await setup(t);
    const [a, b] = [crypto.randomUUID(), crypto.randomUUID()];
    writeSession(stateDir, a);
    writeSession(stateDir, b);
    const stale = writeStaleLock(stateDir, a);
    const seen = await locks.canResume({ sessionId: a });
    await assert.rejects(locks.forceResume({ sessionId: b, expect: seen }), (err) => err instanceof TypeError && /not the session/.test(err.message));
    await assert.rejects(locks.forceResume({ expect: { ...seen, token: undefined } }), (err) => err instanceof TypeError && /no token/.test(err.message));
    await assert.rejects(locks.forceResume({ sessionId: a, expect: 42 }), TypeError);
    await assert.rejects(locks.forceResume({ sessionId: a, expect: '' }), (err) => err instanceof TypeError && /empty string/.test(err.message));
    assert.ok(exists(stale.lockFile));
    const r = await locks.forceResume({ sessionId: a, expect: seen.token });
    assert.deepEqual(r.removed.map((h) => h.pid), [stale.pid]);
    assert.equal(r.session.state, 'free');
  });
});

describe('what forceResume sends', () => {
  // A real process over a real pipe that answers every request with what it
  // received: the client's params as they reach the wire.
  const echo = () => {
    const code =
      "const rpc = require('vscode-jsonrpc/node');" +
      'const c = rpc.createMessageConnection(new rpc.StreamMessageReader(process.stdin), new rpc.StreamMessageWriter(process.stdout));' +
      'c.onRequest((method, params) => ({ method, params })); c.listen();';
    const child = spawn(process.execPath, ['-e', code], { cwd: npmDir, stdio: 'pipe' });
    return new SessionLocks(child);
  };
  const answer = { sessionId: 's1', canResume: false, state: 'inUse', token: 'v1:4242.AAAAAAAAAAAA', holders: [], message: '' };

  test('an answer becomes its token and session; expect: undefined sends no expect; "" is refused unsent', async (t) => {
    const locks = echo();
    t.after(() => locks.dispose());
    assert.deepEqual((await locks.forceResume({ expect: answer, terminate: true })).params, { sessionId: 's1', expect: answer.token, terminate: true });
    assert.deepEqual((await locks.forceResume({ sessionId: 's1', expect: 'v1:' })).params, { sessionId: 's1', expect: 'v1:' });
    const plain = (await locks.forceResume({ sessionId: 's1', expect: undefined })).params;
    assert.deepEqual(Object.keys(plain), ['sessionId']);
    for (const expect of ['', { ...answer, token: '' }, { ...answer, token: undefined }]) {
      await assert.rejects(locks.forceResume({ sessionId: 's1', expect }), TypeError);
    }
    // Nothing refused reached the wire: the next request is answered as the next one sent.
    assert.deepEqual((await locks.status()).method, 'status');
  });
});

describe('an aborted forceResume or reclaimStale', { skip: process.platform === 'win32' && 'SIGTERM, flock(1)' }, () => {
  test('aborted after it signalled a CLI that ignores SIGTERM: resolves late with stillRunning, the CLI keeps its lock', async (t) => {
    const { stateDir, locks, fakes } = await setup(t);
    const id = crypto.randomUUID();
    writeSession(stateDir, id);
    const cli = await startFakeSession(stateDir, id, { ignoreTerm: true });
    fakes.push(cli);

    const ac = new AbortController();
    let abortedAt;
    cli.termIgnored.then(() =>
      setTimeout(() => {
        abortedAt = Date.now();
        ac.abort();
      }, 300),
    );
    const started = Date.now();
    const r = await locks.forceResume({ sessionId: id, terminate: true, graceMs: 2000 }, { signal: ac.signal });
    const settledAt = Date.now();
    assert.ok(ac.signal.aborted && abortedAt, 'the signal was not aborted before the answer');
    assert.ok(settledAt - started >= 1900, `answered after ${settledAt - started} ms, before the 2 s grace was over`);
    assert.ok(settledAt > abortedAt, 'resolved before the abort');
    assert.deepEqual(r.signalled, [cli.pid]);
    assert.deepEqual(r.stillRunning, [cli.pid]);
    assert.deepEqual(r.exited, []);
    assert.deepEqual(r.removed, []);
    assert.deepEqual(r.kept.map((h) => h.pid), [cli.pid]);
    assert.equal(r.session.state, 'inUse');
    for (const f of files(stateDir, id, cli.pid)) assert.ok(exists(f), `the running CLI's ${path.basename(f)} was removed`);
    assert.equal(cli.child.exitCode, null, 'the CLI is still running');
    assert.equal((await locks.canResume({ sessionId: id })).state, 'inUse');
  });

  test('aborted while the server waits for the operation lock: RequestCancelled, nothing removed or signalled', { skip: noFlock }, async (t) => {
    // No watcher: the request goes straight to the operation lock, for
    // which the server waits up to 500 ms.
    const { stateDir, locks, fakes } = await setup(t, { args: ['--no-watch'] });
    const id = crypto.randomUUID();
    writeSession(stateDir, id);
    const stale = writeStaleLock(stateDir, id);
    const cli = await startFakeSession(stateDir, id);
    fakes.push(cli);
    await holdOperationLock(t, stateDir, id);

    const ac = new AbortController();
    setTimeout(() => ac.abort(new Error('the user closed the dialog')), 150);
    await assert.rejects(locks.forceResume({ sessionId: id, terminate: true }, { signal: ac.signal }), (err) => {
      assert.ok(err instanceof SessionLocksError, String(err));
      assert.equal(err.code, ErrorCodes.RequestCancelled, err.message);
      // The server's answer, not the client giving up on it.
      assert.match(err.message, /cancelled before it did anything/);
      assert.equal(err.cause?.message, 'the user closed the dialog');
      return true;
    });
    for (const f of [...files(stateDir, id, cli.pid), stale.lockFile, stale.holdFile]) assert.ok(exists(f), `${f} was removed`);
    await sleep(100);
    assert.equal(cli.child.exitCode, null, 'the CLI was signalled');
    assert.equal(cli.child.signalCode, null, 'the CLI was signalled');
  });

  test('reclaimStale aborted after it reclaimed one session: resolves with cancelled and what it removed', { skip: noFlock }, async (t) => {
    const { stateDir, locks } = await setup(t, { args: ['--no-watch'] });
    const ids = [crypto.randomUUID(), crypto.randomUUID(), crypto.randomUUID()];
    const stale = ids.map((id) => {
      writeSession(stateDir, id);
      return writeStaleLock(stateDir, id);
    });
    // The second session's operation lock is held: the reclaim waits there.
    await holdOperationLock(t, stateDir, ids[1]);
    const ac = new AbortController();
    const call = locks.reclaimStale({ sessionIds: ids }, { signal: ac.signal });
    while (exists(stale[0].lockFile)) await sleep(2);
    ac.abort();
    const r = await call;
    assert.equal(r.cancelled, true);
    assert.deepEqual(r.reclaimed.map((h) => h.pid), [stale[0].pid]);
    assert.deepEqual(r.failed, []);
    assert.ok(exists(stale[1].lockFile) && exists(stale[2].lockFile), 'it went on after the abort');
  });

  test('a child that dies or a dispose while an aborted call waits still rejects it', async (t) => {
    for (const end of ['dispose', 'SIGKILL']) {
      const { stateDir, locks, fakes } = await setup(t);
      const id = crypto.randomUUID();
      writeSession(stateDir, id);
      const cli = await startFakeSession(stateDir, id, { ignoreTerm: true });
      fakes.push(cli);
      const ac = new AbortController();
      const call = locks.forceResume({ sessionId: id, terminate: true, graceMs: 20_000 }, { signal: ac.signal });
      await cli.termIgnored;
      ac.abort();
      await sleep(100);
      const started = Date.now();
      if (end === 'dispose') locks.dispose();
      else process.kill(locks.pid, 'SIGKILL');
      await assert.rejects(call, (err) => {
        assert.equal(err.code, end === 'dispose' ? ErrorCodes.Disposed : ErrorCodes.ChildExited, `${end}: ${err.message}`);
        assert.equal(err.data?.mayHaveActed, true, `${end}: it had signalled the CLI`);
        return true;
      });
      assert.ok(Date.now() - started < 5000, `${end}: rejected only after ${Date.now() - started} ms`);
    }
  });

  test('with a restart policy, a forceResume whose child was SIGKILLed mid-call is not sent again', async (t) => {
    const stateDir = path.join(tmpdir(), 'session-state');
    const id = crypto.randomUUID();
    writeSession(stateDir, id);
    const cli = await startFakeSession(stateDir, id, { ignoreTerm: true });
    const locks = await SessionLocks.spawn({ binary: hostBinary(), stateDir, restart: { backoffMs: 50 } });
    t.after(async () => {
      await locks.dispose();
      await cli.stop();
    });
    const running = new Promise((resolve) => locks.onStateChange((s) => s.state === 'running' && resolve()));
    const call = locks.forceResume({ sessionId: id, terminate: true, graceMs: 20_000 });
    await cli.termIgnored;
    process.kill(locks.pid, 'SIGKILL');
    await assert.rejects(call, (err) => {
      assert.equal(err.code, ErrorCodes.ChildExited, err.message);
      assert.equal(err.data.mayHaveActed, true);
      return true;
    });
    await running;
    await sleep(500);
    assert.equal(cli.termsIgnored(), 1, 'the CLI was signalled again: the call was repeated');
    for (const f of files(stateDir, id, cli.pid)) assert.ok(exists(f), `the running CLI's ${path.basename(f)} was removed`);
    assert.equal((await locks.canResume({ sessionId: id })).state, 'inUse');
  });

  test('a read-only call still rejects at once', async (t) => {
    const { locks } = await setup(t);
    const ac = new AbortController();
    const call = locks.canResume({ sessionId: crypto.randomUUID() }, { signal: ac.signal });
    ac.abort();
    await assert.rejects(call, { code: ErrorCodes.RequestCancelled, message: 'canResume: cancelled' });
  });
});
