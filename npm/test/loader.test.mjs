// binaryPath() from the package source: the environment override, the
// Electron asar rewrite and the errors, on real files, with the platform,
// the Electron version and module resolution passed in to play machines this
// one is not. package.test.mjs covers the same through an installed package.

import assert from 'node:assert/strict';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { tmpdir } from '../scripts/testenv.mjs';

const require = createRequire(import.meta.url);
const { binaryPath, platformPackageName, unpackedPath, BinaryNotFoundError, PLATFORMS } = require(
  '../sessionlocks/binary.js',
);

function file(p) {
  fs.mkdirSync(path.dirname(p), { recursive: true });
  fs.writeFileSync(p, '#!/bin/sh\n', { mode: 0o755 });
  return p;
}

const notFound = (request) => {
  const err = new Error(`Cannot find module '${request}'`);
  err.code = 'MODULE_NOT_FOUND';
  throw err;
};

// resolver plays require.resolve over a node_modules laid out in root.
const resolver = (root) => (request) => {
  const p = path.join(root, 'node_modules', request);
  return fs.existsSync(p) ? p : notFound(request);
};

test('SESSIONLOCKS_BINARY comes first', () => {
  const dir = tmpdir();
  const bin = file(path.join(dir, 'custom', 'sessionlocks'));
  const installed = file(path.join(dir, 'node_modules', platformPackageName('linux', 'x64'), 'bin', 'sessionlocks'));
  const opts = { platform: 'linux', arch: 'x64', electron: undefined, resolve: resolver(dir) };
  assert.equal(binaryPath({ ...opts, env: {} }), installed);
  assert.equal(binaryPath({ ...opts, env: { SESSIONLOCKS_BINARY: bin } }), bin);
  // A relative path is taken from the working directory, as a shell would.
  const rel = path.relative(process.cwd(), bin);
  assert.equal(binaryPath({ ...opts, env: { SESSIONLOCKS_BINARY: rel } }), bin);
});

test('SESSIONLOCKS_BINARY naming no file is an error that says so', () => {
  const missing = path.join(tmpdir(), 'nope', 'sessionlocks');
  assert.throws(
    () => binaryPath({ env: { SESSIONLOCKS_BINARY: missing }, electron: undefined }),
    (err) => err instanceof BinaryNotFoundError && /SESSIONLOCKS_BINARY/.test(err.message) && err.message.includes(missing),
  );
});

test('the per-platform package is found for every platform in the table', () => {
  const dir = tmpdir();
  for (const p of PLATFORMS) {
    const name = p.platform === 'win32' ? 'sessionlocks.exe' : 'sessionlocks';
    const want = file(path.join(dir, 'node_modules', platformPackageName(p.platform, p.arch), 'bin', name));
    assert.equal(binaryPath({ env: {}, platform: p.platform, arch: p.arch, electron: undefined, resolve: resolver(dir) }), want);
  }
});

test('inside Electron a path through app.asar becomes app.asar.unpacked', async (t) => {
  const resources = path.join(tmpdir(), 'resources');
  const rel = path.join('node_modules', platformPackageName('darwin', 'arm64'), 'bin', 'sessionlocks');
  const inAsar = path.join(resources, 'app.asar', rel);
  const unpacked = path.join(resources, 'app.asar.unpacked', rel);
  // Electron's fs shows files inside the archive; plain files play them here.
  file(inAsar);
  const opts = { env: {}, platform: 'darwin', arch: 'arm64', resolve: () => inAsar };

  await t.test('without the unpacked copy: an error naming asarUnpack', () => {
    assert.throws(
      () => binaryPath({ ...opts, electron: '33.2.0' }),
      (err) =>
        err instanceof BinaryNotFoundError &&
        err.message.includes(unpacked) &&
        /asarUnpack/.test(err.message) &&
        err.unpackedPath === unpacked,
    );
  });
  file(unpacked);
  await t.test('with it: the unpacked path', () => {
    assert.equal(binaryPath({ ...opts, electron: '33.2.0' }), unpacked);
  });
  await t.test('the environment override is rewritten too', () => {
    assert.equal(binaryPath({ ...opts, env: { SESSIONLOCKS_BINARY: inAsar }, electron: '33.2.0' }), unpacked);
  });
  await t.test('outside Electron nothing is rewritten', () => {
    assert.equal(binaryPath({ ...opts, electron: undefined }), inAsar);
  });
});

test('unpackedPath', () => {
  for (const [input, want] of [
    ['/Applications/IDE.app/Contents/Resources/app.asar/node_modules/x/bin/sessionlocks', '/Applications/IDE.app/Contents/Resources/app.asar.unpacked/node_modules/x/bin/sessionlocks'],
    ['C:\\IDE\\resources\\app.asar\\node_modules\\x\\bin\\sessionlocks.exe', 'C:\\IDE\\resources\\app.asar.unpacked\\node_modules\\x\\bin\\sessionlocks.exe'],
    ['/opt/ide/resources/custom.asar/node_modules/x/sessionlocks', '/opt/ide/resources/custom.asar.unpacked/node_modules/x/sessionlocks'],
    // Already unpacked, or no archive at all: unchanged.
    ['/opt/ide/resources/app.asar.unpacked/node_modules/x/sessionlocks', '/opt/ide/resources/app.asar.unpacked/node_modules/x/sessionlocks'],
    ['/home/dev/app.asar-notes/sessionlocks', '/home/dev/app.asar-notes/sessionlocks'],
  ]) {
    assert.equal(unpackedPath(input), want);
  }
});

test('a missing platform package is an error naming the package and the platform', async (t) => {
  const dir = tmpdir();
  await t.test('nothing installed', () => {
    assert.throws(
      () => binaryPath({ env: {}, platform: 'linux', arch: 'arm64', electron: undefined, resolve: resolver(dir) }),
      (err) =>
        err instanceof BinaryNotFoundError &&
        err.code === 'SESSIONLOCKS_BINARY_NOT_FOUND' &&
        err.packageName === '@copilot-ide/sessionlocks-linux-arm64' &&
        err.message.includes('@copilot-ide/sessionlocks-linux-arm64') &&
        err.message.includes('linux-arm64') &&
        /optional/.test(err.message),
    );
  });
  await t.test('node_modules from another platform', () => {
    file(path.join(dir, 'node_modules', platformPackageName('darwin', 'arm64'), 'package.json'));
    assert.throws(
      () => binaryPath({ env: {}, platform: 'linux', arch: 'arm64', electron: undefined, resolve: resolver(dir) }),
      (err) =>
        err.message.includes('@copilot-ide/sessionlocks-linux-arm64') &&
        err.message.includes('Installed instead: @copilot-ide/sessionlocks-darwin-arm64') &&
        /another platform/.test(err.message),
    );
  });
  await t.test('a platform with no package', () => {
    assert.throws(
      () => binaryPath({ env: {}, platform: 'freebsd', arch: 'x64', electron: undefined, resolve: resolver(dir) }),
      (err) => err instanceof BinaryNotFoundError && /no prebuilt binary for freebsd-x64/.test(err.message) && /SESSIONLOCKS_BINARY/.test(err.message),
    );
  });
});

test('a missing platform package: the advice fits how it went missing', async (t) => {
  const dir = tmpdir();
  const name = '@copilot-ide/sessionlocks-linux-arm64';
  const opts = { env: {}, platform: 'linux', arch: 'arm64', electron: undefined, resolve: resolver(dir) };
  const lockfile = (packages) => ({ file: path.join(dir, 'package-lock.json'), packages });
  await t.test('omitted by npm: the lockfile lists it', () => {
    assert.throws(
      () => binaryPath({ ...opts, bundler: undefined, lockfile: lockfile({ [`node_modules/${name}`]: { optional: true } }) }),
      (err) => err.reason === 'omitted' && /npm ci --include=optional/.test(err.message) && err.message.includes(path.join(dir, 'package-lock.json')),
    );
  });
  await t.test('never installed: the lockfile does not list it', () => {
    assert.throws(
      () => binaryPath({ ...opts, bundler: undefined, lockfile: lockfile({ 'node_modules/@copilot-ide/sessionlocks': {} }) }),
      (err) =>
        err.reason === 'not-installed' &&
        err.message.includes(`npm install ${name}@`) &&
        /do not use --omit=optional/.test(err.message) &&
        !/npm ci --include=optional/.test(err.message),
    );
  });
  await t.test('no lockfile (another package manager): both causes, each with its fix', () => {
    assert.throws(
      () => binaryPath({ ...opts, bundler: undefined, lockfile: undefined }),
      (err) => err.reason === 'missing' && err.message.includes(`npm install ${name}@`) && /npm ci --include=optional/.test(err.message),
    );
  });
  await t.test('bundled, with no node_modules beside the bundle: what to configure', () => {
    assert.throws(
      () => binaryPath({ ...opts, bundler: 'webpack', lockfile: undefined }),
      (err) =>
        err.reason === 'bundled' &&
        err.bundler === 'webpack' &&
        err.message.includes("externals: { '@copilot-ide/sessionlocks': 'commonjs @copilot-ide/sessionlocks' }") &&
        err.message.includes('--external:@copilot-ide/sessionlocks') &&
        !/--include=optional/.test(err.message),
    );
  });
});
