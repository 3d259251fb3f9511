'use strict';
// Versions: the package's own, and the rule that maps a binary's version (what
// `git describe` stamped into it) to a package version. Packing (npm/scripts/
// pack.mjs) and the client's handshake at spawn both use npmVersion, so a
// binary and the package made from it by one `make npm` always agree.

// Inlined by bundlers, so a bundled client still knows which release it is.
const PACKAGE_VERSION = require('./package.json').version;

/** The version npm/sessionlocks/package.json has before `make npm` stamps a release into it. */
const UNSTAMPED = '0.0.0';

const SEMVER = /^v?(\d+\.\d+\.\d+(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?)$/;

/**
 * npmVersion turns what `git describe --tags --always --dirty` prints into a
 * version npm accepts: a tag like v1.2.3 as is, anything else (a bare commit,
 * a dirty tree) as a 0.0.0-dev prerelease that names it.
 */
function npmVersion(described) {
  const m = SEMVER.exec(String(described).trim());
  if (m) return m[1];
  const id =
    String(described)
      .trim()
      .replace(/[^0-9A-Za-z-]+/g, '-')
      .replace(/^-+|-+$/g, '') || 'unknown';
  return `0.0.0-dev.${/^\d+$/.test(id) ? `g${id}` : id}`;
}

module.exports = { PACKAGE_VERSION, UNSTAMPED, npmVersion };
