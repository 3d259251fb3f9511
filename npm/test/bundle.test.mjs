// An IDE's main process bundled with the package inside it: webpack (target
// node and electron-main, as Electron Forge's template builds it) and esbuild
// (platform node) bundle a small consumer of the installed packed package;
// the bundle then runs where it was built (node_modules beside it: it must
// spawn the sidecar and list sessions), alone in another directory (it must
// fail with the configuration to change), and built with the package marked
// external as that advice says (it must work again).

import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { before, describe, test } from 'node:test';
import {
  hostBinary,
  installMain,
  packHost,
  projectDir,
  tmpdir,
  writeSession,
  writeStaleLock,
} from '../scripts/testenv.mjs';

const require = createRequire(import.meta.url);
const MAIN = '@copilot-ide/sessionlocks';
const HOST_PKG = `${MAIN}-${process.platform}-${process.arch}`;

// The consumer: what an IDE's main process does at start-up.
const CONSUMER = `
const { SessionLocks, binaryPath } = require('${MAIN}');
(async () => {
  const out = {};
  try {
    out.binary = binaryPath();
    const locks = await SessionLocks.spawn({ stateDir: process.argv[2] });
    const list = await locks.listSessions();
    out.pid = locks.pid;
    out.sessions = list.sessions.map((s) => [s.id, s.state]);
    await locks.dispose();
  } catch (err) {
    out.error = { name: err.name, reason: err.reason, message: err.message };
  }
  process.stdout.write(JSON.stringify(out));
})();
`;

let project;
let stateDir;
const ids = { free: crypto.randomUUID(), stale: crypto.randomUUID() };

before(() => {
  const binary = hostBinary();
  const packed = packHost(binary);
  project = projectDir('ide');
  installMain(project, packed.tarballs[MAIN], { platformTarball: packed.tarballs[HOST_PKG] });
  fs.mkdirSync(path.join(project, 'src'));
  fs.writeFileSync(path.join(project, 'src', 'main.js'), CONSUMER);
  stateDir = path.join(tmpdir(), 'session-state');
  writeSession(stateDir, ids.free, { updatedAt: new Date(Date.now() - 60_000) });
  writeSession(stateDir, ids.stale);
  writeStaleLock(stateDir, ids.stale);
});

function webpack(target, outDir, externals) {
  const wp = require('webpack');
  return new Promise((resolve, reject) => {
    wp(
      {
        mode: 'production',
        target,
        context: project,
        entry: './src/main.js',
        output: { path: outDir, filename: 'main.js' },
        optimization: { minimize: false },
        externals,
        infrastructureLogging: { level: 'error' },
      },
      (err, stats) => {
        if (err) return reject(err);
        const info = stats.toJson({ all: false, errors: true, warnings: true });
        if (info.errors.length) return reject(new Error(info.errors.map((e) => e.message).join('\n')));
        resolve({ file: path.join(outDir, 'main.js'), warnings: info.warnings.map((w) => w.message) });
      },
    );
  });
}

async function esbuild(outDir, external) {
  const result = await require('esbuild').build({
    absWorkingDir: project,
    entryPoints: ['src/main.js'],
    bundle: true,
    platform: 'node',
    outfile: path.join(outDir, 'main.js'),
    external,
    logLevel: 'silent',
  });
  return { file: path.join(outDir, 'main.js'), warnings: result.warnings.map((w) => w.text) };
}

/** Runs a bundle as an IDE would, without SESSIONLOCKS_BINARY unless env gives it. */
function run(file, env = {}) {
  const { SESSIONLOCKS_BINARY, ...rest } = process.env;
  void SESSIONLOCKS_BINARY;
  const r = spawnSync(process.execPath, [file, stateDir], { encoding: 'utf8', env: { ...rest, ...env }, timeout: 60_000 });
  assert.equal(r.status, 0, `${file} failed:\n${r.stdout}${r.stderr}`);
  return JSON.parse(r.stdout);
}

function assertListed(out, where) {
  assert.equal(out.error, undefined, `${where}: ${out.error?.message}`);
  assert.equal(out.binary, path.join(project, 'node_modules', HOST_PKG, 'bin', process.platform === 'win32' ? 'sessionlocks.exe' : 'sessionlocks'));
  assert.deepEqual(Object.fromEntries(out.sessions), { [ids.free]: 'free', [ids.stale]: 'stale' }, where);
}

/** The error a bundle shipped without node_modules must give: each thing to configure, exactly. */
function assertAdvice(out, where) {
  assert.ok(out.error, `${where}: the bundle worked without node_modules: ${JSON.stringify(out)}`);
  const m = out.error.message;
  assert.equal(out.error.name, 'BinaryNotFoundError', m);
  assert.equal(out.error.reason, 'bundled', m);
  for (const want of [
    HOST_PKG,
    `externals: { '${MAIN}': 'commonjs ${MAIN}' }`,
    `--external:${MAIN}`,
    '"asarUnpack": ["**/node_modules/@copilot-ide/sessionlocks-*/**"]',
    'SessionLocks.spawn({ binary })',
    'SESSIONLOCKS_BINARY',
  ]) {
    assert.ok(m.includes(want), `${where}: the advice lacks ${want}:\n${m}`);
  }
  assert.doesNotMatch(m, /--include=optional|--omit=optional/, `${where}: npm advice for a bundling problem`);
}

const builds = {
  'webpack --target node': (dir, ext) => webpack('node', dir, ext ? { [MAIN]: `commonjs ${MAIN}` } : undefined),
  'webpack --target electron-main': (dir, ext) => webpack('electron-main', dir, ext ? { [MAIN]: `commonjs ${MAIN}` } : undefined),
  'esbuild --platform=node': (dir, ext) => esbuild(dir, ext ? [MAIN] : []),
};

for (const [name, build] of Object.entries(builds)) {
  describe(`bundled by ${name}`, () => {
    let bundle;
    before(async () => {
      const dir = path.join(project, `dist-${name.replace(/\W+/g, '-')}`);
      bundle = await build(dir, false);
    });

    test('builds without warnings', () => {
      // webpack's "Critical dependency: require function is used in a way
      // in which dependencies cannot be statically extracted" meant a
      // require.resolve it had replaced with one that finds nothing.
      assert.deepEqual(bundle.warnings, []);
    });

    test('beside node_modules, the bundle spawns the sidecar and lists sessions', () => {
      assertListed(run(bundle.file), name);
    });

    test('alone, it fails with the configuration to change; SESSIONLOCKS_BINARY then works', () => {
      const away = path.join(tmpdir('sessionlocks-shipped-'), 'main.js');
      fs.copyFileSync(bundle.file, away);
      assertAdvice(run(away), name);
      const given = run(away, { SESSIONLOCKS_BINARY: hostBinary() });
      assert.equal(given.error, undefined, given.error?.message);
      assert.deepEqual(Object.fromEntries(given.sessions), { [ids.free]: 'free', [ids.stale]: 'stale' });
    });

    test('with the package marked external, as the advice says, it works', async () => {
      const external = await build(path.join(project, `dist-external-${name.replace(/\W+/g, '-')}`), true);
      assert.doesNotMatch(fs.readFileSync(external.file, 'utf8'), /function binaryPath/, 'the package was bundled anyway');
      assertListed(run(external.file), `${name}, external`);
    });
  });
}
