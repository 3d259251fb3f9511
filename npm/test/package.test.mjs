// The packages as a user gets them: npm pack the main package and this
// platform's package, npm install the tarballs into an empty project, and use
// the sidecar only through what got installed: binary resolution, the typed
// client against a real state directory (real flocks held by the fake CLI),
// sessionsChanged, dispose, a crashing child, the bin shim, the errors when
// the platform package is missing (omitted, or never installed), and what
// every tarball ships (LICENSE, license, repository, engines).
//
// Only the host's platform package is built here (with the binary `make`
// built, SESSIONLOCKS_BINARY); `make npm` builds all six. With
// SESSIONLOCKS_PACKED=dist/npm the tests install the tarballs `make npm` left
// there instead, as the release workflow does before it publishes them.

import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import { binaryTarget, key, pack, platforms, readPacked } from '../scripts/pack.mjs';
import {
  hostBinary,
  installMain,
  npm,
  packHost,
  projectDir,
  repoRoot,
  startFakeSession,
  stopProcess,
  tmpdir,
  waitFor,
  writeSession,
  writeStaleLock,
} from '../scripts/testenv.mjs';

const host = platforms.find((p) => p.platform === process.platform && p.arch === process.arch);
const MAIN = '@copilot-ide/sessionlocks';
const HOST_PKG = host && `${MAIN}-${key(host)}`;
const openrpc = JSON.parse(fs.readFileSync(path.join(repoRoot, 'schema', 'openrpc.json'), 'utf8'));

const prepacked = process.env.SESSIONLOCKS_PACKED;
let packed; // {version, tarballs, packed}
let project; // the temporary project's directory
let sl; // the installed package's exports

before(() => {
  assert.ok(host, `no platform package for ${process.platform}-${process.arch}`);
  const binary = hostBinary();
  // From here on the package must find the binary by itself.
  delete process.env.SESSIONLOCKS_BINARY;
  packed = prepacked ? readPacked(prepacked) : packHost(binary);
  assert.ok(packed.tarballs[MAIN] && packed.tarballs[HOST_PKG], `no ${MAIN} or ${HOST_PKG} tarball in ${Object.values(packed.tarballs)}`);
  project = projectDir('app');
  installMain(project, packed.tarballs[MAIN], { platformTarball: packed.tarballs[HOST_PKG] });
  sl = createRequire(path.join(project, 'package.json'))(MAIN);
});

describe('installed packages', () => {
  test('the main package declares every platform package at its own exact version', () => {
    const manifest = JSON.parse(fs.readFileSync(path.join(project, 'node_modules', MAIN, 'package.json'), 'utf8'));
    assert.deepEqual(Object.keys(manifest.dependencies), ['vscode-jsonrpc']);
    assert.deepEqual(
      manifest.optionalDependencies,
      Object.fromEntries(platforms.map((p) => [`${MAIN}-${key(p)}`, packed.version])),
    );
    const lock = JSON.parse(fs.readFileSync(path.join(project, 'package-lock.json'), 'utf8'));
    const entry = lock.packages[`node_modules/${HOST_PKG}`];
    assert.ok(entry, `${HOST_PKG} was not installed`);
    assert.equal(entry.optional, true, 'installed as an optional dependency');
    assert.deepEqual(entry.os, [host.platform]);
    assert.deepEqual(entry.cpu, [host.arch]);
  });

  test('binaryPath() resolves to the platform package, and SESSIONLOCKS_BINARY overrides it', () => {
    const expected = path.join(project, 'node_modules', HOST_PKG, 'bin', process.platform === 'win32' ? 'sessionlocks.exe' : 'sessionlocks');
    assert.equal(sl.binaryPath(), expected);
    if (process.platform !== 'win32') assert.ok(fs.statSync(expected).mode & 0o111, 'the binary is executable');
    const other = hostBinary();
    assert.equal(sl.binaryPath({ env: { SESSIONLOCKS_BINARY: other } }), other);
  });

  test('the installed binary reports the version of its packages', { skip: !prepacked && 'only for tarballs from make npm (SESSIONLOCKS_PACKED)' }, () => {
    const out = execFileSync(sl.binaryPath(), ['version'], { encoding: 'utf8' });
    assert.equal(out.split(' ')[1], packed.version, out);
  });

  test('packing checks that each binary is built for its package', () => {
    assert.deepEqual(binaryTarget(hostBinary()), { goos: host.goos, goarch: host.goarch });
    const other = platforms.find((p) => p.goarch !== host.goarch);
    assert.throws(
      () => pack({ version: '0.0.0-test', out: tmpdir(), only: [key(other)], binary: hostBinary() }),
      new RegExp(`is ${host.goos}/${host.goarch}, but the package ${MAIN}-${key(other)} is for ${other.goos}/${other.goarch}`),
    );
  });

  test('ES modules import the CommonJS package by name', () => {
    const script = path.join(project, 'esm.mjs');
    fs.writeFileSync(
      script,
      "import { SessionLocks, SessionLocksError, SessionChangedError, ErrorCodes, binaryPath, BinaryNotFoundError, platformPackageName, platforms } from '@copilot-ide/sessionlocks';\n" +
        'console.log([SessionLocks, SessionLocksError, SessionChangedError, ErrorCodes, binaryPath, BinaryNotFoundError, platformPackageName, platforms].map((x) => typeof x).join(" "));\n',
    );
    const out = execFileSync(process.execPath, [script], { cwd: project, encoding: 'utf8' });
    assert.equal(out.trim(), 'function function function object function function function object');
  });

  test('the bin shim runs the binary with inherited stdio and its exit code', () => {
    const shim = path.join(project, 'node_modules', '.bin', 'sessionlocks');
    const out = execFileSync(shim, ['schema'], { encoding: 'utf8' });
    assert.deepEqual(JSON.parse(out), openrpc);
    const bad = spawnSync(shim, ['no-such-command'], { encoding: 'utf8' });
    assert.equal(bad.status, 2);
    assert.match(bad.stderr, /unknown command "no-such-command"/);
  });

  test('npx @copilot-ide/sessionlocks runs the installed binary (never the unscoped name, which nobody holds)', () => {
    // --no: fail rather than fetch from the registry; the project's own install must be what runs.
    const out = npm(['exec', '--no', '--', MAIN, 'version'], project);
    assert.match(out, /^sessionlocks \S+ go/);
  });

  test('the bin shim reports a binary that cannot be started in one line, with no stack', { skip: process.platform !== 'linux' && 'ETXTBSY is Linux\'s' }, () => {
    // A binary open for writing (being replaced) makes spawn() throw ETXTBSY rather than emit it.
    const copy = path.join(tmpdir(), 'sessionlocks');
    fs.copyFileSync(hostBinary(), copy);
    fs.chmodSync(copy, 0o755);
    const fd = fs.openSync(copy, 'r+');
    try {
      const shim = path.join(project, 'node_modules', '.bin', 'sessionlocks');
      const r = spawnSync(shim, ['version'], { encoding: 'utf8', env: { ...process.env, SESSIONLOCKS_BINARY: copy } });
      assert.equal(r.status, 1);
      assert.equal(r.stderr, `sessionlocks: cannot run ${copy}: spawn ETXTBSY\n`);
    } finally {
      fs.closeSync(fd);
    }
  });
});

test("README's install before a release: the two tarballs, as the commands there install them", { skip: process.platform === 'win32' && 'a POSIX shell' }, async () => {
  const text = fs.readFileSync(path.join(repoRoot, 'README.md'), 'utf8');
  const block = /```sh\n(make npm[^\n]*\n[\s\S]*?)```/.exec(text.slice(text.indexOf('## In an IDE')));
  assert.ok(block, 'no ```sh block starting with make npm under "## In an IDE"');
  // make npm is what packHost did; cd is into the app, which is dir here.
  const lines = block[1].split('\n').filter((l) => l && !/^(make npm|cd )/.test(l));
  const script = lines.join('\n').replaceAll('../sessionlocks/dist/npm', path.dirname(packed.tarballs[MAIN])).replaceAll('linux-x64', key(host));
  const dir = projectDir('from-readme');
  const r = spawnSync('sh', ['-c', script], { cwd: dir, encoding: 'utf8' });
  assert.equal(r.status, 0, `${script}\n${r.stdout}${r.stderr}`);
  const pkg = createRequire(path.join(dir, 'package.json'))(MAIN);
  assert.equal(pkg.binaryPath(), path.join(dir, 'node_modules', HOST_PKG, 'bin', 'sessionlocks'));
  const locks = await pkg.SessionLocks.spawn({ stateDir: path.join(tmpdir(), 'none') });
  assert.equal(locks.version, execFileSync(hostBinary(), ['version'], { encoding: 'utf8' }).split(' ')[1]);
  await locks.dispose();
});

describe('the client, through the installed package', () => {
  let stateDir;
  let client;
  const ids = { free: crypto.randomUUID(), stale: crypto.randomUUID(), live: crypto.randomUUID(), force: crypto.randomUUID() };
  let stale;
  const fakes = {};

  before(async () => {
    stateDir = path.join(tmpdir(), 'session-state');
    const day = 24 * 3600 * 1000;
    writeSession(stateDir, ids.free, { name: 'free', updatedAt: new Date(Date.now() - 4 * day) });
    writeSession(stateDir, ids.stale, { name: 'stale', updatedAt: new Date(Date.now() - 3 * day) });
    stale = writeStaleLock(stateDir, ids.stale);
    writeSession(stateDir, ids.live, { name: 'live', updatedAt: new Date(Date.now() - 2 * day) });
    writeSession(stateDir, ids.force, { name: 'force', updatedAt: new Date(Date.now() - 1 * day) });
    fakes.live = await startFakeSession(stateDir, ids.live);
    fakes.force = await startFakeSession(stateDir, ids.force);
    client = await sl.SessionLocks.spawn({ stateDir });
  });

  after(async () => {
    await client?.dispose();
    await Promise.all(Object.values(fakes).map((f) => f.stop()));
  });

  test('status', async () => {
    const st = await client.status();
    assert.equal(st.pid, client.pid);
    assert.equal(st.stateDir, stateDir);
    assert.ok(st.version, 'version');
    assert.equal(typeof st.uptimeMs, 'number');
    assert.equal(typeof st.cache.ttlMs, 'number');
    assert.equal(st.platform.os, host.goos);
    assert.equal(st.platform.arch, host.goarch);
    // fileSystem names the state dir's file system where the OS tells it (ext4, tmpfs, apfs…).
    if (st.platform.fileSystem !== undefined) assert.equal(typeof st.platform.fileSystem, 'string');
  });

  test('listSessions', async () => {
    const all = await client.listSessions();
    assert.equal(all.stateDir, stateDir);
    assert.equal(all.total, 4);
    // Newest updatedAt first.
    assert.deepEqual(all.sessions.map((s) => s.id), [ids.force, ids.live, ids.stale, ids.free]);
    const byId = Object.fromEntries(all.sessions.map((s) => [s.id, s]));
    assert.equal(byId[ids.free].state, 'free');
    assert.deepEqual(byId[ids.free].holders, []);
    assert.equal(byId[ids.free].name, 'free');
    assert.equal(byId[ids.stale].state, 'stale');
    assert.equal(byId[ids.stale].holders[0].pid, stale.pid);
    assert.equal(byId[ids.stale].holders[0].verdict, 'stale');
    assert.equal(byId[ids.live].state, 'inUse');
    assert.equal(byId[ids.live].holders[0].pid, fakes.live.pid);
    assert.equal(byId[ids.live].holders[0].verdict, 'live');

    const locked = await client.listSessions({ includeFree: false });
    assert.ok(!locked.sessions.some((s) => s.id === ids.free), 'includeFree: false lists a free session');
    const some = await client.listSessions({ ids: [ids.live] });
    assert.deepEqual(some.sessions.map((s) => s.id), [ids.live]);
    const page = await client.listSessions({ limit: 1, offset: 1 });
    assert.equal(page.total, 4);
    assert.deepEqual(page.sessions.map((s) => s.id), [ids.live]);
  });

  test('canResume', async () => {
    const live = await client.canResume({ sessionId: ids.live });
    assert.equal(live.canResume, false);
    assert.equal(live.state, 'inUse');
    assert.match(live.message, new RegExp(String(fakes.live.pid)));
    const free = await client.canResume({ sessionId: ids.free });
    assert.equal(free.canResume, true);
    assert.equal(free.state, 'free');
  });

  test('errors are SessionLocksError with the JSON-RPC code and data', async () => {
    const missing = crypto.randomUUID();
    await assert.rejects(client.canResume({ sessionId: missing }), (err) => {
      assert.ok(err instanceof sl.SessionLocksError);
      assert.equal(err.code, sl.ErrorCodes.SessionNotFound);
      assert.equal(err.method, 'canResume');
      assert.equal(err.data?.sessionId, missing);
      return true;
    });
    await assert.rejects(client.canResume({ sessionId: '../etc' }), (err) => {
      assert.equal(err.code, sl.ErrorCodes.InvalidParams);
      assert.match(err.message, /sessionId/);
      return true;
    });
    await assert.rejects(client.request('noSuchMethod', {}), { code: sl.ErrorCodes.MethodNotFound });
  });

  test('reclaimStale: a dry run removes nothing, then the stale lock goes and live ones stay', async () => {
    const dry = await client.reclaimStale({ dryRun: true });
    assert.equal(dry.dryRun, true, 'a dry run says it was one');
    assert.deepEqual(dry.reclaimed.map((h) => h.pid), [stale.pid]);
    assert.ok(fs.existsSync(stale.lockFile), 'dry run removed the lock');
    const done = await client.reclaimStale({});
    assert.equal(done.dryRun, undefined);
    assert.deepEqual(done.reclaimed.map((h) => h.pid), [stale.pid]);
    assert.deepEqual(done.failed, []);
    assert.ok(!fs.existsSync(stale.lockFile) && !fs.existsSync(stale.holdFile), 'stale files still there');
    const kept = done.kept.map((h) => h.pid).sort();
    assert.deepEqual(kept, [fakes.live.pid, fakes.force.pid].sort());
    assert.equal((await client.canResume({ sessionId: ids.live })).canResume, false);
  });

  test('forceResume with terminate ends the holder and frees the session', async () => {
    const r = await client.forceResume({ sessionId: ids.force, terminate: true, graceMs: 5000 });
    assert.equal(r.sessionId, ids.force);
    assert.deepEqual(r.exited, [fakes.force.pid]);
    assert.equal('terminated' in r, false, 'terminated is gone: exited says it');
    assert.deepEqual(r.removed.map((h) => h.pid), [fakes.force.pid]);
    assert.equal(r.session.state, 'free');
    const exit = await fakes.force.exited;
    assert.equal(exit.signal, 'SIGTERM');
  });

  test('discover returns the committed OpenRPC document', async () => {
    assert.deepEqual(await client.discover(), openrpc);
  });

  test('sessionsChanged arrives when a CLI opens a session', async () => {
    const id = crypto.randomUUID();
    const seen = [];
    const changed = waitFor(
      (listener) => client.onSessionsChanged((n) => { seen.push(n); listener(n); }),
      (n) => n.changed.some((s) => s.id === id && s.state === 'inUse'),
      10_000,
      'TODO(watch): no sessionsChanged notification for a new session within 10 s; the watcher (watch/) must push one ' +
        `after a CLI opens a session. Notifications seen: ${JSON.stringify(seen).slice(0, 500)}`,
    );
    writeSession(stateDir, id, { name: 'new' });
    fakes.fresh = await startFakeSession(stateDir, id);
    const n = await changed;
    assert.ok(Array.isArray(n.removed));
    const s = n.changed.find((c) => c.id === id);
    assert.equal(s.holders[0].pid, fakes.fresh.pid);
  });

  test('a disposed listener hears nothing more', () => {
    let calls = 0;
    const sub = client.onSessionsChanged(() => calls++);
    sub.dispose();
    assert.equal(calls, 0);
    assert.doesNotThrow(() => sub.dispose());
  });
});

describe('answers are frozen', () => {
  test('listings, verdicts and notifications: writing throws, copies are the caller\'s own', async () => {
    const stateDir = path.join(tmpdir(), 'session-state');
    const id = crypto.randomUUID();
    writeSession(stateDir, id);
    const client = await sl.SessionLocks.spawn({ stateDir });
    try {
      const list = await client.listSessions();
      for (const v of [list, list.sessions, list.sessions[0], list.sessions[0].holders]) assert.ok(Object.isFrozen(v));
      assert.throws(() => {
        list.sessions[0].state = 'inUse';
      }, TypeError);
      assert.throws(() => list.sessions.push({}), TypeError);
      const mine = [...list.sessions].map((s) => ({ ...s, pinned: true }));
      assert.equal(mine[0].pinned, true);
      const verdict = await client.canResume({ sessionId: id });
      assert.ok(Object.isFrozen(verdict) && Object.isFrozen(verdict.holders));
      assert.ok(Object.isFrozen(await client.status()));

      const change = waitFor((l) => client.onSessionsChanged(l), (n) => n.changed.some((s) => s.id === id && s.state === 'stale'), 10_000, 'no sessionsChanged');
      writeStaleLock(stateDir, id);
      const n = await change;
      assert.ok(Object.isFrozen(n) && Object.isFrozen(n.changed) && Object.isFrozen(n.changed[0].holders[0]));
    } finally {
      await client.dispose();
    }
  });
});

describe('the child process', () => {
  const stateDir = () => path.join(tmpdir(), 'empty-state');

  test('dispose rejects pending calls, ends the child and is idempotent', async () => {
    const c = await sl.SessionLocks.spawn({ stateDir: stateDir() });
    const calls = [c.status(), c.listSessions(), c.canResume({ sessionId: crypto.randomUUID() })];
    const disposed = c.dispose();
    for (const call of calls) {
      await assert.rejects(call, (err) => err instanceof sl.SessionLocksError && err.code === sl.ErrorCodes.Disposed);
    }
    await disposed;
    const exit = await c.exited;
    assert.equal(exit.expected, true);
    // stdin EOF is enough: the server exits on its own, no signal needed.
    assert.equal(exit.signal, null);
    assert.equal(exit.code, 0);
    await assert.rejects(c.status(), { code: sl.ErrorCodes.Disposed });
    await c.dispose();
  });

  test('dispose escalates to SIGTERM, then SIGKILL, for a child that ignores EOF', { skip: process.platform === 'win32' }, async (t) => {
    // Not the server (which exits on EOF) but a process that will not: what
    // dispose must still end. The constructor takes any spawned child.
    // The child says "ready" on stderr once its SIGTERM handler is in place;
    // a signal before that would test nothing.
    const stubborn = async (ignoreTerm) => {
      const code = `${ignoreTerm ? "process.on('SIGTERM', () => {});" : ''} process.stderr.write('ready\\n'); setInterval(() => {}, 1000)`;
      const child = spawn(process.execPath, ['-e', code], { stdio: ['pipe', 'pipe', 'pipe'] });
      let ready;
      const isReady = new Promise((resolve) => (ready = resolve));
      const c = new sl.SessionLocks(child, { disposeGraceMs: 200, onStderr: (s) => s.includes('ready') && ready() });
      await isReady;
      return c;
    };
    await t.test('SIGTERM ends it', async () => {
      const c = await stubborn(false);
      await c.dispose();
      const exit = await c.exited;
      assert.equal(exit.signal, 'SIGTERM');
      assert.equal(exit.expected, true);
    });
    await t.test('SIGKILL when it ignores SIGTERM', async () => {
      const c = await stubborn(true);
      await c.dispose();
      assert.equal((await c.exited).signal, 'SIGKILL');
    });
  });

  test('a crash (SIGKILL) fires exited and rejects pending calls', { skip: process.platform === 'win32' }, async () => {
    const c = await sl.SessionLocks.spawn({ stateDir: stateDir() });
    let heard;
    c.onExit((info) => (heard = info));
    // Stopped, the child cannot answer before it dies: the call is surely pending.
    await stopProcess(c.pid);
    const pending = c.status();
    process.kill(c.pid, 'SIGKILL');
    await assert.rejects(pending, (err) => {
      assert.ok(err instanceof sl.SessionLocksError);
      assert.equal(err.code, sl.ErrorCodes.ChildExited);
      assert.match(err.message, /SIGKILL/);
      assert.deepEqual(err.data, { code: null, signal: 'SIGKILL' });
      return true;
    });
    const exit = await c.exited;
    assert.equal(exit.expected, false);
    assert.equal(exit.signal, 'SIGKILL');
    assert.deepEqual(heard, exit);
    await assert.rejects(c.listSessions(), { code: sl.ErrorCodes.ChildExited });
    await c.dispose();
  });

  test('a binary that cannot start rejects spawn with the reason', async () => {
    const missing = path.join(tmpdir(), 'missing');
    await assert.rejects(sl.SessionLocks.spawn({ binary: missing }), (err) => {
      assert.equal(err.code, sl.ErrorCodes.ChildExited);
      assert.match(err.message, /ENOENT/);
      assert.ok(err.message.includes(missing), err.message);
      return true;
    });
    // Node's spawn() throws ENOTDIR (a binary inside a zip, as yarn PnP leaves it) rather than emitting it:
    // the client must still reject, not throw out of spawn or crash.
    const file = path.join(tmpdir(), 'archive.zip');
    fs.writeFileSync(file, '');
    const within = path.join(file, 'sessionlocks');
    await assert.rejects(sl.SessionLocks.spawn({ binary: within }), (err) => {
      assert.equal(err.code, sl.ErrorCodes.ChildExited);
      assert.match(err.message, /ENOTDIR/);
      assert.ok(err.message.includes(within), err.message);
      return true;
    });
    // A server that exits at once (a bad flag): the rejection carries its stderr.
    await assert.rejects(sl.SessionLocks.spawn({ stateDir: stateDir(), args: ['--no-such-flag'] }), (err) => {
      assert.equal(err.code, sl.ErrorCodes.ChildExited);
      assert.match(err.message, /no-such-flag/);
      return true;
    });
  });

  test('an aborted call rejects with RequestCancelled', async () => {
    const c = await sl.SessionLocks.spawn({ stateDir: stateDir() });
    try {
      await assert.rejects(c.status({ signal: AbortSignal.abort() }), { code: sl.ErrorCodes.RequestCancelled });
      const ac = new AbortController();
      const call = c.listSessions({}, { signal: ac.signal });
      ac.abort();
      await assert.rejects(call, { code: sl.ErrorCodes.RequestCancelled });
      // The connection is still good.
      assert.equal((await c.status()).pid, c.pid);
    } finally {
      await c.dispose();
    }
  });
});

describe('without the platform package', () => {
  // Each way of ending up without it gets advice for that way: a reinstall
  // with optional dependencies does not help one that npm never could get.
  const install = (name, args, platformTarball) => {
    const dir = projectDir(name);
    installMain(dir, packed.tarballs[MAIN], { args, platformTarball });
    assert.ok(!fs.existsSync(path.join(dir, 'node_modules', HOST_PKG)), `${HOST_PKG} was installed`);
    return { dir, pkg: createRequire(path.join(dir, 'package.json'))(MAIN) };
  };
  const named = (pkg, reason) => (err) =>
    err instanceof pkg.BinaryNotFoundError &&
    err.message.includes(HOST_PKG) &&
    err.message.includes(key(host)) &&
    err.packageName === HOST_PKG &&
    err.reason === reason;

  test('--omit=optional: binaryPath, spawn and the shim say to reinstall with optional dependencies', async () => {
    const { dir, pkg } = install('omitted', ['--omit=optional'], packed.tarballs[HOST_PKG]);
    const wanted = (err) => named(pkg, 'omitted')(err) && /npm ci --include=optional/.test(err.message) && /--omit=optional/.test(err.message);
    assert.throws(() => pkg.binaryPath(), wanted);
    await assert.rejects(pkg.SessionLocks.spawn(), wanted);
    const shim = spawnSync(path.join(dir, 'node_modules', '.bin', 'sessionlocks'), ['version'], { encoding: 'utf8' });
    assert.equal(shim.status, 1);
    assert.ok(shim.stderr.includes(HOST_PKG) && shim.stderr.includes('--include=optional'), shim.stderr);
  });

  test('the main tarball alone: the error says to install the platform package too, at the same version', async () => {
    const { pkg } = install('main-only', []);
    const wanted = (err) =>
      named(pkg, 'not-installed')(err) &&
      err.message.includes(`npm install ${HOST_PKG}@${packed.version}`) &&
      /do not use --omit=optional/.test(err.message) &&
      !/npm ci --include=optional/.test(err.message);
    assert.throws(() => pkg.binaryPath(), wanted);
    await assert.rejects(pkg.SessionLocks.spawn(), wanted);
  });
});

describe('what every package ships', () => {
  // An app's licence checker (electron-builder's, license-checker) reads the
  // installed package.json and LICENSE, not the repository.
  const license = fs.readFileSync(path.join(repoRoot, 'LICENSE'), 'utf8');

  test('each tarball has LICENSE, and a package.json with license, repository and engines', () => {
    assert.match(license, /^MIT License\n\nCopyright \(c\) 2026 The sessionlocks authors\n/);
    assert.deepEqual(Object.keys(packed.tarballs).sort(), [MAIN, HOST_PKG].sort());
    for (const [name, tarball] of Object.entries(packed.tarballs)) {
      const read = (file) => execFileSync('tar', ['-xzOf', tarball, `package/${file}`], { encoding: 'utf8' });
      assert.equal(read('LICENSE'), license, `${name}: LICENSE`);
      const manifest = JSON.parse(read('package.json'));
      assert.equal(manifest.license, 'MIT', `${name}: license`);
      assert.deepEqual(
        manifest.repository,
        { type: 'git', url: 'git+https://github.com/copilot-ide/sessionlocks.git', directory: 'npm/sessionlocks' },
        `${name}: repository`,
      );
      assert.match(manifest.engines?.node ?? '', /^>=\d+/, `${name}: engines.node`);
    }
  });
});
