// The version handshake at spawn: the binary's version (its status answer)
// against the package's own package.json. The package is copied into a
// node_modules laid out as npm lays it out, once with the binary's own version
// and once with another, beside a platform package holding the real binary.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { after, test } from 'node:test';
import { binaryName, key, npmVersion, platforms } from '../scripts/pack.mjs';
import { hostBinary, npmDir, packageVersionOf, tmpdir } from '../scripts/testenv.mjs';

const MAIN = '@copilot-ide/sessionlocks';
const host = platforms.find((p) => p.platform === process.platform && p.arch === process.arch);
const binary = hostBinary();
const binaryVersion = /^sessionlocks (\S+) /.exec(execFileSync(binary, ['version'], { encoding: 'utf8' }))[1];
// The package must find its binary by itself (SESSIONLOCKS_BINARY would make it explicit).
delete process.env.SESSIONLOCKS_BINARY;

/** Installs a copy of the package at version into a fresh node_modules, and requires it. */
function installAt(version) {
  const root = tmpdir('sessionlocks-version-');
  const modules = path.join(root, 'node_modules');
  const main = path.join(modules, MAIN);
  const manifest = JSON.parse(fs.readFileSync(path.join(npmDir, 'sessionlocks', 'package.json'), 'utf8'));
  for (const f of manifest.files) fs.cpSync(path.join(npmDir, 'sessionlocks', f), path.join(main, f), { recursive: true });
  fs.writeFileSync(path.join(main, 'package.json'), JSON.stringify({ ...manifest, version }));
  const platformDir = path.join(modules, `${MAIN}-${key(host)}`);
  fs.mkdirSync(path.join(platformDir, 'bin'), { recursive: true });
  fs.writeFileSync(path.join(platformDir, 'package.json'), JSON.stringify({ name: `${MAIN}-${key(host)}`, version }));
  fs.copyFileSync(binary, path.join(platformDir, 'bin', binaryName(host)));
  fs.chmodSync(path.join(platformDir, 'bin', binaryName(host)), 0o755);
  fs.symlinkSync(path.join(npmDir, 'node_modules', 'vscode-jsonrpc'), path.join(modules, 'vscode-jsonrpc'), 'junction');
  return createRequire(path.join(root, 'index.js'))(MAIN);
}

const warnings = [];
const onWarning = (w) => warnings.push(w);
process.on('warning', onWarning);
after(() => process.off('warning', onWarning));
// process.emitWarning delivers on the next tick.
const settle = () => new Promise((r) => setImmediate(r));
const mismatchWarnings = () => warnings.filter((w) => w.code === 'SESSIONLOCKS_VERSION_MISMATCH');

const stateDir = path.join(tmpdir(), 'empty');
const other = '9.8.7';

test('a package at the binary version spawns, and says which version runs', async () => {
  const sl = installAt(packageVersionOf(binary));
  const locks = await sl.SessionLocks.spawn({ stateDir });
  try {
    assert.equal(locks.version, binaryVersion);
    assert.equal((await locks.status()).version, binaryVersion);
  } finally {
    await locks.dispose();
  }
  await settle();
  assert.deepEqual(mismatchWarnings(), []);
});

test('a binary from the platform package at another version fails spawn, naming both versions and the fix', async () => {
  const sl = installAt(other);
  await assert.rejects(sl.SessionLocks.spawn({ stateDir }), (err) => {
    assert.ok(err instanceof sl.SessionLocksError);
    assert.equal(err.code, sl.ErrorCodes.VersionMismatch);
    assert.ok(err.message.includes(`version ${binaryVersion}`), err.message);
    assert.ok(err.message.includes(`${MAIN} is ${other}`), err.message);
    assert.ok(err.message.includes(`${MAIN}-${key(host)} must be at ${other}`), err.message);
    assert.match(err.message, /npm ci/);
    assert.match(err.message, /SESSIONLOCKS_BINARY/);
    assert.equal(err.data.binaryVersion, binaryVersion);
    assert.equal(err.data.packageVersion, other);
    assert.equal(fs.realpathSync(err.data.binary), fs.realpathSync(sl.binaryPath()));
    return true;
  });
});

test('a binary given explicitly at another version runs, with one warning naming both versions', async () => {
  const sl = installAt(other);
  const copy = path.join(tmpdir(), binaryName(host));
  fs.copyFileSync(binary, copy);
  fs.chmodSync(copy, 0o755);
  for (const given of [{ binary: copy }, { env: copy }, { binary: copy }]) {
    if (given.env) process.env.SESSIONLOCKS_BINARY = given.env;
    try {
      const locks = await sl.SessionLocks.spawn({ stateDir, binary: given.binary });
      assert.equal(locks.version, binaryVersion);
      await locks.dispose();
    } finally {
      delete process.env.SESSIONLOCKS_BINARY;
    }
  }
  await settle();
  const seen = mismatchWarnings();
  assert.equal(seen.length, 1, 'one warning per binary and version, not one per spawn');
  assert.equal(seen[0].name, 'SessionLocksWarning');
  assert.ok(seen[0].message.includes(binaryVersion) && seen[0].message.includes(other), seen[0].message);
  assert.match(seen[0].message, /given explicitly/);
  warnings.length = 0;
});

test("versionCheck: 'error' refuses an explicit binary too, and 'off' checks nothing", async () => {
  const sl = installAt(other);
  await assert.rejects(sl.SessionLocks.spawn({ stateDir, binary, versionCheck: 'error' }), { code: sl.ErrorCodes.VersionMismatch });
  const locks = await sl.SessionLocks.spawn({ stateDir, versionCheck: 'off' });
  await locks.dispose();
  await settle();
  assert.deepEqual(mismatchWarnings(), []);
});

test('index.d.ts shows versions in the form the client reports them (npm versions, as make stamps them)', () => {
  const dts = fs.readFileSync(path.join(npmDir, 'sessionlocks', 'index.d.ts'), 'utf8');
  const doc = /\/\*\*((?:(?!\*\/)[\s\S])*)\*\/\s*readonly version: string \| undefined;/.exec(dts);
  assert.ok(doc, 'no doc comment on SessionLocks.version');
  const shown = [...doc[1].matchAll(/"([^"]+)"/g)].map((m) => m[1]);
  assert.ok(shown.length >= 2, `no examples in ${doc[1]}`);
  for (const v of shown) assert.equal(npmVersion(v), v, `index.d.ts shows ${v}, which the client never reports`);
  // What make stamps into the binary is what the client then reports: the version npm gives its packages.
  assert.equal(npmVersion('v1.2.0'), '1.2.0');
});
