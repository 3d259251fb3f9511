#!/usr/bin/env node
// publish.mjs publishes one package that pack.mjs packed, with npm provenance,
// unless the registry already has that version: a release that failed half way
// through publishing can then simply be run again. The release workflow calls
// it once per package, the six platform packages before the main one.
//
//   node npm/scripts/publish.mjs --dir dist/npm --version 1.2.3 @copilot-ide/sessionlocks-linux-x64
//
// --version is the version the caller expects; a mismatch with what was packed
// fails, so that nothing is published under another version than the tag's.
// --dry-run prints the npm command instead of running it.

import { spawnSync } from 'node:child_process';
import { npmCommand, readPacked } from './pack.mjs';

function parseArgs(argv) {
  const opts = { dir: 'dist/npm', dryRun: false };
  for (let i = 0; i < argv.length; i++) {
    const flag = argv[i];
    const value = () => {
      if (i + 1 >= argv.length) throw new Error(`${flag} needs a value`);
      return argv[++i];
    };
    if (flag === '--dir') opts.dir = value();
    else if (flag === '--version') opts.version = value();
    else if (flag === '--dry-run') opts.dryRun = true;
    else if (flag.startsWith('-')) throw new Error(`unknown flag ${flag}`);
    else if (opts.name) throw new Error('one package at a time');
    else opts.name = flag;
  }
  if (!opts.name || !opts.version) throw new Error('usage: publish.mjs --version V [--dir D] [--dry-run] PACKAGE');
  return opts;
}

// npm view answers E404 for a package it has never seen and nothing at all
// for a version it does not have; anything else is an error to stop on.
function published(name, version) {
  const [npm, args, how] = npmCommand(['view', `${name}@${version}`, 'version']);
  const r = spawnSync(npm, args, { ...how, encoding: 'utf8' });
  if (r.status === 0) return r.stdout.trim() !== '';
  if (/E404/.test(r.stderr)) return false;
  throw new Error(`npm view ${name}@${version} failed (${r.status}):\n${r.stderr}`);
}

try {
  const { name, version, dir, dryRun } = parseArgs(process.argv.slice(2));
  const packed = readPacked(dir);
  if (packed.version !== version) throw new Error(`${dir} holds version ${packed.version}, not ${version}`);
  const tarball = packed.tarballs[name];
  if (!tarball) throw new Error(`${dir} has no tarball of ${name}; it has ${Object.keys(packed.tarballs).join(', ')}`);
  // A prerelease must not become what `npm install` picks by default.
  const tag = version.includes('-') ? 'next' : 'latest';
  const args = ['publish', '--provenance', '--access', 'public', '--tag', tag, tarball];
  if (dryRun) {
    console.log(`npm ${args.join(' ')}`);
  } else if (published(name, version)) {
    console.log(`${name}@${version} is already on the registry; not published again`);
  } else {
    const [npm, all, how] = npmCommand(args);
    const r = spawnSync(npm, all, { ...how, stdio: 'inherit' });
    if (r.status !== 0) throw new Error(`npm publish ${name}@${version} failed (${r.status})`);
  }
} catch (err) {
  console.error(`publish: ${err.message}`);
  process.exit(1);
}
