#!/usr/bin/env node
'use strict';
// `npx sessionlocks repl` from an app's node_modules: run the native binary
// with this process's stdio (so the REPL gets the terminal and `serve` gets
// the pipes), pass signals on, and exit the way the binary did.

const { spawn } = require('child_process');
const { binaryPath } = require('..');

let bin;
try {
  bin = binaryPath();
} catch (err) {
  process.stderr.write(`sessionlocks: ${err.message}\n`);
  process.exit(1);
}

const child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', windowsHide: false });
const forward = (signal) => () => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward(signal));

child.on('error', (err) => {
  process.stderr.write(`sessionlocks: cannot run ${bin}: ${err.message}\n`);
  process.exit(1);
});
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal so that callers (shells, make) see it.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
