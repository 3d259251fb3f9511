// The peer: the algorithm copilot-ide's sessionLocks.ts uses today, written
// out so that the benchmark can run it beside the sidecar on the same state
// dirs. It is deliberately faithful, including its weaknesses:
//
//   - list the session directories under the state dir;
//   - in each, find inuse.<pid>.lock files and take the pid from the name;
//   - process.kill(pid, 0): ESRCH means dead, anything else (EPERM included)
//     means alive;
//   - for a live pid spawn `ps -p <pid> -o command=` (execFile, awaited, one
//     at a time, as an async for-loop in the IDE would) and call the session
//     in use if the command line mentions copilot.
//
// It reads no workspace.yaml (so it does less work than the sidecar, which
// returns each session's metadata), it never looks at the .hold flock, and a
// pid reused by another copilot process fools it.
//
// Run by hand: node bench/peer/sessionLocks.mjs [STATE_DIR]

import { execFile } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { fileURLToPath } from 'node:url';

const execFileAsync = promisify(execFile);
const LOCK_NAME = /^inuse\.(\d+)\.lock$/;
const COPILOT = /copilot/i;

/** isAlive is the IDE's liveness test: signal 0, where only ESRCH means gone. */
export function isAlive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return err.code === 'EPERM';
  }
}

/** looksLikeCopilot spawns ps for pid and tests its command line. */
export async function looksLikeCopilot(pid) {
  try {
    const { stdout } = await execFileAsync('ps', ['-p', String(pid), '-o', 'command=']);
    return COPILOT.test(stdout);
  } catch {
    // ps exits 1 when the pid vanished between kill and ps.
    return false;
  }
}

/** isLockLive is the per-lock probe: kill(pid, 0), then ps for a live pid. */
export async function isLockLive(pid) {
  return isAlive(pid) && (await looksLikeCopilot(pid));
}

/**
 * listSessionLocks returns every session directory under stateDir with
 * whether the peer believes it in use and by which pids.
 * @returns {Promise<{id: string, inUse: boolean, pids: number[], lockPids: number[]}[]>}
 */
export async function listSessionLocks(stateDir) {
  let entries;
  try {
    entries = await readdir(stateDir, { withFileTypes: true });
  } catch (err) {
    if (err.code === 'ENOENT') return [];
    throw err;
  }
  const sessions = [];
  for (const ent of entries) {
    if (!ent.isDirectory()) continue;
    let files;
    try {
      files = await readdir(join(stateDir, ent.name));
    } catch {
      continue;
    }
    const lockPids = [];
    const pids = [];
    for (const name of files) {
      const m = LOCK_NAME.exec(name);
      if (!m) continue;
      const pid = Number(m[1]);
      lockPids.push(pid);
      if (await isLockLive(pid)) pids.push(pid);
    }
    sessions.push({ id: ent.name, inUse: pids.length > 0, pids, lockPids });
  }
  return sessions;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const dir = process.argv[2] ?? join(process.env.COPILOT_HOME ?? join(process.env.HOME, '.copilot'), 'session-state');
  const t0 = performance.now();
  const sessions = await listSessionLocks(dir);
  const ms = performance.now() - t0;
  for (const s of sessions.filter((s) => s.lockPids.length)) {
    console.log(`${s.id}  ${s.inUse ? 'in use' : 'free  '}  locks: ${s.lockPids.join(',')}`);
  }
  console.log(`${sessions.length} sessions, ${sessions.filter((s) => s.inUse).length} in use, ${ms.toFixed(1)} ms`);
}
