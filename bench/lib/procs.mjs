// Every process and temporary directory the benchmark creates is registered
// here, so that one cleanup pass removes all of them on success, on failure and
// on Ctrl-C. Processes are killed by the pid we spawned, never by name.

import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const children = new Set();
const dirs = new Set();

/**
 * spawnTracked is child_process.spawn whose child is killed by cleanup().
 * With group: true the child leads its own process group and kill() signals
 * the whole group (for `go test`, whose test binary is a grandchild).
 */
export function spawnTracked(cmd, args, { group = false, ...opts } = {}) {
  const child = spawn(cmd, args, { ...opts, detached: group });
  child.group = group;
  children.add(child);
  child.on('exit', () => children.delete(child));
  // A spawn failure (ENOENT, say) must reach the caller's promise, not crash
  // the process through an unhandled 'error' event.
  child.on('error', () => children.delete(child));
  return child;
}

// Processes spawned by code we do not own (the typed client spawns its own
// child): killed by pid at cleanup, and forgotten as soon as they exit so
// that a reused pid is never signalled.
const pids = new Set();

/** trackPid registers a process someone else spawned for cleanup(). */
export function trackPid(pid) {
  if (pid) pids.add(pid);
}

/** untrackPid forgets a process registered with trackPid once it has exited. */
export function untrackPid(pid) {
  pids.delete(pid);
}

/** kill sends sig to one child we started, ignoring one that already exited. */
export function kill(child, sig = 'SIGKILL') {
  if (child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(child.group ? -child.pid : child.pid, sig);
  } catch (e) {
    if (e.code !== 'ESRCH') throw e;
  }
}

/**
 * killGroup SIGKILLs the process group child leads (spawned with group: true)
 * even after child itself has exited: a launcher whose orphaned CLI lives on
 * in its group. Call it only while a member is known to live, so that the
 * group's id cannot have been handed to anyone else.
 */
export function killGroup(child) {
  try {
    process.kill(-child.pid, 'SIGKILL');
  } catch (e) {
    if (e.code !== 'ESRCH') throw e;
  }
}

/** exited resolves when child has exited (at once if it already has). */
export function exited(child) {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', resolve));
}

/** killAndWait kills child and waits until the kernel has reaped it. */
export async function killAndWait(child, sig = 'SIGKILL') {
  kill(child, sig);
  await exited(child);
}

/** stopAll SIGKILLs processes we started ({child} each: holders, sleepers) and waits until each is reaped. */
export async function stopAll(procs) {
  await Promise.all(procs.map((p) => killAndWait(p.child)));
}

/** tempDir makes a directory that cleanup() removes. */
export function tempDir(prefix = 'slbench-') {
  const d = mkdtempSync(join(tmpdir(), prefix));
  dirs.add(d);
  return d;
}

/** removeDir removes a directory made by tempDir now rather than at exit. */
export function removeDir(d) {
  rmSync(d, { recursive: true, force: true });
  dirs.delete(d);
}

/** liveChildren is how many of our children are still running. */
export function liveChildren() {
  return children.size + pids.size;
}

let cleaned = false;

/** cleanup kills every child still running and removes every temp dir. It is synchronous so that it can run from process 'exit'. */
export function cleanup() {
  if (cleaned) return;
  cleaned = true;
  for (const c of children) kill(c);
  children.clear();
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {}
  }
  pids.clear();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
  dirs.clear();
}

/** installCleanup runs cleanup on exit, on SIGINT/SIGTERM/SIGHUP and on an uncaught error. */
export function installCleanup() {
  process.on('exit', cleanup);
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.on(sig, () => {
      process.stderr.write(`\nbench: ${sig}, cleaning up\n`);
      cleanup();
      process.exit(130);
    });
  }
  process.on('uncaughtException', (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    cleanup();
    process.exit(1);
  });
  process.on('unhandledRejection', (err) => {
    process.stderr.write(`bench: ${err?.stack ?? err}\n`);
    cleanup();
    process.exit(1);
  });
}
