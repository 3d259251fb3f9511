'use strict';
// The typed client. It spawns `sessionlocks serve` and speaks JSON-RPC 2.0 to
// it with vscode-jsonrpc over the child's stdin/stdout (Content-Length
// framing). vscode-jsonrpc leaves requests pending forever when the stream
// closes, so this file keeps its own list of pending calls and settles them
// when the child exits or the client is disposed.

const { spawn } = require('child_process');
// vscode-jsonrpc takes tens of milliseconds to load; an IDE that requires
// this package at startup should not pay for it before it spawns a client.
let loaded;
const rpc = () => (loaded ??= require('vscode-jsonrpc/node'));
const { binaryPath } = require('./binary');

/**
 * JSON-RPC error codes: the server's, as the OpenRPC document lists them
 * (schema/openrpc.json; a test keeps the two in step), then the two this
 * client raises itself. RequestCancelled comes from either side.
 */
const ErrorCodes = Object.freeze({
  ParseError: -32700,
  InvalidRequest: -32600,
  MethodNotFound: -32601,
  InvalidParams: -32602,
  InternalError: -32603,
  SessionNotFound: -32001,
  StateDirUnreadable: -32002,
  FileOperationFailed: -32003,
  SessionBusy: -32004,
  /** The call was cancelled: through its AbortSignal, or by $/cancelRequest. */
  RequestCancelled: -32800,
  /** The client was disposed while the call was pending. */
  Disposed: -32097,
  /** The sessionlocks process exited (or never started) while the call was pending. */
  ChildExited: -32096,
});

/** SessionLocksError is a failed call: the JSON-RPC error code, message and data, and the method called. */
class SessionLocksError extends Error {
  constructor(code, message, data, method, options) {
    super(message, options);
    this.name = 'SessionLocksError';
    this.code = code;
    this.data = data;
    this.method = method;
  }
}

// vscode-jsonrpc's own codes for a broken stream (MessageWriteError,
// MessageReadError, PendingResponseRejected, ConnectionInactive).
const TRANSPORT_ERRORS = new Set([-32099, -32098, -32097, -32096]);
const TRANSPORT_GRACE = 1_000;
const STDERR_TAIL = 8 * 1024;
const ERROR_LOG_TAIL = 2 * 1024;
const DEFAULT_START_TIMEOUT = 10_000;
const DEFAULT_DISPOSE_GRACE = 1_000;

function describeExit(info) {
  if (info.error) return `could not be started: ${info.error.message}`;
  return info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
}

class SessionLocks {
  #child;
  #conn;
  #pending = new Set();
  #changed;
  #exitEmitter;
  #exitInfo = null;
  #disposed = false;
  #disposing = null;
  #stderrTail = '';
  #resolveExited;
  #disposeGrace;
  /** The last listing rebuilt: {version, sessions}, the base of the next delta. */
  #listing;
  /** Set once the server refused since: it predates deltas. */
  #noDeltas = false;

  /**
   * Spawns `sessionlocks serve` and resolves once it has answered a first
   * call (status), so a resolved client is known to work.
   * @param {import('./index').SpawnOptions} [options]
   * @returns {Promise<SessionLocks>}
   */
  static async spawn(options = {}) {
    const binary = options.binary || binaryPath();
    const args = ['serve'];
    if (options.stateDir) args.push('--state-dir', options.stateDir);
    if (options.args) args.push(...options.args);
    const child = spawn(binary, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: options.env ? { ...process.env, ...options.env } : process.env,
      cwd: options.cwd,
      windowsHide: true,
    });
    const client = new SessionLocks(child, options);
    const timeout = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT;
    let timer;
    try {
      await Promise.race([
        client.status(),
        new Promise((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new SessionLocksError(
                  ErrorCodes.ChildExited,
                  `sessionlocks (${binary}) did not answer within ${timeout} ms.${client.#stderrHint()}`,
                  undefined,
                  'status',
                ),
              ),
            timeout,
          );
        }),
      ]);
    } catch (err) {
      await client.dispose();
      throw err;
    } finally {
      clearTimeout(timer);
    }
    return client;
  }

  /** Use SessionLocks.spawn; the constructor takes an already spawned child. */
  constructor(child, options = {}) {
    const { Emitter, createMessageConnection, StreamMessageReader, StreamMessageWriter } = rpc();
    this.#child = child;
    this.#changed = new Emitter();
    this.#exitEmitter = new Emitter();
    this.#disposeGrace = options.disposeGraceMs ?? DEFAULT_DISPOSE_GRACE;
    /**
     * Resolves when the child process ends, however it ends; `expected` is
     * false when it died without dispose() asking it to.
     * @type {Promise<import('./index').ExitInfo>}
     */
    this.exited = new Promise((resolve) => (this.#resolveExited = resolve));

    const onStderr = options.onStderr;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-STDERR_TAIL);
      if (onStderr) onStderr(chunk);
    });
    // Writing to a dead child raises EPIPE on stdin; the exit handler reports it.
    child.stdin.on('error', () => {});
    child.on('error', (error) => {
      if (child.pid === undefined) this.#exit({ code: null, signal: null, error });
    });
    // 'close' rather than 'exit': by then stderr is drained, so the log
    // tail in the exit info and errors is complete.
    child.on('close', (code, signal) => this.#exit({ code, signal }));

    this.#conn = createMessageConnection(new StreamMessageReader(child.stdout), new StreamMessageWriter(child.stdin));
    this.#conn.onNotification('sessionsChanged', (params) => this.#changed.fire(params));
    this.#conn.onError(() => {}); // stream errors end in an exit, reported there
    this.#conn.listen();
  }

  /** The child's process id (undefined if it could not be started). */
  get pid() {
    return this.#child.pid;
  }

  /** The last 8 KiB the child wrote to stderr (its log). */
  get stderr() {
    return this.#stderrTail;
  }

  /**
   * Lists sessions, newest updatedAt first. Unless options.fresh is set or
   * params name ids or since, the answer is asked for as a delta against
   * the last listing (params.since) and rebuilt here: sessions that did not
   * change are the very objects of that listing, frozen, so a 10,000-session
   * listing costs the parsing of what changed rather than of 4 MB of JSON.
   */
  listSessions(params = {}, options = {}) {
    if (options.fresh || params.ids || params.since !== undefined || this.#noDeltas) {
      return this.request('listSessions', params, options);
    }
    const base = this.#listing;
    const asked = this.request('listSessions', { ...params, since: base ? base.version : '' }, options);
    return asked.then((answer) => {
      if (typeof answer?.version !== 'string') return answer; // a server that ignores since: the answer is whole
      const sessions = rebuild(answer, base);
      if (!sessions) {
        // A delta that does not fit (against some other listing): never
        // guess; ask for the whole list.
        this.#listing = undefined;
        return this.request('listSessions', params, options);
      }
      this.#listing = { version: answer.version, sessions };
      return { stateDir: answer.stateDir, total: answer.total, sessions: sessions.slice(), version: answer.version };
    }, (err) => {
      // A server older than deltas refuses since as an unknown parameter
      // (SESSIONLOCKS_BINARY naming an older build): stop asking.
      if (err?.code !== ErrorCodes.InvalidParams || err.data?.field !== 'since') throw err;
      this.#noDeltas = true;
      return this.request('listSessions', params, options);
    });
  }

  /** Says whether a session may be resumed now, with a sentence for the user. */
  canResume(params, options) {
    return this.request('canResume', params, options);
  }

  /** Removes the files of stale holders; unknown and live holders are kept. */
  reclaimStale(params = {}, options) {
    return this.request('reclaimStale', params, options);
  }

  /** Removes every holder of one session, optionally terminating live holders first. */
  forceResume(params, options) {
    return this.request('forceResume', params, options);
  }

  /** The server's version, state dir, watcher and cache counters. */
  status(options) {
    return this.request('status', {}, options);
  }

  /** The server's OpenRPC document (rpc.discover). */
  discover(options) {
    return this.request('rpc.discover', {}, options);
  }

  /**
   * Sends any request. Rejects with SessionLocksError.
   * @param {string} method
   * @param {object} [params]
   * @param {{signal?: AbortSignal}} [options]
   */
  request(method, params, options = {}) {
    if (this.#disposed || this.#exitInfo) return Promise.reject(this.#closedError(method));
    const signal = options.signal;
    if (signal && signal.aborted) return Promise.reject(cancelled(method, signal));
    return new Promise((resolve, reject) => {
      let source;
      let onAbort;
      // Whoever settles the call first (the answer, an abort, the child's
      // exit, dispose) wins; the others find it settled.
      const call = {
        method,
        settle: (fn, value) => {
          if (call.done) return;
          call.done = true;
          this.#pending.delete(call);
          if (signal) signal.removeEventListener('abort', onAbort);
          if (source) source.dispose();
          fn(value);
        },
      };
      call.reject = (err) => call.settle(reject, err);
      this.#pending.add(call);
      if (signal) {
        source = new (rpc().CancellationTokenSource)();
        onAbort = () => {
          source.cancel(); // sends $/cancelRequest
          call.reject(cancelled(method, signal));
        };
        signal.addEventListener('abort', onAbort, { once: true });
      }
      // vscode-jsonrpc takes every argument but a trailing token as a
      // positional param: pass the token only when there is one.
      const sent = source ? this.#conn.sendRequest(method, params, source.token) : this.#conn.sendRequest(method, params);
      sent.then(
        (result) => call.settle(resolve, result),
        (err) => {
          if (err instanceof rpc().ResponseError && !TRANSPORT_ERRORS.has(err.code)) {
            call.reject(new SessionLocksError(err.code, err.message, err.data, method));
            return;
          }
          // The pipe broke: the child is dying, and its exit settles the call
          // with the exit status and log. This is the fallback if it lingers.
          const error = new SessionLocksError(ErrorCodes.ChildExited, `${method}: ${err && err.message}`, undefined, method, {
            cause: err,
          });
          setTimeout(() => call.reject(error), TRANSPORT_GRACE).unref();
        },
      );
    });
  }

  /**
   * Calls listener with every sessionsChanged notification.
   * @returns {{dispose(): void}} stops the listener
   */
  onSessionsChanged(listener) {
    return this.#changed.event(listener);
  }

  /** Calls listener once, when the child process ends. */
  onExit(listener) {
    if (this.#exitInfo) {
      const info = this.#exitInfo;
      queueMicrotask(() => listener(info));
      return { dispose() {} };
    }
    return this.#exitEmitter.event(listener);
  }

  /**
   * Ends the child: closes its stdin (it exits on EOF), then SIGTERM after a
   * grace period, then SIGKILL. Pending calls reject with ErrorCodes.Disposed.
   * Resolves once the child has exited. Safe to call more than once.
   */
  dispose() {
    if (this.#disposing) return this.#disposing;
    this.#disposed = true;
    this.#rejectPending((call) => this.#closedError(call.method));
    this.#conn.dispose();
    if (this.#exitInfo) {
      this.#disposing = Promise.resolve();
      return this.#disposing;
    }
    this.#child.stdin.end();
    const term = setTimeout(() => this.#child.kill('SIGTERM'), this.#disposeGrace);
    const kill = setTimeout(() => this.#child.kill('SIGKILL'), 2 * this.#disposeGrace);
    this.#disposing = this.exited.then(() => {
      clearTimeout(term);
      clearTimeout(kill);
    });
    return this.#disposing;
  }

  #exit(info) {
    if (this.#exitInfo) return;
    const exitInfo = { code: info.code, signal: info.signal, expected: this.#disposed, stderr: this.#stderrTail };
    if (info.error) exitInfo.error = info.error;
    this.#exitInfo = exitInfo;
    this.#rejectPending((call) => this.#closedError(call.method));
    this.#conn.dispose();
    this.#resolveExited(exitInfo);
    this.#exitEmitter.fire(exitInfo);
    this.#exitEmitter.dispose();
  }

  #rejectPending(makeError) {
    const calls = [...this.#pending];
    this.#pending.clear();
    for (const call of calls) call.reject(makeError(call));
  }

  #closedError(method) {
    if (this.#disposed) {
      return new SessionLocksError(ErrorCodes.Disposed, `${method}: the sessionlocks client was disposed`, undefined, method);
    }
    const info = this.#exitInfo;
    return new SessionLocksError(
      ErrorCodes.ChildExited,
      `${method}: sessionlocks (pid ${this.#child.pid ?? 'none'}) ${describeExit(info)}.${this.#stderrHint()}`,
      { code: info.code, signal: info.signal },
      method,
      info.error ? { cause: info.error } : undefined,
    );
  }

  #stderrHint() {
    // Enough of the log to hold a flag error and the usage after it.
    const tail = this.#stderrTail.trim().slice(-ERROR_LOG_TAIL);
    return tail ? ` Its stderr ended with:\n${tail}` : '';
  }
}

if (typeof Symbol.asyncDispose === 'symbol') {
  SessionLocks.prototype[Symbol.asyncDispose] = function asyncDispose() {
    return this.dispose();
  };
}

/**
 * rebuild returns the whole, frozen session list of a versioned
 * listSessions answer asked for with since = base's version (base may be
 * undefined): the answer's own sessions, or for a delta the steps of
 * delta.order over base and them (see ListingDelta in protocol.d.ts). It
 * returns undefined when the answer does not fit base.
 */
function rebuild(answer, base) {
  if (!Array.isArray(answer.sessions)) return undefined;
  const fresh = answer.sessions;
  for (const s of fresh) deepFreeze(s);
  const delta = answer.delta;
  if (!delta) return fresh;
  if (!base || delta.since !== base.version || !Array.isArray(delta.order)) return undefined;
  const order = delta.order;
  const sessions = [];
  let next = 0;
  for (let i = 0; i < order.length; i++) {
    const step = order[i];
    if (!Number.isInteger(step)) return undefined;
    if (step < 0) {
      if (next - step > fresh.length) return undefined;
      for (const end = next - step; next < end; next++) sessions.push(fresh[next]);
      continue;
    }
    const count = order[++i];
    if (!Number.isInteger(count) || count <= 0 || step + count > base.sessions.length) return undefined;
    for (let j = step; j < step + count; j++) sessions.push(base.sessions[j]);
  }
  return next === fresh.length ? sessions : undefined;
}

/** deepFreeze freezes v and every object and array inside it. */
function deepFreeze(v) {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
  for (const k of Object.keys(v)) deepFreeze(v[k]);
  return Object.freeze(v);
}

function cancelled(method, signal) {
  return new SessionLocksError(ErrorCodes.RequestCancelled, `${method}: cancelled`, undefined, method, { cause: signal.reason });
}

module.exports = { SessionLocks, SessionLocksError, ErrorCodes };
