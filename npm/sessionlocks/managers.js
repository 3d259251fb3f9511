'use strict';
// Which package manager installed the project, and the commands in its own
// words that bring back a missing platform package: advice in npm's words is
// no help to someone who runs pnpm, yarn or bun.

const fs = require('fs');
const path = require('path');

// In the order a directory is searched: npm's own first, as npm reads them.
const LOCKFILES = [
  ['npm', 'npm-shrinkwrap.json'],
  ['npm', 'package-lock.json'],
  ['pnpm', 'pnpm-lock.yaml'],
  ['yarn', 'yarn.lock'],
  ['bun', 'bun.lock'],
  ['bun', 'bun.lockb'],
];

/**
 * findLockfile returns the lockfile nearest above dir (the project, or the
 * workspace root of a monorepo): {manager, file, text}; undefined if none.
 */
function findLockfile(dir) {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    for (const [manager, name] of LOCKFILES) {
      const file = path.join(d, name);
      let text;
      try {
        // bun.lockb is binary; latin1 keeps the package names in it readable.
        text = fs.readFileSync(file, name.endsWith('b') ? 'latin1' : 'utf8');
      } catch {
        continue;
      }
      return { manager, file, text, berry: manager === 'yarn' && !/^# yarn lockfile v1$/m.test(text) };
    }
    if (path.dirname(d) === d) return undefined;
  }
}

/** The manager that runs this process, from npm_config_user_agent ("pnpm/9.1.0 npm/? node/v20.11.0 linux x64"). */
function fromUserAgent(ua) {
  const m = /^(npm|pnpm|yarn|bun)\/(\d+)/.exec(ua || '');
  return m ? { manager: m[1], berry: m[1] === 'yarn' && Number(m[2]) >= 2 } : undefined;
}

/** Whether the lockfile names the package (a resolved entry), so that its absence was the install's choice. */
function lists(lock, name) {
  if (lock.manager !== 'npm') return lock.text.includes(`${name}@`);
  try {
    const parsed = JSON.parse(lock.text);
    const packages = parsed.packages || parsed.dependencies || {};
    return Object.keys(packages).some((k) => k === name || k.endsWith(`node_modules/${name}`));
  } catch {
    return false;
  }
}

/**
 * advice is what to run under manager: add (a package at a version),
 * reinstall (on this machine, from the lockfile), and how optional
 * dependencies get left out (skipped) with its undoing (withOptional).
 */
function advice({ manager, berry } = { manager: 'npm' }) {
  switch (manager) {
    case 'pnpm':
      return {
        name: 'pnpm',
        add: (spec) => `pnpm add ${spec}`,
        reinstall: 'pnpm install --frozen-lockfile',
        skipped: '--no-optional, or a pnpm.supportedArchitectures that leaves out this platform',
        withOptional: 'pnpm install (without --no-optional)',
      };
    case 'yarn':
      return berry
        ? {
            name: 'yarn',
            add: (spec) => `yarn add ${spec}`,
            reinstall: 'yarn install --immutable',
            skipped: 'a supportedArchitectures in .yarnrc.yml that leaves out this platform',
            withOptional: 'yarn install, with this platform in supportedArchitectures',
          }
        : {
            name: 'yarn',
            add: (spec) => `yarn add ${spec}`,
            reinstall: 'yarn install --frozen-lockfile',
            skipped: '--ignore-optional',
            withOptional: 'yarn install (without --ignore-optional)',
          };
    case 'bun':
      return {
        name: 'bun',
        add: (spec) => `bun add ${spec}`,
        reinstall: 'bun install --frozen-lockfile',
        skipped: '--omit optional',
        withOptional: 'bun install (without --omit optional)',
      };
    default:
      return {
        name: 'npm',
        add: (spec) => `npm install ${spec}`,
        reinstall: 'npm ci',
        skipped: '--omit=optional, --no-optional, or omit=optional in .npmrc',
        withOptional: 'npm ci --include=optional',
      };
  }
}

module.exports = { findLockfile, fromUserAgent, lists, advice };
