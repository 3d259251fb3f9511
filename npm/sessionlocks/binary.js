'use strict';
// Finding the native binary. The binary ships in one optional dependency per
// platform (as esbuild's does); npm installs only the one whose os/cpu match.
// Electron adds a twist esbuild does not handle: a file inside app.asar can be
// read through Electron's patched fs but not executed, so the path has to be
// rewritten to the app.asar.unpacked copy that packagers leave next to it.
// Bundlers add another: webpack replaces require.resolve with its own, which
// knows only the modules it bundled, so the platform package is looked up with
// Node's require of the bundle's file instead (see nodeResolve).

const fs = require('fs');
const { createRequire } = require('module');
const path = require('path');
const PLATFORMS = require('./platforms.json');
const { PACKAGE_VERSION } = require('./version');
const managers = require('./managers');

const MAIN_PACKAGE = '@copilot-ide/sessionlocks';

/** The per-platform package name for a Node platform and arch, e.g. @copilot-ide/sessionlocks-linux-x64. */
function platformPackageName(platform = process.platform, arch = process.arch) {
  return `${MAIN_PACKAGE}-${platform}-${arch}`;
}

/** The binary's file name on a platform. */
function binaryFileName(platform = process.platform) {
  return platform === 'win32' ? 'sessionlocks.exe' : 'sessionlocks';
}

/** BinaryNotFoundError says why no binary could be found and what to do about it. */
class BinaryNotFoundError extends Error {
  constructor(message, details) {
    super(message);
    this.name = 'BinaryNotFoundError';
    this.code = 'SESSIONLOCKS_BINARY_NOT_FOUND';
    Object.assign(this, details);
  }
}

// A path segment "<name>.asar" followed by more path means the file lives
// inside an archive; Electron packagers put unpacked files under
// "<name>.asar.unpacked" at the same place.
const ASAR_SEGMENT = /([\\/][^\\/]+\.asar)(?=[\\/])/;

/** Rewrites a path through an .asar archive to the archive's .asar.unpacked twin. */
function unpackedPath(p) {
  return p.replace(ASAR_SEGMENT, '$1.unpacked');
}

// Yarn Plug'n'Play keeps packages in zip archives that its patched fs reads
// through, but no program inside one can be executed (spawn: ENOTDIR).
const ZIP_SEGMENT = /[\\/][^\\/]+\.zip(?=[\\/])/;

const OR_SET = 'Or pass the binary to SessionLocks.spawn({ binary }), or set SESSIONLOCKS_BINARY to a sessionlocks binary.';

/** How to unpack the binary from an app.asar, in each packager's own option (docs/packaging.md). */
const ASAR_UNPACK =
  'electron-builder: "asarUnpack": ["**/node_modules/@copilot-ide/sessionlocks-*/**"]; Electron Forge: ' +
  "packagerConfig: { asar: { unpackDir: '**/node_modules/@copilot-ide/sessionlocks-*' } } (its " +
  'auto-unpack-natives plugin unpacks only *.node files, not this binary); @electron/asar: ' +
  'asar pack <dir> app.asar --unpack-dir "**/node_modules/@copilot-ide/sessionlocks-*"';

/**
 * nodeResolve is Node's require.resolve as seen from this file, or, in a
 * bundle, from the bundle's file: the platform package is found in the
 * node_modules next to the bundle, as Node would find it.
 */
function nodeResolve() {
  // webpack's own require.resolve cannot find a package it did not bundle;
  // __non_webpack_require__ is the real require of the bundle.
  if (typeof __non_webpack_require__ === 'function') return __non_webpack_require__.resolve;
  // Unbundled, and in esbuild's or rollup's output, __filename is a real file.
  return createRequire(typeof __filename === 'string' ? __filename : path.join(process.cwd(), 'index.js')).resolve;
}

/**
 * bundler names the bundler this file was bundled by ('webpack', or 'a
 * bundler' for the others, which leave no trace), or returns undefined
 * when it runs from its package directory: a bundle is no package directory,
 * so the package.json beside this file is missing or another package's.
 */
function bundler() {
  if (typeof __webpack_require__ === 'function') return 'webpack';
  if (typeof __filename !== 'string') return 'a bundler';
  try {
    if (JSON.parse(fs.readFileSync(path.join(__dirname, 'package.json'), 'utf8')).name === MAIN_PACKAGE) return undefined;
  } catch {
    // no package.json here: bundled
  }
  return 'a bundler';
}

/** The bundle's file, for error messages (webpack's node.__filename: 'mock' hides it). */
function bundleFile() {
  return typeof __filename === 'string' && isFile(__filename) ? __filename : process.argv[1];
}

function isFile(p) {
  try {
    return fs.statSync(p).isFile();
  } catch {
    return false;
  }
}

/**
 * binaryPath returns the absolute path of the sessionlocks binary to spawn.
 *
 * Order: the SESSIONLOCKS_BINARY environment variable; then the binary in the
 * installed per-platform package. Inside Electron a path through an .asar
 * archive is rewritten to .asar.unpacked. Throws BinaryNotFoundError with a
 * message naming the package and platform when nothing fits.
 *
 * The options exist so that tests can play another platform or Electron.
 */
function binaryPath(options = {}) {
  const env = options.env || process.env;
  const platform = options.platform || process.platform;
  const arch = options.arch || process.arch;
  const electron = 'electron' in options ? options.electron : process.versions.electron;
  const resolve = options.resolve || nodeResolve();

  let found;
  let origin;
  if (env.SESSIONLOCKS_BINARY) {
    found = path.resolve(env.SESSIONLOCKS_BINARY);
    origin = 'the SESSIONLOCKS_BINARY environment variable';
  } else {
    found = packagedBinary(platform, arch, resolve, options);
    origin = `the package ${platformPackageName(platform, arch)}`;
  }

  if (electron && ASAR_SEGMENT.test(found)) {
    const unpacked = unpackedPath(found);
    if (!isFile(unpacked)) {
        throw new BinaryNotFoundError(
        `The sessionlocks binary from ${origin} is inside an asar archive (${found}), where it cannot be executed, ` +
          `and the unpacked copy ${unpacked} does not exist. Unpack it when packaging the app: ${ASAR_UNPACK}.`,
        { path: found, unpackedPath: unpacked, platform, arch, reason: 'asar' },
      );
    }
    return unpacked;
  }
  if (!env.SESSIONLOCKS_BINARY && ZIP_SEGMENT.test(found)) {
    const name = platformPackageName(platform, arch);
    throw new BinaryNotFoundError(
      `The sessionlocks binary from ${origin} is inside a zip archive (${found}), as Yarn Plug'n'Play keeps ` +
        `packages, and a program in a zip cannot be executed. Unplug ${name}: run \`yarn unplug ${name}\` (it sets ` +
        `"dependenciesMeta": {"${name}": {"unplugged": true}} in package.json), or remove an "unplugged": false ` +
        `for it there, which overrides the preferUnplugged the package asks for; then run yarn install. ${OR_SET}`,
      { path: found, packageName: name, platform, arch, reason: 'zipped' },
    );
  }
  if (!isFile(found)) {
    if (origin.startsWith('the SESSIONLOCKS_BINARY')) {
      throw new BinaryNotFoundError(
        `SESSIONLOCKS_BINARY is set to ${JSON.stringify(env.SESSIONLOCKS_BINARY)}, but there is no file at ${found}.`,
        { path: found, platform, arch },
      );
    }
    throw new BinaryNotFoundError(
      `The package ${platformPackageName(platform, arch)} is installed but its binary ${found} is missing; ` +
        `reinstall it (npm ci) or set SESSIONLOCKS_BINARY.`,
      { path: found, packageName: platformPackageName(platform, arch), platform, arch },
    );
  }
  return found;
}

function packagedBinary(platform, arch, resolve, options) {
  const name = platformPackageName(platform, arch);
  const supported = PLATFORMS.map((p) => `${p.platform}-${p.arch}`);
  if (!supported.includes(`${platform}-${arch}`)) {
    throw new BinaryNotFoundError(
      `sessionlocks has no prebuilt binary for ${platform}-${arch} (there are binaries for ${supported.join(', ')}). ` +
        `Build one from source (make build) and point SESSIONLOCKS_BINARY at it.`,
      { packageName: name, platform, arch },
    );
  }
  try {
    return resolve(`${name}/bin/${binaryFileName(platform)}`);
  } catch (err) {
    if (err && err.code !== 'MODULE_NOT_FOUND') throw err;
  }
  const details = { packageName: name, platform, arch };
  const missing = `The sessionlocks binary for ${platform}-${arch} should come from the package ${name}`;

  // In a bundle, the package's own node_modules are usually not where the
  // bundle runs: unless they are beside it after all, the advice is about the
  // bundler's configuration, not npm.
  const bundled = 'bundler' in options ? options.bundler : bundler();
  let packageDir = options.packageDir || __dirname;
  if (bundled) {
    try {
      packageDir = path.dirname(resolve(`${MAIN_PACKAGE}/package.json`));
    } catch {
      packageDir = undefined;
    }
  }
  if (bundled && !packageDir) {
    throw new BinaryNotFoundError(
      `${missing}, which cannot be found from the bundle ${bundleFile()}: ${MAIN_PACKAGE} was bundled into it` +
        `${bundled === 'webpack' ? ' by webpack' : ''}, ` +
        `and Node looks for ${name} in the node_modules beside the bundle. Mark ${MAIN_PACKAGE} as external ` +
        `(webpack: externals: { '${MAIN_PACKAGE}': 'commonjs ${MAIN_PACKAGE}' }; esbuild: --external:${MAIN_PACKAGE}) ` +
        `and ship ${MAIN_PACKAGE} and ${name} in the app's node_modules (in Electron, unpacked from app.asar; ` +
        `${ASAR_UNPACK}). ${OR_SET}`,
      { ...details, bundler: bundled, reason: 'bundled' },
    );
  }

  // Say what is installed instead: node_modules copied from another machine
  // is the usual cause, and naming the package found makes that obvious.
  const lock = 'lockfile' in options ? options.lockfile : projectLockfile(packageDir);
  const how = managers.advice(lock || managers.fromUserAgent((options.env || process.env).npm_config_user_agent));
  details.manager = how.name;
  const others = PLATFORMS.map((p) => platformPackageName(p.platform, p.arch)).filter((other) => {
    if (other === name) return false;
    try {
      resolve(`${other}/package.json`);
      return true;
    } catch {
      return false;
    }
  });
  if (others.length) {
    throw new BinaryNotFoundError(
      `${missing}, which is not installed. Installed instead: ${others.join(', ')}, so node_modules was probably ` +
        `installed on another platform and copied here; reinstall dependencies on this machine (${how.reinstall}). ${OR_SET}`,
      { ...details, installed: others, reason: 'other-platform' },
    );
  }
  // The lockfile tells the two usual causes apart: a package it resolved
  // but that was not installed was left out on purpose (optional
  // dependencies omitted, or this platform filtered out); one it does not
  // list at all could not be had when it installed (the main tarball
  // installed alone, or a registry without that version).
  const wanted = `${name}@${PACKAGE_VERSION}`;
  if (lock && managers.lists(lock, name)) {
    throw new BinaryNotFoundError(
      `${missing}, which is not installed although ${lock.file} lists it: it is an optional dependency of ` +
        `${MAIN_PACKAGE}, and ${how.name} left it out (${how.skipped}). Reinstall with it: ${how.withOptional}. ${OR_SET}`,
      { ...details, installed: [], reason: 'omitted' },
    );
  }
  if (lock) {
    throw new BinaryNotFoundError(
      `${missing}, which was never installed: ${lock.file} does not list it, so ${how.name} could not get ${wanted} ` +
        `when it installed ${MAIN_PACKAGE} (its optional dependencies are skipped silently; installing the main ` +
        `tarball alone does that). Install ${name} too, at the same version (${how.add(wanted)}, or its tarball ` +
        `beside the main one), and do not use ${how.skipped}. ${OR_SET}`,
      { ...details, installed: [], reason: 'not-installed' },
    );
  }
  throw new BinaryNotFoundError(
    `${missing}, which is not installed. Install it too, at the same version (${how.add(wanted)}); ` +
      `it is an optional dependency of ${MAIN_PACKAGE}, which ${how.name} skips silently when it cannot get it (the main ` +
      `tarball installed alone) and on purpose with ${how.skipped} (then reinstall: ${how.withOptional}). ${OR_SET}`,
    { ...details, installed: [], reason: 'missing' },
  );
}

/**
 * projectLockfile finds the lockfile of the project the package in
 * packageDir is installed in: above the first node_modules on its path
 * (npm's, pnpm's store, a yarn PnP archive's), up to a workspace root.
 * Undefined when there is none, or the package does not run from an install.
 */
function projectLockfile(packageDir) {
  const m = /^(.*?)[\\/]node_modules(?:[\\/]|$)/.exec(packageDir || '');
  return m ? managers.findLockfile(m[1]) : undefined;
}

module.exports = {
  binaryPath,
  binaryFileName,
  platformPackageName,
  unpackedPath,
  BinaryNotFoundError,
  PLATFORMS,
  MAIN_PACKAGE,
};
