#!/usr/bin/env node
'use strict';
// `npx @copilot-ide/sessionlocks repl` (or the `sessionlocks` bin of an app's
// node_modules): run the native binary with this process's stdio (so the REPL
// gets the terminal and `serve` gets the pipes), pass signals on, and exit the
// way the binary did. Every failure to start is one line on stderr, never a
// stack trace: the person reading it needs the reason, not our call stack.

const { spawn } = require('child_process');
const { binaryPath } = require('..');

const fail = (message) => {
  process.stderr.write(`sessionlocks: ${message}\n`);
  process.exit(1);
};

let bin;
let child;
try {
  bin = binaryPath();
  // spawn() throws rather than emits for some errors (ENOTDIR, ETXTBSY).
  child = spawn(bin, process.argv.slice(2), { stdio: 'inherit', windowsHide: false });
} catch (err) {
  fail(bin ? `cannot run ${bin}: ${err.message}` : err.message);
}

const forward = (signal) => () => {
  if (child.exitCode === null && child.signalCode === null) child.kill(signal);
};
for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP']) process.on(signal, forward(signal));

child.on('error', (err) => fail(`cannot run ${bin}: ${err.message}`));
child.on('exit', (code, signal) => {
  if (signal) {
    // Die of the same signal so that callers (shells, make) see it.
    process.removeAllListeners(signal);
    process.kill(process.pid, signal);
    return;
  }
  process.exit(code);
});
