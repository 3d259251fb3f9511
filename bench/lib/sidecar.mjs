// The sidecar as the IDE runs it: `sessionlocks serve` spawned as a child and
// spoken to over its stdin/stdout with vscode-jsonrpc (Content-Length
// framing). When the typed client npm/sessionlocks loads, the benchmark goes
// through it, exactly as the IDE would; otherwise (or with
// SLBENCH_CLIENT=raw) through a bare vscode-jsonrpc connection. Both measure
// the same wire; the report names the one used.

import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { exited, kill, spawnTracked, trackPid, untrackPid } from './procs.mjs';
import { REPO } from './statedir.mjs';
import { now } from './stats.mjs';

const requireNpm = createRequire(join(REPO, 'npm', 'package.json'));
// vscode-jsonrpc lives in the npm dev workspace, not beside this file.
const rpc = requireNpm('vscode-jsonrpc/node');

/** BINARY is the sidecar under test; SESSIONLOCKS_BINARY overrides bin/sessionlocks. */
export const BINARY = process.env.SESSIONLOCKS_BINARY || join(REPO, 'bin', 'sessionlocks');

function loadTyped() {
  if (process.env.SLBENCH_CLIENT === 'raw') return null;
  try {
    const m = requireNpm('./sessionlocks');
    return typeof m.SessionLocks?.spawn === 'function' ? m.SessionLocks : null;
  } catch {
    return null;
  }
}
const Typed = loadTyped();

/** TYPED is true when the benchmark goes through the typed client. */
export const TYPED = Boolean(Typed);

/** CLIENT names the client library in use, for the report. */
export const CLIENT = Typed ? 'npm/sessionlocks (typed client over vscode-jsonrpc)' : 'vscode-jsonrpc (raw connection)';

/**
 * Sidecar is one running `sessionlocks serve` and its client. Every
 * notification is recorded with its arrival time so that latency can be
 * measured from the client's side.
 */
export class Sidecar {
  /**
   * start spawns the server and resolves once it has answered `status`.
   * args are extra serve flags (--watch poll, ...); logDir receives the raw
   * backend's stderr log. spawnedAt/readyAt bracket the start.
   */
  static async start({ stateDir, args = [], logDir }) {
    const s = new Sidecar();
    s.notes = [];
    s.waiters = [];
    s.spawnedAt = now();
    if (Typed) await s.#startTyped(stateDir, args);
    else await s.#startRaw(stateDir, args, logDir);
    s.readyAt = now();
    return s;
  }

  async #startTyped(stateDir, args) {
    this.client = await Typed.spawn({ binary: BINARY, stateDir, args });
    this.pid = this.client.pid;
    trackPid(this.pid);
    this.client.onSessionsChanged((params) => this.#note(params));
    this.exited = this.client.exited.then((info) => {
      untrackPid(this.pid);
      this.exitStatus = info.code ?? info.signal;
      this.#failWaiters();
    });
    // listSessions goes through the client's own method, as the IDE's calls would.
    this.send = (method, params) => (method === 'listSessions' ? this.client.listSessions(params) : this.client.request(method, params));
    this.log = () => this.client.stderr;
    this.close = async () => {
      await this.client.dispose();
    };
  }

  async #startRaw(stateDir, args, logDir) {
    const logPath = join(logDir, `serve-${Date.now()}-${Math.random().toString(36).slice(2, 8)}.log`);
    const logFd = openSync(logPath, 'w');
    const child = spawnTracked(BINARY, ['serve', '--state-dir', stateDir, ...args], { stdio: ['pipe', 'pipe', logFd] });
    closeSync(logFd);
    this.pid = child.pid;
    child.stdin.on('error', () => {});
    const conn = rpc.createMessageConnection(new rpc.StreamMessageReader(child.stdout), new rpc.StreamMessageWriter(child.stdin));
    conn.onNotification('sessionsChanged', (params) => this.#note(params));
    conn.onError(() => {});
    conn.listen();
    this.exited = exited(child).then(() => {
      this.exitStatus = child.exitCode ?? child.signalCode;
      this.#failWaiters();
    });
    this.log = (max = 4000) => {
      try {
        const t = readFileSync(logPath, 'utf8');
        return t.length > max ? '...' + t.slice(-max) : t;
      } catch {
        return '';
      }
    };
    // vscode-jsonrpc leaves a request pending forever if the server dies; race its exit.
    this.send = (method, params) =>
      Promise.race([
        conn.sendRequest(method, params),
        this.exited.then(() => {
          throw new Error(`sidecar exited (${this.exitStatus}) during ${method}; log:\n${this.log()}`);
        }),
      ]);
    this.close = async () => {
      conn.dispose();
      child.stdin.end();
      const t = setTimeout(() => kill(child), 2000);
      await this.exited;
      clearTimeout(t);
    };
    await this.send('status', {});
  }

  #note(params) {
    const note = { at: now(), params };
    this.notes.push(note);
    this.waiters = this.waiters.filter((w) => !w.test(note));
  }

  #failWaiters() {
    for (const w of this.waiters) w.fail(new Error(`sidecar exited (${this.exitStatus}) while waiting for a notification`));
    this.waiters = [];
  }

  /** request sends one request and resolves with {result, ms} (ms measured around the round trip). */
  async request(method, params = {}) {
    const t0 = now();
    const result = await this.send(method, params);
    return { result, ms: now() - t0 };
  }

  /**
   * waitNote resolves with the first notification at or after index from
   * whose params test returns true, or rejects after timeoutMs.
   */
  waitNote(test, { from = 0, timeoutMs = 5000 } = {}) {
    for (const n of this.notes.slice(from)) if (test(n.params)) return Promise.resolve(n);
    return new Promise((resolve, reject) => {
      const w = {
        test: (note) => {
          if (!test(note.params)) return false;
          clearTimeout(timer);
          resolve(note);
          return true;
        },
        fail: reject,
      };
      const timer = setTimeout(() => {
        this.waiters = this.waiters.filter((x) => x !== w);
        reject(new Error(`no matching sessionsChanged within ${timeoutMs} ms`));
      }, timeoutMs);
      this.waiters.push(w);
    });
  }
}

/** procUsage reads VmRSS and VmHWM (its peak), in bytes, and the open descriptor count of pid. */
export function procUsage(pid) {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kB = (field) => Number(new RegExp(`${field}:\\s+(\\d+) kB`).exec(status)[1]) * 1024;
  const fds = readdirSync(`/proc/${pid}/fd`).length;
  return { rss: kB('VmRSS'), peak: kB('VmHWM'), fds };
}

/**
 * cpuSeconds is the CPU time pid has used, in seconds: the sum over its
 * threads of /proc/<pid>/task/<tid>/schedstat's first field (nanoseconds),
 * for utime+stime count whole clock ticks (10 ms), too coarse to tell 0.6%
 * from 1% over a few seconds. Falls back to the ticks where schedstat is
 * missing (a kernel without CONFIG_SCHEDSTATS).
 */
export function cpuSeconds(pid) {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
    }
    return ns / 1e9;
  } catch {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the parenthesised comm, which may itself contain spaces.
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(f[11]) + Number(f[12])) / 100;
  }
}

/**
 * WireSidecar is `sessionlocks serve` spoken to with bare Content-Length
 * frames: a request goes out, and its answer counts as received once its
 * last byte is in the benchmark's process. Nothing is parsed, so its round
 * trips are the sidecar's share of a listing (the engine, encoding, the
 * pipe) without the client's JSON.parse and the garbage collection of what
 * that builds, which the IDE pays on its side.
 */
export class WireSidecar {
  static async start({ stateDir, args = [] }) {
    const s = new WireSidecar();
    s.child = spawnTracked(BINARY, ['serve', '--state-dir', stateDir, ...args], { stdio: ['pipe', 'pipe', 'ignore'] });
    s.child.stdin.on('error', () => {});
    s.exited = exited(s.child);
    s.chunks = [];
    s.have = 0;
    s.need = -1;
    s.pending = null;
    s.nextID = 1;
    s.child.stdout.on('data', (c) => {
      s.chunks.push(c);
      s.have += c.length;
      s.#frame();
    });
    s.exited.then(() => s.pending?.reject(new Error(`sidecar exited (${s.child.exitCode ?? s.child.signalCode})`)));
    await s.request('status');
    return s;
  }

  // #frame settles the pending request once a whole frame is in.
  #frame() {
    if (this.need < 0) {
      const buf = Buffer.concat(this.chunks);
      this.chunks = [buf];
      const end = buf.indexOf('\r\n\r\n');
      if (end < 0) return;
      const m = /content-length: *(\d+)/i.exec(buf.subarray(0, end).toString('latin1'));
      if (!m) throw new Error(`bad frame header: ${buf.subarray(0, end).toString('latin1')}`);
      this.need = end + 4 + Number(m[1]);
    }
    if (this.have < this.need) return;
    const buf = this.chunks.length === 1 ? this.chunks[0] : Buffer.concat(this.chunks);
    const rest = buf.subarray(this.need);
    const bytes = this.need;
    this.chunks = rest.length ? [rest] : [];
    this.have = rest.length;
    this.need = -1;
    const p = this.pending;
    this.pending = null;
    p?.resolve(bytes);
    if (this.have) this.#frame();
  }

  /** request sends one request and resolves with {bytes, ms} once its answer's last byte arrived. */
  async request(method, params = {}) {
    const body = JSON.stringify({ jsonrpc: '2.0', id: this.nextID++, method, params });
    const t0 = now();
    const bytes = await new Promise((resolve, reject) => {
      this.pending = { resolve, reject };
      this.child.stdin.write(`Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);
    });
    return { bytes, ms: now() - t0 };
  }

  async close() {
    this.child.stdin.end();
    const t = setTimeout(() => kill(this.child), 2000);
    await this.exited;
    clearTimeout(t);
  }
}
