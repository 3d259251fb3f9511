// An Electron app packed as the packagers pack it, with @electron/asar (the
// library Electron Forge's packager calls with packagerConfig.asar, and the
// `asar` command): the unpack option docs/packaging.md gives leaves the binary
// in app.asar.unpacked, executable, where binaryPath() finds it; the Forge
// plugin auto-unpack-natives alone (its glob, *.node) does not, and
// binaryPath() then says which option to add. electron-builder packs with its
// own asar code and needs Electron itself: it is not run here.

import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { test } from 'node:test';
import { binaryName, key, platforms } from '../scripts/pack.mjs';
import { hostBinary, npmDir, repoRoot, tmpdir } from '../scripts/testenv.mjs';

const require = createRequire(import.meta.url);
const asar = require('@electron/asar');
const { binaryPath } = require('../sessionlocks/binary.js');

const MAIN = '@copilot-ide/sessionlocks';
const host = platforms.find((p) => p.platform === process.platform && p.arch === process.arch);
const HOST_PKG = `${MAIN}-${key(host)}`;
// What docs/packaging.md tells Forge and @electron/asar users to unpack, and the Forge plugin's own glob.
const UNPACK_DIR = '**/node_modules/@copilot-ide/sessionlocks-*';
const NATIVES = '**/{.**,**}/**/*.node';

/** An app directory as a packager sees it: main.js and node_modules with the package and the host's binary. */
function appDir() {
  const app = path.join(tmpdir('sessionlocks-app-'), 'app');
  const main = path.join(app, 'node_modules', MAIN);
  const manifest = JSON.parse(fs.readFileSync(path.join(npmDir, 'sessionlocks', 'package.json'), 'utf8'));
  for (const f of manifest.files) fs.cpSync(path.join(npmDir, 'sessionlocks', f), path.join(main, f), { recursive: true });
  fs.copyFileSync(path.join(npmDir, 'sessionlocks', 'package.json'), path.join(main, 'package.json'));
  const bin = path.join(app, 'node_modules', HOST_PKG, 'bin', binaryName(host));
  fs.mkdirSync(path.dirname(bin), { recursive: true });
  fs.writeFileSync(path.join(app, 'node_modules', HOST_PKG, 'package.json'), JSON.stringify({ name: HOST_PKG, version: '0.0.0' }));
  fs.copyFileSync(hostBinary(), bin);
  fs.chmodSync(bin, 0o755);
  fs.writeFileSync(path.join(app, 'main.js'), `require('${MAIN}');\n`);
  fs.writeFileSync(path.join(app, 'package.json'), JSON.stringify({ name: 'ide', main: 'main.js' }));
  return app;
}

/** binaryPath as Electron would run it from resources/app.asar: the package resolves inside the archive. */
const fromAsar = (resources) =>
  binaryPath({
    env: {},
    electron: '33.2.0',
    resolve: (request) => path.join(resources, 'app.asar', 'node_modules', request),
  });

test('the docs name the options this test packs with', () => {
  const docs = fs.readFileSync(path.join(repoRoot, 'docs', 'packaging.md'), 'utf8');
  assert.ok(docs.includes(`unpackDir: '${UNPACK_DIR}'`), 'Forge: packagerConfig.asar.unpackDir');
  assert.ok(docs.includes(`--unpack-dir "${UNPACK_DIR}"`), '@electron/asar: --unpack-dir');
  assert.ok(docs.includes('"asarUnpack": ["**/node_modules/@copilot-ide/sessionlocks-*/**"]'), 'electron-builder: asarUnpack');
});

test("Forge's packagerConfig.asar with unpackDir (and auto-unpack-natives' glob): the binary runs from app.asar.unpacked", async () => {
  const resources = tmpdir('sessionlocks-resources-');
  await asar.createPackageWithOptions(appDir(), path.join(resources, 'app.asar'), { unpack: NATIVES, unpackDir: UNPACK_DIR });
  const bin = fromAsar(resources);
  assert.equal(bin, path.join(resources, 'app.asar.unpacked', 'node_modules', HOST_PKG, 'bin', binaryName(host)));
  assert.match(execFileSync(bin, ['version'], { encoding: 'utf8' }), /^sessionlocks /);
  // The package itself stays in the archive.
  assert.ok(asar.listPackage(path.join(resources, 'app.asar')).some((f) => f.endsWith(path.join(MAIN, 'client.js'))));
  assert.ok(!fs.existsSync(path.join(resources, 'app.asar.unpacked', 'node_modules', MAIN)));
});

test('the asar command with --unpack-dir, as docs/packaging.md writes it', () => {
  const resources = tmpdir('sessionlocks-resources-');
  const cli = path.join(path.dirname(require.resolve('@electron/asar/package.json')), 'bin', 'asar.js');
  execFileSync(process.execPath, [cli, 'pack', appDir(), path.join(resources, 'app.asar'), '--unpack-dir', UNPACK_DIR]);
  assert.match(execFileSync(fromAsar(resources), ['version'], { encoding: 'utf8' }), /^sessionlocks /);
});

test("auto-unpack-natives alone leaves the binary in the archive: binaryPath says which option to add", async () => {
  const resources = tmpdir('sessionlocks-resources-');
  await asar.createPackageWithOptions(appDir(), path.join(resources, 'app.asar'), { unpack: NATIVES });
  assert.ok(!fs.existsSync(path.join(resources, 'app.asar.unpacked', 'node_modules', HOST_PKG)));
  assert.throws(
    () => fromAsar(resources),
    (err) => err.reason === 'asar' && err.message.includes(`unpackDir: '${UNPACK_DIR}'`) && /auto-unpack-natives/.test(err.message),
  );
});
