// The client against its sources of truth: protocol.d.ts against schema/,
// ErrorCodes and the method set against openrpc.json, the platform table
// against the Makefile's PLATFORMS.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { generate, output } from '../scripts/gen-types.mjs';
import { npmCommand, npmVersion, platforms } from '../scripts/pack.mjs';
import { npmDir, repoRoot } from '../scripts/testenv.mjs';

const require = createRequire(import.meta.url);
const openrpc = JSON.parse(fs.readFileSync(path.join(repoRoot, 'schema', 'openrpc.json'), 'utf8'));

test('protocol.d.ts is what gen-types.mjs generates from schema/ now', async () => {
  const want = await generate();
  const got = fs.readFileSync(output, 'utf8');
  assert.ok(got === want, 'npm/sessionlocks/protocol.d.ts is out of date with schema/: run `make schema`');
});

test('ErrorCodes has every error code of openrpc.json under the same name', () => {
  const { ErrorCodes } = require('../sessionlocks/client.js');
  for (const [name, e] of Object.entries(openrpc.components.errors)) {
    assert.equal(ErrorCodes[name], e.code, `ErrorCodes.${name}`);
  }
  // The client's own codes must not collide with a server code.
  const server = new Set(Object.values(openrpc.components.errors).map((e) => e.code));
  for (const name of ['Disposed', 'ChildExited', 'VersionMismatch']) assert.ok(!server.has(ErrorCodes[name]), `${name} collides`);
});

test('SessionLocks has a method for every server method', () => {
  const { SessionLocks } = require('../sessionlocks/client.js');
  const dts = fs.readFileSync(path.join(npmDir, 'sessionlocks', 'index.d.ts'), 'utf8');
  const own = { 'rpc.discover': 'discover' };
  for (const m of openrpc.methods.filter((m) => m.result)) {
    const name = own[m.name] || m.name;
    assert.equal(typeof SessionLocks.prototype[name], 'function', `SessionLocks.prototype.${name}`);
    assert.match(dts, new RegExp(`\\b${name}\\(`), `index.d.ts declares ${name}`);
  }
});

test("the platform table agrees with the Makefile's PLATFORMS", () => {
  const makefile = fs.readFileSync(path.join(repoRoot, 'Makefile'), 'utf8');
  const line = /^PLATFORMS\s*:=\s*(.*)$/m.exec(makefile);
  assert.ok(line, 'no PLATFORMS := line in the Makefile');
  const make = line[1].trim().split(/\s+/).sort();
  const table = platforms.map((p) => `${p.goos}/${p.goarch}`).sort();
  assert.deepEqual(table, make, 'npm/sessionlocks/platforms.json and the Makefile list different Go targets');

  const goos = { darwin: 'darwin', linux: 'linux', win32: 'windows' };
  const goarch = { x64: 'amd64', arm64: 'arm64' };
  for (const p of platforms) {
    assert.equal(p.goos, goos[p.platform], `${p.platform}: GOOS`);
    assert.equal(p.goarch, goarch[p.arch], `${p.arch}: GOARCH`);
  }
  assert.equal(new Set(platforms.map((p) => `${p.platform}-${p.arch}`)).size, platforms.length, 'duplicate rows');
});

test('the main package has exactly one runtime dependency', () => {
  const manifest = JSON.parse(fs.readFileSync(path.join(npmDir, 'sessionlocks', 'package.json'), 'utf8'));
  assert.deepEqual(Object.keys(manifest.dependencies), ['vscode-jsonrpc']);
  for (const f of manifest.files) assert.ok(fs.existsSync(path.join(npmDir, 'sessionlocks', f)), `files lists ${f}, which is missing`);
});

test('npmVersion', () => {
  for (const [described, want] of [
    ['v1.2.3', '1.2.3'],
    ['1.2.3', '1.2.3'],
    ['v1.2.3-rc.1', '1.2.3-rc.1'],
    ['5df2a78', '0.0.0-dev.5df2a78'],
    ['5df2a78-dirty', '0.0.0-dev.5df2a78-dirty'],
    ['1234567', '0.0.0-dev.g1234567'],
    ['v1.2.3-4-g5df2a78', '1.2.3-4-g5df2a78'],
    ['dev', '0.0.0-dev.dev'],
    ['weird/branch name', '0.0.0-dev.weird-branch-name'],
  ]) {
    assert.equal(npmVersion(described), want, described);
  }
});

test('npm is run through npm.cmd and a shell on Windows, with arguments that hold spaces quoted', () => {
  assert.deepEqual(npmCommand(['pack', '--json', '/tmp/x'], 'linux'), ['npm', ['pack', '--json', '/tmp/x'], {}]);
  assert.deepEqual(npmCommand(['install', 'C:\\Users\\A B\\x-1.0.0.tgz', '--loglevel=error'], 'win32'), [
    'npm.cmd',
    ['install', '"C:\\Users\\A B\\x-1.0.0.tgz"', '--loglevel=error'],
    { shell: true },
  ]);
});
