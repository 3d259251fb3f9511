#!/usr/bin/env node
// pack.mjs stages and packs the npm packages: one per platform in
// npm/sessionlocks/platforms.json (holding that platform's binary, with os/cpu
// set so npm installs only the matching one) and the main package, which lists
// all of them as optionalDependencies at the exact same version.
//
//   node npm/scripts/pack.mjs --version "$(git describe)" --bin-dir dist/bin --out dist/npm
//
// The tarballs and out/packed.json, which names them and their version, go to
// --out.
//
// --bin-dir holds <goos>-<goarch>/sessionlocks[.exe] as `make cross` builds
// them. --only linux-x64,... packs a subset (tests pack only the host's), and
// --binary FILE takes the binary for the single --only platform from FILE.

import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const require = createRequire(import.meta.url);
const here = path.dirname(fileURLToPath(import.meta.url));
// Shipped in every package: electron-builder's licence check and npm's own
// listing read it from the tarball, not from the repository.
export const licenseFile = path.resolve(here, '../../LICENSE');
export const mainSource = path.resolve(here, '../sessionlocks');
export const platforms = JSON.parse(fs.readFileSync(path.join(mainSource, 'platforms.json'), 'utf8'));
const mainManifest = JSON.parse(fs.readFileSync(path.join(mainSource, 'package.json'), 'utf8'));

/**
 * npmCommand returns [file, args, options] to run npm with execFileSync or
 * spawnSync on any system: on Windows npm is npm.cmd, which Node runs only
 * through a shell (shell: true), and then passes the arguments unquoted.
 */
export function npmCommand(args, platform = process.platform) {
  if (platform !== 'win32') return ['npm', args, {}];
  const quote = (a) => (/^[\w@%+=:,./\\-]+$/.test(a) ? a : `"${a}"`);
  return ['npm.cmd', args.map(quote), { shell: true }];
}

/** The Node platform-arch key of a table row, e.g. linux-x64. */
export const key = (p) => `${p.platform}-${p.arch}`;
export const packageName = (p) => `${mainManifest.name}-${key(p)}`;
export const binaryName = (p) => (p.goos === 'windows' ? 'sessionlocks.exe' : 'sessionlocks');

// Issue 5's goal for each platform binary.
const BINARY_GOAL = 6e6;

// One rule for packing and for the client's version check at spawn: it lives
// in the package (version.js) and is re-exported here for the tests.
export const { npmVersion } = require('../sessionlocks/version.js');

/**
 * binaryTarget reads the GOOS/GOARCH an executable was built for from its
 * header (ELF, Mach-O or PE), or returns null for anything else. Packing
 * checks it so that a wrong row in the platform table, or a binary copied to
 * the wrong directory, cannot ship to the wrong machines.
 */
export function binaryTarget(file) {
  const fd = fs.openSync(file, 'r');
  try {
    const head = Buffer.alloc(4096);
    const n = fs.readSync(fd, head, 0, head.length, 0);
    const b = head.subarray(0, n);
    if (n >= 20 && b.readUInt32BE(0) === 0x7f454c46) {
      const machine = b.readUInt16LE(18);
      return { goos: 'linux', goarch: { 0x3e: 'amd64', 0xb7: 'arm64' }[machine] || `elf-machine-${machine}` };
    }
    if (n >= 8 && b.readUInt32LE(0) === 0xfeedfacf) {
      const cpu = b.readUInt32LE(4);
      return { goos: 'darwin', goarch: { 0x01000007: 'amd64', 0x0100000c: 'arm64' }[cpu] || `macho-cpu-${cpu}` };
    }
    if (n >= 0x40 && b.toString('latin1', 0, 2) === 'MZ') {
      const pe = b.readUInt32LE(0x3c);
      if (pe + 6 <= n && b.toString('latin1', pe, pe + 4) === 'PE\0\0') {
        const machine = b.readUInt16LE(pe + 4);
        return { goos: 'windows', goarch: { 0x8664: 'amd64', 0xaa64: 'arm64' }[machine] || `pe-machine-${machine}` };
      }
    }
    return null;
  } finally {
    fs.closeSync(fd);
  }
}

function platformManifest(p, version) {
  return {
    name: packageName(p),
    version,
    description: `The sessionlocks binary for ${p.platform} ${p.arch} (GOOS=${p.goos} GOARCH=${p.goarch}), installed by ${mainManifest.name}.`,
    repository: mainManifest.repository,
    license: mainManifest.license,
    engines: mainManifest.engines,
    os: [p.platform],
    cpu: [p.arch],
    files: ['bin/'],
    // Yarn PnP must put the binary on disk to execute it.
    preferUnplugged: true,
  };
}

function stagePlatform(p, version, binary, dir) {
  if (!fs.existsSync(binary)) {
    throw new Error(`no binary for ${key(p)} at ${binary}: run \`make cross\` first (or pass --binary)`);
  }
  const target = binaryTarget(binary);
  if (!target || target.goos !== p.goos || target.goarch !== p.goarch) {
    const found = target ? `${target.goos}/${target.goarch}` : 'not an executable';
    throw new Error(`${binary} is ${found}, but the package ${packageName(p)} is for ${p.goos}/${p.goarch}`);
  }
  fs.mkdirSync(path.join(dir, 'bin'), { recursive: true });
  const dest = path.join(dir, 'bin', binaryName(p));
  fs.copyFileSync(binary, dest);
  fs.chmodSync(dest, 0o755);
  fs.copyFileSync(licenseFile, path.join(dir, 'LICENSE'));
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(platformManifest(p, version), null, 2) + '\n');
  fs.writeFileSync(
    path.join(dir, 'README.md'),
    `# ${packageName(p)}\n\nThe \`sessionlocks\` binary for ${p.platform} ${p.arch}. Do not depend on this package ` +
      `directly: install [\`${mainManifest.name}\`](https://www.npmjs.com/package/${mainManifest.name}), ` +
      `which installs the right platform package as an optional dependency.\n`,
  );
}

function stageMain(version, dir) {
  fs.mkdirSync(dir, { recursive: true });
  for (const entry of [...mainManifest.files, 'README.md']) {
    fs.cpSync(path.join(mainSource, entry), path.join(dir, entry), { recursive: true });
  }
  fs.copyFileSync(licenseFile, path.join(dir, 'LICENSE'));
  const manifest = { ...mainManifest, version, optionalDependencies: {} };
  for (const p of platforms) manifest.optionalDependencies[packageName(p)] = version;
  fs.writeFileSync(path.join(dir, 'package.json'), JSON.stringify(manifest, null, 2) + '\n');
}

/**
 * pack stages the packages under out/pkg and runs npm pack on them, leaving
 * the tarballs in out. It returns {version, tarballs: {name: file}}.
 */
export function pack({ version, out, binDir, only, binary }) {
  const selected = only ? platforms.filter((p) => only.includes(key(p))) : platforms;
  if (only && selected.length !== only.length) {
    const unknown = only.filter((k) => !platforms.some((p) => key(p) === k));
    throw new Error(`unknown platform ${unknown.join(', ')}; platforms.json has ${platforms.map(key).join(', ')}`);
  }
  if (binary && selected.length !== 1) throw new Error('--binary needs exactly one --only platform');
  out = path.resolve(out);
  const staging = path.join(out, 'pkg');
  fs.rmSync(staging, { recursive: true, force: true });
  // Tarballs of an earlier version would otherwise sit next to the new ones.
  fs.mkdirSync(out, { recursive: true });
  for (const f of fs.readdirSync(out)) {
    if (/^copilot-ide-sessionlocks.*\.tgz$/.test(f)) fs.rmSync(path.join(out, f));
  }
  const dirs = [];
  for (const p of selected) {
    const dir = path.join(staging, `sessionlocks-${key(p)}`);
    stagePlatform(p, version, binary || path.join(binDir, `${p.goos}-${p.goarch}`, binaryName(p)), dir);
    dirs.push(dir);
  }
  const mainDir = path.join(staging, 'sessionlocks');
  stageMain(version, mainDir);
  dirs.push(mainDir);

  // One npm invocation for all packages: npm's start-up dominates the time.
  const [npm, args, how] = npmCommand(['pack', '--json', '--pack-destination', out, ...dirs]);
  const result = JSON.parse(execFileSync(npm, args, { ...how, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] }));
  const tarballs = {};
  for (const r of result) tarballs[r.name] = path.join(out, r.filename);
  // What was packed, for whoever tests or publishes these tarballs later (readPacked).
  const index = { version, tarballs: Object.fromEntries(result.map((r) => [r.name, r.filename])) };
  fs.writeFileSync(path.join(out, 'packed.json'), JSON.stringify(index, null, 2) + '\n');
  return { version, tarballs, packed: result };
}

/** readPacked returns {version, tarballs: {name: file}} of the tarballs an earlier pack left in dir. */
export function readPacked(dir) {
  dir = path.resolve(dir);
  const index = JSON.parse(fs.readFileSync(path.join(dir, 'packed.json'), 'utf8'));
  const tarballs = {};
  for (const [name, file] of Object.entries(index.tarballs)) tarballs[name] = path.join(dir, file);
  return { version: index.version, tarballs };
}

function parseArgs(argv) {
  const opts = { out: 'dist/npm', binDir: 'dist/bin' };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    switch (flag) {
      case '--version': opts.version = npmVersion(value()); break;
      case '--out': opts.out = value(); break;
      case '--bin-dir': opts.binDir = value(); break;
      case '--only': opts.only = value().split(',').filter(Boolean); break;
      case '--binary': opts.binary = value(); break;
      default: throw new Error(`unknown flag ${flag}`);
    }
  }
  if (!opts.version) throw new Error('--version is required');
  return opts;
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    const { version, packed } = pack(parseArgs(process.argv.slice(2)));
    for (const r of packed) {
      const bin = r.files.find((f) => f.path.startsWith('bin/sessionlocks') && !f.path.endsWith('.js'));
      const size = bin ? `binary ${(bin.size / 1048576).toFixed(2)} MiB, ` : '';
      if (bin && bin.size > BINARY_GOAL) console.warn(`warning: ${r.name}: the binary is over the ${BINARY_GOAL / 1e6} MB goal`);
      console.log(`${r.filename}  ${size}tarball ${(r.size / 1048576).toFixed(2)} MiB`);
    }
    console.log(`version ${version}`);
  } catch (err) {
    console.error(`pack: ${err.message}`);
    process.exit(1);
  }
}
