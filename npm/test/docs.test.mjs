// The docs' code as a reader pastes it. README.md's IDE snippet is taken out
// of the README, compiled with tsc --strict to CommonJS and to an ES module,
// and each runs for several seconds against the real binary with the state
// dir as the CLI's (COPILOT_HOME): it must stay running, receive the change
// when a CLI opens a session, take that session over when the user says so,
// and end its child on quit. Electron cannot run here: a stand-in `electron`
// package gives it the one thing it uses, app's will-quit. docs/migrating.md's
// adapter is exercised the same way, on a free, a stale, a live and an
// unknown session.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostBinary, npmDir, repoRoot, startFakeSession, tmpdir, writeSession, writeStaleLock } from '../scripts/testenv.mjs';

/** The body of the first ```lang block after heading in file (a repository path). */
export function codeBlock(file, heading, lang = 'ts') {
  const text = fs.readFileSync(path.join(repoRoot, file), 'utf8');
  const at = text.indexOf(heading);
  assert.ok(at >= 0, `${file} has no ${heading}`);
  const m = new RegExp('```' + lang + '\\n([\\s\\S]*?)```').exec(text.slice(at));
  assert.ok(m, `${file}: no \`\`\`${lang} block after ${heading}`);
  return m[1];
}

/**
 * A project with the package (the repository's own, linked) and a stand-in
 * electron, in which name.ts (source) and the other files compile to
 * CommonJS and ES module output: {cjs, esm}, the two entry files.
 */
export function compileBoth(name, source, others = {}) {
  const project = tmpdir('sessionlocks-docs-');
  const modules = path.join(project, 'node_modules');
  fs.mkdirSync(path.join(modules, '@copilot-ide'), { recursive: true });
  fs.symlinkSync(path.join(npmDir, 'sessionlocks'), path.join(modules, '@copilot-ide', 'sessionlocks'), 'junction');
  const electron = path.join(modules, 'electron');
  fs.mkdirSync(electron);
  fs.writeFileSync(path.join(electron, 'package.json'), JSON.stringify({ name: 'electron', main: 'index.js', types: 'index.d.ts' }));
  fs.writeFileSync(path.join(electron, 'index.js'), "'use strict';\nexports.app = new (require('events').EventEmitter)();\n");
  fs.writeFileSync(
    path.join(electron, 'index.d.ts'),
    "import { EventEmitter } from 'events';\nexport declare const app: EventEmitter & { on(event: 'will-quit', listener: (event: { preventDefault(): void }) => void): typeof app };\n",
  );
  const out = {};
  for (const [kind, type] of [['cjs', 'commonjs'], ['esm', 'module']]) {
    const dir = path.join(project, kind);
    fs.mkdirSync(dir);
    fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ type }));
    fs.writeFileSync(path.join(dir, `${name}.ts`), source);
    for (const [file, text] of Object.entries(others)) fs.writeFileSync(path.join(dir, file), text);
    const tsconfig = {
      compilerOptions: {
        strict: true,
        target: 'es2022',
        module: 'node16',
        moduleResolution: 'node16',
        types: ['node'],
        typeRoots: [path.join(npmDir, 'node_modules', '@types')],
        outDir: 'out',
        skipLibCheck: true,
      },
      files: [`${name}.ts`, ...Object.keys(others)],
    };
    fs.writeFileSync(path.join(dir, 'tsconfig.json'), JSON.stringify(tsconfig));
    const tsc = spawnSync(process.execPath, [path.join(npmDir, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', dir], { encoding: 'utf8' });
    assert.equal(tsc.status, 0, `tsc (${type}) failed:\n${tsc.stdout}${tsc.stderr}`);
    fs.writeFileSync(path.join(dir, 'out', 'package.json'), JSON.stringify({ type }));
    out[kind] = path.join(dir, 'out', `${name}.js`);
  }
  return out;
}

/** Runs a compiled program: lines it prints as JSON {what, data}, next(what) awaits one, send() writes a command. */
export function run(file, env) {
  const child = spawn(process.execPath, [file], { env: { ...process.env, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stderr = '';
  child.stderr.on('data', (d) => (stderr += d));
  const seen = [];
  const waiters = [];
  readline.createInterface({ input: child.stdout }).on('line', (line) => {
    seen.push(JSON.parse(line));
    for (const w of [...waiters]) w();
  });
  const exited = new Promise((resolve) => child.on('exit', (code, signal) => resolve({ code, signal })));
  const next = (pred, ms = 15_000) =>
    new Promise((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`no matching output within ${ms} ms: ${JSON.stringify(seen)}\n${stderr}`)), ms);
      const check = () => {
        const hit = seen.find(pred);
        if (!hit) return;
        clearTimeout(timer);
        waiters.splice(waiters.indexOf(check), 1);
        resolve(hit);
      };
      waiters.push(check);
      check();
    });
  return { child, seen, next, exited, send: (line) => child.stdin.write(`${line}\n`), stderr: () => stderr };
}

// The UI the snippet calls, as the README says it is the reader's: each reports what it was given.
const PRELUDE = `
import type { Frozen, Session } from '@copilot-ide/sessionlocks';
import * as readline from 'readline';
const say = (what: string, data?: unknown) => process.stdout.write(JSON.stringify({ what, data }) + '\\n');
function setBusy(busy: boolean): void { say('busy', busy); }
function update(changed: readonly Frozen<Session>[], removed: readonly string[]): void {
  say('update', { changed: changed.map((s) => [s.id, s.state]), removed });
}
async function confirm(message: string): Promise<boolean> { say('confirm', message); return true; }
async function tell(message: string): Promise<void> { say('tell', message); }
`;

// The test's hands: commands on stdin, run after the snippet's module body.
const EPILOGUE = `
readline.createInterface({ input: process.stdin }).on('line', async (line: string) => {
  const [command, arg] = line.split(' ');
  if (command === 'state') say('state', (await locks).state);
  if (command === 'resume') say('resumed', await resume(arg));
  if (command === 'quit') {
    app.emit('will-quit');
    process.stdin.destroy();
    say('exited', await (await locks).exited);
  }
});
`;

describe("README's IDE snippet, pasted into an Electron main file", () => {
  const snippet = codeBlock('README.md', '## In an IDE');
  const built = compileBoth('main', PRELUDE + snippet + EPILOGUE);

  for (const kind of ['cjs', 'esm']) {
    test(`${kind === 'cjs' ? 'CommonJS' : 'ES module'}: stays running for seconds, gets the change, takes the session over, ends on quit`, async (t) => {
      const home = tmpdir();
      const stateDir = path.join(home, 'session-state');
      writeSession(stateDir, crypto.randomUUID(), { name: 'idle' });
      const started = Date.now();
      const p = run(built[kind], { SESSIONLOCKS_BINARY: hostBinary(), COPILOT_HOME: home });
      t.after(() => p.child.kill());
      await p.next((l) => l.what === 'update' && l.data.changed.length === 1);

      await sleep(1500);
      const id = crypto.randomUUID();
      writeSession(stateDir, id, { name: 'opened' });
      const cli = await startFakeSession(stateDir, id);
      t.after(() => cli.stop());
      await p.next((l) => l.what === 'update' && l.data.changed.some(([sid, state]) => sid === id && state === 'inUse'));

      await sleep(Math.max(0, 5000 - (Date.now() - started)));
      p.send('state');
      assert.equal((await p.next((l) => l.what === 'state')).data, 'running');
      assert.deepEqual(p.seen.filter((l) => l.what === 'busy' && l.data), [], 'the client was not running at some point');

      p.send(`resume ${id}`);
      assert.equal((await p.next((l) => l.what === 'resumed')).data, true, p.stderr());
      assert.match(p.seen.find((l) => l.what === 'confirm').data, new RegExp(`^In use by pid ${cli.pid}.* Force resume\\?$`));
      assert.equal((await cli.exited).signal, 'SIGTERM');

      p.send('quit');
      const exit = (await p.next((l) => l.what === 'exited')).data;
      assert.equal(exit.expected, true);
      assert.equal(exit.code, 0, 'the sidecar ended on its stdin closing');
      assert.deepEqual(await p.exited, { code: 0, signal: null }, p.stderr());
      assert.deepEqual(p.seen.filter((l) => l.what === 'tell'), []);
    });
  }
});

// The IDE's calls of the old module, through the adapter.
const HARNESS = `
import { cleanUpStaleLocks, listSessionLocks, onLocksChanged, prepareResume, start, stop } from './sessionLocks.js';
const ids = JSON.parse(process.env.IDS as string);
const asked: string[] = [];
const ask = (yes: boolean) => async (message: string) => (asked.push(message), yes);
(async () => {
  const out: Record<string, unknown> = {};
  await start();
  out.before = await listSessionLocks();
  const changes: string[] = [];
  const sub = await onLocksChanged((changed, removed) => changes.push(...changed.map((s) => s.id + ':' + s.state), ...removed));
  out.free = await prepareResume(ids.free, ask(true));
  out.stale = await prepareResume(ids.stale, ask(true));
  out.unknown = await prepareResume(ids.unknown, ask(false));
  out.reclaimed = await cleanUpStaleLocks();
  out.live = await prepareResume(ids.live, ask(true));
  for (let i = 0; i < 100 && !changes.includes(ids.live + ':free'); i++) await new Promise((r) => setTimeout(r, 50));
  out.after = await listSessionLocks();
  Object.assign(out, { asked, changes });
  sub.dispose();
  await stop();
  process.stdout.write(JSON.stringify(out));
})();
`;

describe("docs/migrating.md's adapter", { skip: process.platform === 'win32' && 'pid 1 and SIGTERM are POSIX' }, () => {
  const adapter = codeBlock('docs/migrating.md', '## An adapter');

  test('compiles (tsc --strict) to both module kinds, and each answers as the states table says', async (t) => {
    assert.ok(adapter.split('\n').length <= 45, 'the adapter has grown past what an IDE drops in');
    const built = compileBoth('ide', HARNESS, { 'sessionLocks.ts': adapter });
    for (const kind of ['cjs', 'esm']) {
      const home = tmpdir();
      const stateDir = path.join(home, 'session-state');
      const ids = { free: crypto.randomUUID(), stale: crypto.randomUUID(), live: crypto.randomUUID(), unknown: crypto.randomUUID() };
      for (const [name, id] of Object.entries(ids)) writeSession(stateDir, id, { name });
      const stale = writeStaleLock(stateDir, ids.stale);
      // A live process that is not the CLI, older than its lock: pid 1 (init), named by a lock written after boot.
      const unknownLock = path.join(stateDir, ids.unknown, 'inuse.1.lock');
      fs.writeFileSync(unknownLock, '1\n');
      const written = new Date(Date.now() - 30_000);
      fs.utimesSync(unknownLock, written, written);
      const cli = await startFakeSession(stateDir, ids.live);
      t.after(() => cli.stop());

      const p = spawnSync(process.execPath, [built[kind]], {
        env: { ...process.env, SESSIONLOCKS_BINARY: hostBinary(), COPILOT_HOME: home, IDS: JSON.stringify(ids) },
        encoding: 'utf8',
        timeout: 60_000,
      });
      assert.equal(p.status, 0, `${kind}: ${p.stdout}${p.stderr}`);
      const out = JSON.parse(p.stdout);
      const states = (list) => Object.fromEntries(list.map((s) => [s.id, s.state]));
      assert.deepEqual(states(out.before), { [ids.stale]: 'stale', [ids.live]: 'inUse', [ids.unknown]: 'unknown' }, kind);
      assert.deepEqual(out.before.find((s) => s.id === ids.live).pids, [cli.pid]);
      assert.equal(out.free, true);
      assert.equal(out.stale, true, 'stale: resumed without asking');
      assert.equal(out.unknown, false, 'unknown: asked, and the user said no');
      assert.equal(out.live, true, 'live: asked, the user said yes, the CLI was stopped');
      assert.equal(out.asked.length, 2, JSON.stringify(out.asked));
      assert.match(out.asked[0], /pid 1\b.* Force resume\?$/);
      assert.match(out.asked[1], new RegExp(`^In use by pid ${cli.pid}.* Force resume\\?$`));
      assert.equal(out.reclaimed, 1, 'the stale lock, and nothing else');
      assert.ok(!fs.existsSync(stale.lockFile));
      assert.ok(fs.existsSync(unknownLock), 'the unknown lock was removed');
      assert.equal((await cli.exited).signal, 'SIGTERM');
      assert.ok(out.changes.includes(`${ids.live}:free`), JSON.stringify(out.changes));
      assert.deepEqual(states(out.after), { [ids.unknown]: 'unknown' });
    }
  });
});

describe("the package README's IDE example", () => {
  test('type-checks (tsc --strict) as a CommonJS and an ES module', () => {
    const example = codeBlock('npm/sessionlocks/README.md', '## In an IDE');
    const ui = 'declare function showError(message: string): void;\ndeclare function setBusy(busy: boolean): void;\ndeclare function confirm(message: string): Promise<boolean>;\n';
    compileBoth('example', ui + example);
  });
});
