// The docs' code as a reader pastes it. README.md's IDE snippet is taken out
// of the README, compiled with tsc --strict to CommonJS and to an ES module,
// and each runs for several seconds against the real binary with the state
// dir as the CLI's (COPILOT_HOME): it must stay running, receive the change
// when a CLI opens a session, take that session over when the user says so,
// and end its child on quit. Electron cannot run here: a stand-in `electron`
// package gives it the one thing it uses, app's will-quit.

import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { hostBinary, npmDir, repoRoot, startFakeSession, tmpdir, writeSession } from '../scripts/testenv.mjs';

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
 * electron, in which file (TypeScript source) compiles to CommonJS and ES
 * module output: {cjs, esm}, the two entry files.
 */
export function compileBoth(name, source) {
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
      files: [`${name}.ts`],
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
