'use strict';
// @copilot-ide/sessionlocks: spawn the sessionlocks sidecar and talk to it.
// See index.d.ts for the API and README.md for an example.
//
// One `exports.name =` per export: Node finds the named exports of a
// CommonJS module by reading its source, and this is the form it always
// reads, so `import { SessionLocks } from '@copilot-ide/sessionlocks'` works
// from ES modules as well as require() does.

const binary = require('./binary');
const client = require('./client');

exports.SessionLocks = client.SessionLocks;
exports.SessionLocksError = client.SessionLocksError;
exports.SessionChangedError = client.SessionChangedError;
exports.ErrorCodes = client.ErrorCodes;
exports.binaryPath = binary.binaryPath;
exports.platformPackageName = binary.platformPackageName;
exports.BinaryNotFoundError = binary.BinaryNotFoundError;
exports.platforms = binary.PLATFORMS;
