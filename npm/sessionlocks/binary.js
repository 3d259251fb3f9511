'use strict';
// Finding the native binary. The binary ships in one optional dependency per
// platform (as esbuild's does); npm installs only the one whose os/cpu match.
// Electron adds a twist esbuild does not handle: a file inside app.asar can be
// read through Electron's patched fs but not executed, so the path has to be
// rewritten to the app.asar.unpacked copy that packagers leave next to it.

const fs = require('fs');
const path = require('path');
const PLATFORMS = require('./platforms.json');

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
  const resolve = options.resolve || require.resolve;

  let found;
  let origin;
  if (env.SESSIONLOCKS_BINARY) {
    found = path.resolve(env.SESSIONLOCKS_BINARY);
    origin = 'the SESSIONLOCKS_BINARY environment variable';
  } else {
    found = packagedBinary(platform, arch, resolve);
    origin = `the package ${platformPackageName(platform, arch)}`;
  }

  if (electron && ASAR_SEGMENT.test(found)) {
    const unpacked = unpackedPath(found);
    if (!isFile(unpacked)) {
      throw new BinaryNotFoundError(
        `The sessionlocks binary from ${origin} is inside an asar archive (${found}), where it cannot be executed, ` +
          `and the unpacked copy ${unpacked} does not exist. Unpack the binary when packaging the app, e.g. with ` +
          `electron-builder "asarUnpack": ["**/node_modules/@copilot-ide/sessionlocks-*/**"] ` +
          `(or the unpack option of @electron/asar / Electron Forge).`,
        { path: found, unpackedPath: unpacked, platform, arch },
      );
    }
    return unpacked;
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

function packagedBinary(platform, arch, resolve) {
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
  // Say what is installed instead: node_modules copied from another machine
  // is the usual cause, and naming the package found makes that obvious.
  const others = PLATFORMS.map((p) => platformPackageName(p.platform, p.arch)).filter((other) => {
    if (other === name) return false;
    try {
      resolve(`${other}/package.json`);
      return true;
    } catch {
      return false;
    }
  });
  const hint = others.length
    ? ` Installed instead: ${others.join(', ')}, so node_modules was probably installed on another platform ` +
      `and copied here; reinstall dependencies on this machine (npm ci).`
    : ` It is an optional dependency of ${MAIN_PACKAGE}; npm skips it with --omit=optional (or --no-optional), ` +
      `and when the lockfile was written without it. Reinstall with optional dependencies (npm ci --include=optional).`;
  throw new BinaryNotFoundError(
    `The sessionlocks binary for ${platform}-${arch} should come from the package ${name}, which is not installed.${hint} ` +
      `Or set SESSIONLOCKS_BINARY to a sessionlocks binary.`,
    { packageName: name, platform, arch, installed: others },
  );
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
