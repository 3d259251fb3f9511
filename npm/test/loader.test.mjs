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

  await t.test('without the unpacked copy: an error naming the option of each packager', () => {
    assert.throws(
      () => binaryPath({ ...opts, electron: '33.2.0' }),
      (err) =>
        err instanceof BinaryNotFoundError &&
        err.reason === 'asar' &&
        err.message.includes(unpacked) &&
        err.message.includes('"asarUnpack": ["**/node_modules/@copilot-ide/sessionlocks-*/**"]') &&
        err.message.includes("packagerConfig: { asar: { unpackDir: '**/node_modules/@copilot-ide/sessionlocks-*' } }") &&
        /auto-unpack-natives plugin unpacks only \*\.node/.test(err.message) &&
        err.message.includes('--unpack-dir "**/node_modules/@copilot-ide/sessionlocks-*"') &&
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
  // The package as npm installs it, in a project whose lockfile is written per case.
  const packageDir = path.join(dir, 'node_modules', '@copilot-ide', 'sessionlocks');
  fs.mkdirSync(packageDir, { recursive: true });
  const opts = { env: {}, platform: 'linux', arch: 'arm64', electron: undefined, resolve: resolver(dir), bundler: undefined, packageDir };
  const lockfile = (file, content) => {
    for (const f of fs.readdirSync(dir)) if (f !== 'node_modules') fs.rmSync(path.join(dir, f));
    if (file) fs.writeFileSync(path.join(dir, file), content);
  };
  await t.test('omitted by npm: the lockfile lists it', () => {
    lockfile('package-lock.json', JSON.stringify({ packages: { [`node_modules/${name}`]: { optional: true } } }));
    assert.throws(
      () => binaryPath(opts),
      (err) =>
        err.reason === 'omitted' &&
        err.manager === 'npm' &&
        /npm ci --include=optional/.test(err.message) &&
        err.message.includes(path.join(dir, 'package-lock.json')),
    );
  });
  await t.test('never installed: the lockfile does not list it', () => {
    lockfile('package-lock.json', JSON.stringify({ packages: { 'node_modules/@copilot-ide/sessionlocks': {} } }));
    assert.throws(
      () => binaryPath(opts),
      (err) =>
        err.reason === 'not-installed' &&
        err.message.includes(`npm install ${name}@`) &&
        /do not use --omit=optional/.test(err.message) &&
        !/npm ci --include=optional/.test(err.message),
    );
  });
  await t.test('no lockfile: both causes, each with its fix', () => {
    lockfile();
    assert.throws(
      () => binaryPath(opts),
      (err) => err.reason === 'missing' && err.message.includes(`npm install ${name}@`) && /npm ci --include=optional/.test(err.message),
    );
  });
  // Each manager's own words, never npm's.
  const cases = [
    ['pnpm', 'pnpm-lock.yaml', `packages:\n  '${name}@1.2.0':\n    cpu: [arm64]\n`, 'pnpm add', 'pnpm install (without --no-optional)'],
    ['yarn 1', 'yarn.lock', `# THIS IS AN AUTOGENERATED FILE.\n# yarn lockfile v1\n\n"${name}@1.2.0":\n  version "1.2.0"\n`, 'yarn add', '--ignore-optional'],
    ['yarn 4', 'yarn.lock', `__metadata:\n  version: 8\n\n"${name}@npm:1.2.0":\n  version: 1.2.0\n`, 'yarn add', 'supportedArchitectures'],
    ['bun', 'bun.lock', `{ "packages": { "${name}": ["${name}@1.2.0"] } }`, 'bun add', 'bun install (without --omit optional)'],
  ];
  for (const [manager, file, listed, add, fix] of cases) {
    await t.test(`${manager}: omitted and never installed`, () => {
      lockfile(file, listed);
      assert.throws(
        () => binaryPath(opts),
        (err) => err.reason === 'omitted' && err.manager === manager.split(' ')[0] && err.message.includes(fix) && !/\bnpm (ci|install)\b/.test(err.message),
      );
      lockfile(file, listed.replaceAll(name, '@copilot-ide/sessionlocks'));
      assert.throws(
        () => binaryPath(opts),
        (err) => err.reason === 'not-installed' && err.message.includes(`${add} ${name}@`) && !/\bnpm (ci|install)\b/.test(err.message),
      );
    });
  }
  await t.test('no lockfile, run by pnpm, yarn or bun: npm_config_user_agent names the manager', () => {
    lockfile();
    for (const [ua, add] of [['pnpm/9.12.0 npm/? node/v20.19.0 linux x64', 'pnpm add'], ['yarn/1.22.22 npm/? node/v20.19.0 linux x64', 'yarn add'], ['bun/1.1.30 npm/? node/v20.19.0 linux x64', 'bun add']]) {
      assert.throws(
        () => binaryPath({ ...opts, env: { npm_config_user_agent: ua } }),
        (err) => err.reason === 'missing' && err.message.includes(`${add} ${name}@`) && !/\bnpm (ci|install)\b/.test(err.message),
        ua,
      );
    }
  });
  await t.test('installed for another platform: reinstall in the manager that installed it', () => {
    lockfile('pnpm-lock.yaml', 'packages: {}\n');
    file(path.join(dir, 'node_modules', platformPackageName('darwin', 'arm64'), 'package.json'));
    try {
      assert.throws(
        () => binaryPath(opts),
        (err) => err.reason === 'other-platform' && err.message.includes('pnpm install --frozen-lockfile'),
      );
    } finally {
      fs.rmSync(path.join(dir, 'node_modules', platformPackageName('darwin', 'arm64')), { recursive: true });
    }
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

test('a binary inside a zip (yarn Plug\'n\'Play): an error naming unplugged and preferUnplugged, not ENOTDIR at spawn', () => {
  const dir = tmpdir();
  const name = platformPackageName('linux', 'x64');
  const zipped = file(path.join(dir, '.yarn', 'cache', `${name.replace('/', '-')}-npm-1.2.0-0a1b2c.zip`, 'node_modules', name, 'bin', 'sessionlocks'));
  assert.throws(
    () => binaryPath({ env: {}, platform: 'linux', arch: 'x64', electron: undefined, resolve: () => zipped }),
    (err) =>
      err instanceof BinaryNotFoundError &&
      err.reason === 'zipped' &&
      err.path === zipped &&
      err.message.includes(`yarn unplug ${name}`) &&
      err.message.includes(`"dependenciesMeta": {"${name}": {"unplugged": true}}`) &&
      /preferUnplugged/.test(err.message),
  );
});
