// The sidecar as the IDE sees it: spawn the binary, speak JSON-RPC with
// vscode-jsonrpc over its stdin/stdout (Content-Length framing), and exercise
// every method against a state directory built here: a free session, one
// with a lock naming a dead pid, and one held by a live fake CLI (a real
// process holding a real flock). `make test-node` sets SESSIONLOCKS_BINARY.

import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { once } from 'node:events';
import { after, before, describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  CancellationTokenSource,
  ResponseError,
  StreamMessageReader,
  StreamMessageWriter,
  createMessageConnection,
} from 'vscode-jsonrpc/node';

const here = path.dirname(fileURLToPath(import.meta.url));
const binary =
  process.env.SESSIONLOCKS_BINARY ||
  path.join(here, '..', '..', 'bin', process.platform === 'win32' ? 'sessionlocks.exe' : 'sessionlocks');
const DEAD_PID = 2147483000; // above any pid_max: no process has it

function writeSession(stateDir, id, { pids = [], updatedAt = '2026-01-02T10:00:00.000Z' } = {}) {
  const dir = path.join(stateDir, id);
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(
    path.join(dir, 'workspace.yaml'),
    `id: ${id}\ncwd: ${path.join('/home/dev', id)}\nclient_name: cli\nname: Session ${id}\n` + // this system's kind of path: a POSIX one on Windows says WSL wrote it
      `created_at: 2026-01-01T10:00:00.000Z\nupdated_at: ${updatedAt}\n`,
  );
  for (const pid of pids) fs.writeFileSync(path.join(dir, `inuse.${pid}.lock`), `${pid}\n`);
  return dir;
}

// startFakeCLI runs `sessionlocks _fakecli`, which opens a session the way
// Copilot CLI 1.0.102 does (lock file, then a flocked .hold) and holds it
// until its stdin closes.
async function startFakeCLI(stateDir, id) {
  const child = spawn(binary, ['_fakecli', '--state-dir', stateDir, '--session', id, '--exit-on-eof'], {
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  let out = '';
  for await (const chunk of child.stdout) {
    out += chunk;
    if (out.includes('\n')) break;
  }
  assert.match(out, /^ready \d+/, `fake CLI did not get ready: ${out}`);
  return child;
}

// spawnServer starts `sessionlocks serve` exactly as the IDE does.
function spawnServer(args) {
  const child = spawn(binary, ['serve', ...args], { stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const exited = once(child, 'exit');
  const conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
  const notes = [];
  const waiters = [];
  conn.onNotification('sessionsChanged', (p) => {
    notes.push(p);
    for (const w of waiters.splice(0)) w();
  });
  conn.listen();
  const nextNote = (pred, ms = 10000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching sessionsChanged within ${ms} ms: ${JSON.stringify(notes)}`)), ms);
      const check = () => {
        const hit = notes.find(pred);
        if (hit) {
          clearTimeout(timer);
          resolve(hit);
        } else waiters.push(check);
      };
      check();
    });
  return { child, conn, exited, nextNote, stderr: () => stderr };
}

async function rejectsWith(promise, code, messagePart) {
  await assert.rejects(promise, (err) => {
    assert.ok(err instanceof ResponseError, `not a ResponseError: ${err}`);
    assert.equal(err.code, code, err.message);
    if (messagePart) assert.match(err.message, messagePart);
    return true;
  });
}

describe('sessionlocks serve through vscode-jsonrpc', () => {
  let root, stateDir, fake, srv;

  before(async () => {
    assert.ok(fs.existsSync(binary), `no binary at ${binary}: run make build or set SESSIONLOCKS_BINARY`);
    root = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionlocks-node-'));
    stateDir = path.join(root, 'session-state');
    writeSession(stateDir, 'free-1', { updatedAt: '2026-01-01T10:00:00.000Z' });
    writeSession(stateDir, 'stale-1', { pids: [DEAD_PID], updatedAt: '2026-01-03T10:00:00.000Z' });
    writeSession(stateDir, 'stale-2', { pids: [DEAD_PID + 1], updatedAt: '2026-01-02T10:00:00.000Z' });
    fake = await startFakeCLI(stateDir, 'live-1');
    srv = spawnServer(['--state-dir', stateDir, '--settle', '1ms']);
  });

  after(async () => {
    srv?.conn.dispose();
    srv?.child.kill();
    fake?.stdin.end();
    fake?.kill();
    fs.rmSync(root, { recursive: true, force: true });
  });

  test('status', async () => {
    const st = await srv.conn.sendRequest('status', {});
    assert.equal(st.pid, srv.child.pid);
    assert.equal(st.stateDir, stateDir);
    assert.equal(st.watching, true);
    assert.equal(typeof st.watch.mode, 'string');
    assert.equal(st.platform.os, { win32: 'windows' }[process.platform] ?? process.platform);
    assert.ok(st.cache.ttlMs > 0);
    assert.ok(st.uptimeMs >= 0);
  });

  test('listSessions: every session, newest first, with filters', async () => {
    const all = await srv.conn.sendRequest('listSessions', {});
    const byId = Object.fromEntries(all.sessions.map((s) => [s.id, s]));
    assert.equal(all.total, 4);
    assert.equal(byId['free-1'].state, 'free');
    assert.deepEqual(byId['free-1'].holders, []);
    assert.equal(byId['stale-1'].state, 'stale');
    assert.equal(byId['stale-1'].holders[0].pid, DEAD_PID);
    assert.equal(byId['stale-1'].holders[0].verdict, 'stale');
    assert.equal(byId['live-1'].state, 'inUse');
    assert.equal(byId['live-1'].holders[0].pid, fake.pid);
    assert.equal(byId['live-1'].holders[0].reason, 'hold-locked');
    const updated = all.sessions.map((s) => s.updatedAt);
    assert.deepEqual(updated, [...updated].sort().reverse(), 'newest updatedAt first');
    for (const s of all.sessions) for (const h of s.holders) assert.ok(!Number.isNaN(Date.parse(h.probedAt)));

    const busy = await srv.conn.sendRequest('listSessions', { includeFree: false, limit: 1, offset: 1 });
    assert.equal(busy.total, 3);
    assert.equal(busy.sessions.length, 1);
    const some = await srv.conn.sendRequest('listSessions', { ids: ['stale-2', 'free-1'] });
    assert.deepEqual(some.sessions.map((s) => s.id), ['stale-2', 'free-1']);
  });

  test('canResume', async () => {
    const live = await srv.conn.sendRequest('canResume', { sessionId: 'live-1' });
    assert.equal(live.canResume, false);
    assert.equal(live.state, 'inUse');
    assert.match(live.message, new RegExp(`^In use by pid ${fake.pid}`));
    const stale = await srv.conn.sendRequest('canResume', { sessionId: 'stale-1' });
    assert.equal(stale.canResume, true);
    assert.equal(stale.state, 'stale');
    assert.equal(stale.holders[0].cached, false, 'canResume probes afresh');
    const free = await srv.conn.sendRequest('canResume', { sessionId: 'free-1' });
    assert.deepEqual([free.canResume, free.state, free.holders], [true, 'free', []]);
  });

  test('errors carry codes, messages that name the field, and data', async () => {
    await rejectsWith(srv.conn.sendRequest('canResume', { sessionId: '../x' }), -32602, /sessionId: invalid session id/);
    await rejectsWith(srv.conn.sendRequest('canResume', { sessionID: 'free-1' }), -32602, /did you mean "sessionId"/);
    await rejectsWith(srv.conn.sendRequest('reclaimStale', { sessionIds: ['free-1', '../../etc'] }), -32602, /sessionIds\[1\]/);
    await assert.rejects(srv.conn.sendRequest('canResume', { sessionId: 'missing' }), (err) => {
      assert.equal(err.code, -32001);
      assert.deepEqual(err.data, { sessionId: 'missing', stateDir: err.data.stateDir });
      return true;
    });
    await rejectsWith(srv.conn.sendRequest('listSession', {}), -32601, /did you mean "listSessions"/);
  });

  test('reclaimStale: dry run, then for real; the live holder is kept', async () => {
    const dry = await srv.conn.sendRequest('reclaimStale', { sessionIds: ['stale-1', 'live-1'], dryRun: true });
    assert.equal(dry.dryRun, true);
    assert.deepEqual(dry.reclaimed.map((h) => h.sessionId), ['stale-1']);
    assert.deepEqual(dry.kept.map((h) => h.pid), [fake.pid]);
    assert.ok(fs.existsSync(path.join(stateDir, 'stale-1', `inuse.${DEAD_PID}.lock`)), 'a dry run removes nothing');
    const real = await srv.conn.sendRequest('reclaimStale', { sessionIds: ['stale-1', 'live-1'] });
    assert.deepEqual(real.reclaimed.map((h) => h.sessionId), ['stale-1']);
    assert.deepEqual(real.failed, []);
    assert.ok(!fs.existsSync(path.join(stateDir, 'stale-1', `inuse.${DEAD_PID}.lock`)));
    assert.ok(fs.existsSync(path.join(stateDir, 'live-1', `inuse.${fake.pid}.lock`)), 'the live lock is never removed');
  });

  test('forceResume', async () => {
    const r = await srv.conn.sendRequest('forceResume', { sessionId: 'stale-2' });
    assert.equal(r.sessionId, 'stale-2');
    assert.deepEqual(r.removed.map((h) => h.pid), [DEAD_PID + 1]);
    assert.deepEqual(r.exited, []);
    assert.equal('terminated' in r, false);
    assert.equal(r.session.state, 'free');
  });

  test('sessionsChanged when a lock appears', async () => {
    writeSession(stateDir, 'new-1', { pids: [DEAD_PID + 2] });
    const note = await srv.nextNote((n) => n.changed.some((s) => s.id === 'new-1' && s.state === 'stale'));
    assert.ok(Array.isArray(note.removed));
  });

  test('sessionsChanged when the live holder exits', async () => {
    fake.stdin.end(); // the fake CLI removes its locks and exits, as a clean exit does
    await srv.nextNote((n) => n.changed.some((s) => s.id === 'live-1' && s.state === 'free'));
  });

  test('rpc.discover returns the OpenRPC document', async () => {
    const doc = await srv.conn.sendRequest('rpc.discover', {});
    assert.match(doc.openrpc, /^1\./);
    const names = doc.methods.map((m) => m.name);
    for (const m of ['listSessions', 'canResume', 'reclaimStale', 'forceResume', 'status']) assert.ok(names.includes(m), m);
  });

  test('cancellation is accepted', async () => {
    const cts = new CancellationTokenSource();
    const p = srv.conn.sendRequest('listSessions', {}, cts.token);
    cts.cancel();
    // Either the answer was already on its way or the request was cancelled (-32800).
    try {
      const r = await p;
      assert.ok(Array.isArray(r.sessions));
    } catch (err) {
      assert.equal(err.code, -32800, String(err));
    }
    assert.equal((await srv.conn.sendRequest('status', {})).pid, srv.child.pid, 'still serving');
  });

  test('closing stdin ends the process with status 0', async () => {
    srv.child.stdin.end();
    const [code] = await srv.exited;
    assert.equal(code, 0, srv.stderr());
    assert.doesNotMatch(srv.stderr(), /level=ERROR/);
  });
});

describe('a fresh machine', () => {
  test('a state directory that does not exist yet means no sessions', async () => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionlocks-node-'));
    const srv = spawnServer(['--state-dir', path.join(root, 'missing'), '--no-watch']);
    try {
      const r = await srv.conn.sendRequest('listSessions', {});
      assert.deepEqual([r.total, r.sessions], [0, []]);
      assert.equal((await srv.conn.sendRequest('status', {})).watching, false);
    } finally {
      srv.conn.dispose();
      srv.child.stdin.end();
      await srv.exited;
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});

// Goal (issue 3): listSessions over 1,000 sessions through the Node client
// <= 5 ms warm. Measured and reported here, not asserted: timing belongs in
// benchmarks, and a loaded CI machine must not fail the build.
describe('listSessions over 1,000 sessions (measured)', () => {
  test('warm latency', async (t) => {
    const root = fs.mkdtempSync(path.join(os.tmpdir(), 'sessionlocks-node-'));
    const stateDir = path.join(root, 'session-state');
    for (let i = 0; i < 1000; i++) {
      writeSession(stateDir, `s-${String(i).padStart(4, '0')}`, { pids: i % 10 === 0 ? [DEAD_PID + i] : [] });
    }
    const srv = spawnServer(['--state-dir', stateDir, '--no-watch']);
    try {
      const first = await srv.conn.sendRequest('listSessions', {});
      assert.equal(first.total, 1000);
      const times = [];
      for (let i = 0; i < 50; i++) {
        const start = process.hrtime.bigint();
        const r = await srv.conn.sendRequest('listSessions', {});
        times.push(Number(process.hrtime.bigint() - start) / 1e6);
        assert.equal(r.sessions.length, 1000);
      }
      times.sort((a, b) => a - b);
      t.diagnostic(`listSessions, 1,000 sessions, warm: median ${times[25].toFixed(2)} ms, p90 ${times[45].toFixed(2)} ms`);
    } finally {
      srv.conn.dispose();
      srv.child.stdin.end();
      await srv.exited;
      fs.rmSync(root, { recursive: true, force: true });
    }
  });
});
