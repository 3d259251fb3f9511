'use strict';
// The typed client. It spawns `sessionlocks serve` and speaks JSON-RPC 2.0 to
// it with vscode-jsonrpc over the child's stdin/stdout (Content-Length
// framing). vscode-jsonrpc leaves requests pending forever when the stream
// closes, so this file keeps its own list of pending calls and settles them
// when the child exits or the client is disposed.
//
// With a restart policy the client outlives its child: a crashed child is
// spawned again after a backoff, calls made meanwhile wait for it, reads that
// were pending when it died are sent once more, and the view the listeners
// were given (listSessions answers plus sessionsChanged) is brought up to
// date with one sessionsChanged once the new child has listed the sessions,
// since notifications the dead child never sent are lost.
//
// Every answer and notification it hands out is deeply frozen: the restart
// view holds the very objects the caller got, and a caller that changed one
// would change what the next restart's difference is computed from.

const { spawn } = require('child_process');
// vscode-jsonrpc takes tens of milliseconds to load; an IDE that requires
// this package at startup should not pay for it before it spawns a client.
let loaded;
const rpc = () => (loaded ??= require('vscode-jsonrpc/node'));
const { binaryPath, platformPackageName, MAIN_PACKAGE } = require('./binary');
const { PACKAGE_VERSION, UNSTAMPED, npmVersion } = require('./version');
const { ErrorCodes, SessionLocksError, SessionChangedError, acted, cancelled, answerError } = require('./errors');

/**
 * The methods that change the state dir. Cancelled once they have begun to
 * signal or remove, they finish and answer what they did; so an aborted call
 * of theirs waits for the server's answer instead of rejecting at once.
 */
const ACTING = new Set(['forceResume', 'reclaimStale']);

/**
 * The methods that only read: pending when a child dies, they are sent once
 * more to the restarted child (with a restart policy). The acting ones never
 * are; their ChildExited says whether the request had reached the child.
 */
const READS = new Set(['listSessions', 'canResume', 'status', 'rpc.discover']);

// vscode-jsonrpc's own codes for a broken stream (MessageWriteError,
// MessageReadError, PendingResponseRejected, ConnectionInactive).
const TRANSPORT_ERRORS = new Set([-32099, -32098, -32097, -32096]);
const TRANSPORT_GRACE = 1_000;
const STDERR_TAIL = 8 * 1024;
const ERROR_LOG_TAIL = 2 * 1024;
const DEFAULT_START_TIMEOUT = 10_000;
const DEFAULT_DISPOSE_GRACE = 1_000;
/** The restart policy's defaults (restart: true): about 45 s of tries before giving up. */
const RESTART_DEFAULTS = Object.freeze({ maxRestarts: 10, backoffMs: 100, maxBackoffMs: 10_000, resetAfterMs: 60_000 });

function describeExit(info) {
  if (info.error) return `could not be started: ${info.error.message}`;
  return info.signal ? `was killed by ${info.signal}` : `exited with code ${info.code}`;
}

function restartPolicy(restart) {
  if (!restart) return null;
  const policy = { ...RESTART_DEFAULTS, ...(restart === true ? {} : restart) };
  for (const [k, v] of Object.entries(policy)) {
    if (typeof v !== 'number' || !(v >= 0)) throw new TypeError(`restart.${k} must be a number >= 0, got ${v}`);
  }
  return policy;
}

// Warned once per binary and version, not on every restart.
const warned = new Set();

class SessionLocks {
  /** The current child: {child, conn, pending, exit, runningSince, startError}. */
  #gen;
  #changed;
  #exitEmitter;
  #stateEmitter;
  #state = 'running';
  /** Set once the client is done (no child and none to come). */
  #finalExit = null;
  #disposed = false;
  #disposing = null;
  #stderrTail = '';
  #onStderr;
  #resolveExited;
  #disposeGrace;
  #startTimeout;
  /** What spawn() ran, to run it again; undefined for a client built on a given child. */
  #launch;
  #binary;
  #versionCheck = 'off';
  #version;
  #policy = null;
  #armed = false;
  #restarts = 0;
  /** Restarts since the last child that ran for policy.resetAfterMs. */
  #failures = 0;
  #restartTimer = null;
  /** Calls made while restarting: sent once the new child runs. */
  #waiting = new Set();
  /**
   * With a restart policy, what the listeners were told: id -> session, from
   * listSessions answers and sessionsChanged; and what the answers covered:
   * 'all', 'nonFree' (includeFree: false) or undefined (nothing whole yet).
   */
  #view = null;
  #viewScope;

  /**
   * Spawns `sessionlocks serve` and resolves once it has answered a first
   * call (status) and its version passed the check, so a resolved client is
   * known to work.
   * @param {import('./index').SpawnOptions} [options]
   * @returns {Promise<SessionLocks>}
   */
  static async spawn(options = {}) {
    const explicit = Boolean(options.binary || process.env.SESSIONLOCKS_BINARY);
    const binary = options.binary || binaryPath();
    const args = ['serve'];
    if (options.stateDir) args.push('--state-dir', options.stateDir);
    if (options.args) args.push(...options.args);
    const launch = () => {
      try {
        return spawn(binary, args, {
          stdio: ['pipe', 'pipe', 'pipe'],
          env: options.env ? { ...process.env, ...options.env } : process.env,
          cwd: options.cwd,
          windowsHide: true,
        });
      } catch (error) {
        // spawn() throws, rather than emitting 'error', for all but a few
        // errnos (ENOTDIR for a binary inside a zip, ETXTBSY for one being
        // written): reported as a failed start like ENOENT.
        return failedChild(error);
      }
    };
    const policy = restartPolicy(options.restart);
    const client = new SessionLocks(launch(), options);
    client.#launch = launch;
    client.#binary = binary;
    client.#versionCheck = options.versionCheck ?? (explicit ? 'warn' : 'error');
    client.#policy = policy;
    if (policy) client.#view = new Map();
    try {
      await client.#handshake(client.#gen);
    } catch (err) {
      await client.dispose();
      throw err;
    }
    client.#gen.runningSince = Date.now();
    client.#armed = true;
    return client;
  }

  /** Use SessionLocks.spawn; the constructor takes an already spawned child (and cannot restart it). */
  constructor(child, options = {}) {
    const { Emitter } = rpc();
    this.#changed = new Emitter();
    this.#exitEmitter = new Emitter();
    this.#stateEmitter = new Emitter();
    this.#disposeGrace = options.disposeGraceMs ?? DEFAULT_DISPOSE_GRACE;
    this.#startTimeout = options.startTimeoutMs ?? DEFAULT_START_TIMEOUT;
    this.#onStderr = options.onStderr;
    /**
     * Resolves when the client is done: its child ended and no restart
     * follows (dispose, no restart policy, or the policy gave up). `expected`
     * is false when it died without dispose() asking it to.
     * @type {Promise<import('./index').ExitInfo>}
     */
    this.exited = new Promise((resolve) => (this.#resolveExited = resolve));
    this.#attach(child);
  }

  #attach(child) {
    const { createMessageConnection, StreamMessageReader, StreamMessageWriter } = rpc();
    const gen = { child, conn: undefined, pending: new Set(), exit: null, runningSince: 0, startError: undefined, sending: undefined };
    this.#gen = gen;
    child.stderr.setEncoding('utf8');
    child.stderr.on('data', (chunk) => {
      this.#stderrTail = (this.#stderrTail + chunk).slice(-STDERR_TAIL);
      if (this.#onStderr) this.#onStderr(chunk);
    });
    // Writing to a dead child raises EPIPE on stdin; the exit handler reports it.
    child.stdin.on('error', () => {});
    child.on('error', (error) => {
      if (child.pid === undefined) this.#childExited(gen, { code: null, signal: null, error });
    });
    // 'close' rather than 'exit': by then stderr is drained, so the log
    // tail in the exit info and errors is complete.
    child.on('close', (code, signal) => this.#childExited(gen, { code, signal }));

    // The writer notes, for the call being sent (gen.sending), whether its
    // request was written to the child's stdin: a forceResume or
    // reclaimStale that dies with the child may have acted only if it was.
    const writer = new StreamMessageWriter(child.stdin);
    const write = writer.write.bind(writer);
    writer.write = (msg) => {
      const done = write(msg);
      if (gen.sending) gen.sending.written = done.then(() => true, () => false);
      return done;
    };
    gen.conn = createMessageConnection(new StreamMessageReader(child.stdout), writer);
    gen.conn.onNotification('sessionsChanged', (params) => {
      if (gen === this.#gen) this.#deliver(params);
    });
    gen.conn.onError(() => {}); // stream errors end in an exit, reported there
    gen.conn.listen();
    return gen;
  }

  /** The current child's process id (a new one after each restart; undefined if it could not be started). */
  get pid() {
    return this.#gen.child.pid;
  }

  /** The last 8 KiB the children wrote to stderr (their log). */
  get stderr() {
    return this.#stderrTail;
  }

  /** 'starting' while a restarted child has not answered yet, 'running', or 'exited' (see onStateChange). */
  get state() {
    return this.#state;
  }

  /** How many times the restart policy has spawned the child again. */
  get restarts() {
    return this.#restarts;
  }

  /** The version the binary reported at the last start (status), as `sessionlocks version` prints it. */
  get version() {
    return this.#version;
  }

  /** Lists sessions, newest updatedAt first. */
  listSessions(params = {}, options = {}) {
    return this.request('listSessions', params, options).then((answer) => this.#noted(params, answer));
  }

  /** Says whether a session may be resumed now, with a sentence for the user. */
  canResume(params, options) {
    return this.request('canResume', params, options);
  }

  /**
   * Removes the files of stale holders; unknown and live holders are kept.
   * Aborted once it has removed something, it resolves with what it did
   * (cancelled: true), as forceResume does (see request).
   */
  reclaimStale(params = {}, options) {
    return this.request('reclaimStale', params, options);
  }

  /**
   * Removes every holder of one session, optionally terminating live holders
   * first. params.expect may be the canResume answer the user decided on (or
   * its token): the server then acts only if the session has no live or
   * unknown holder that answer did not show, and otherwise rejects with
   * SessionChangedError (ErrorCodes.SessionChanged, data: the fresh answer).
   */
  forceResume(params, options) {
    let sent;
    try {
      sent = forceResumeParams(params);
    } catch (err) {
      return Promise.reject(err);
    }
    return this.request('forceResume', sent, options);
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
   * Sends any request. Rejects with SessionLocksError. While a restart is
   * under way the call waits for the new child (or for the policy to give
   * up, or dispose, which reject it).
   *
   * Aborting options.signal sends $/cancelRequest. A read rejects at once
   * with RequestCancelled; forceResume and reclaimStale, once sent, wait for
   * the server's answer: -32800 if it did nothing, else the result of what
   * it did, which resolves the call late (the child's exit and dispose still
   * reject it).
   * @param {string} method
   * @param {object} [params]
   * @param {{signal?: AbortSignal}} [options]
   */
  request(method, params, options = {}) {
    const never = ACTING.has(method) ? false : undefined;
    if (this.#disposed) return Promise.reject(this.#disposedError(method, never));
    if (this.#finalExit) return Promise.reject(this.#exitedError(method, this.#gen, never));
    const signal = options.signal;
    if (signal && signal.aborted) return Promise.reject(cancelled(method, signal));
    const { call, promise } = this.#newCall(method, params, signal);
    if (this.#state === 'running') this.#send(this.#gen, call);
    else this.#waiting.add(call);
    return promise;
  }

  /** A call of the client's own on gen, which does not wait for a restart. */
  #call(gen, method, params) {
    const { call, promise } = this.#newCall(method, params);
    this.#send(gen, call);
    return promise;
  }

  #newCall(method, params, signal) {
    let call;
    const promise = new Promise((resolve, reject) => {
      // Whoever settles the call first (the answer, an abort, the child's
      // exit, dispose) wins; the others find it settled.
      call = {
        method,
        params,
        signal,
        source: undefined,
        gen: undefined,
        settle: (fn, value) => {
          if (call.done) return;
          call.done = true;
          call.gen?.pending.delete(call);
          this.#waiting.delete(call);
          if (signal) signal.removeEventListener('abort', onAbort);
          if (call.source) call.source.dispose();
          fn(value);
        },
      };
      call.resolve = (value) => call.settle(resolve, value);
      call.reject = (err) => call.settle(reject, err);
      const onAbort = () => {
        if (call.source) call.source.cancel(); // sends $/cancelRequest, if the request was sent
        // A request that acts and was sent may have acted already: its
        // answer (a result saying what it did, or -32800 if it did nothing)
        // settles the call, as do the child's exit and dispose. Never
        // dropped: the caller must learn what was done to the session.
        if (ACTING.has(method) && call.gen) return;
        call.reject(cancelled(method, signal));
      };
      if (signal) {
        call.source = new (rpc().CancellationTokenSource)();
        signal.addEventListener('abort', onAbort, { once: true });
      }
    });
    return { call, promise };
  }

  #send(gen, call) {
    call.gen = gen;
    call.written = undefined;
    gen.pending.add(call);
    const { method, params, source } = call;
    // vscode-jsonrpc takes every argument but a trailing token as a
    // positional param: pass the token only when there is one. It hands the
    // request to the writer before sendRequest returns.
    let sent;
    gen.sending = call;
    try {
      sent = source ? gen.conn.sendRequest(method, params, source.token) : gen.conn.sendRequest(method, params);
    } catch (err) {
      // The connection saw the pipe close before the child's exit was handled.
      sent = Promise.reject(err);
    } finally {
      gen.sending = undefined;
    }
    sent.then(
      (result) => {
        if (call.gen === gen) call.resolve(deepFreeze(result));
      },
      (err) => {
        if (call.gen !== gen) return; // sent again to a restarted child
        if (err instanceof rpc().ResponseError && !TRANSPORT_ERRORS.has(err.code)) {
          const error = answerError(err, method, call.signal, ACTING.has(method));
          deepFreeze(error.data);
          call.reject(error);
          return;
        }
        // The pipe broke: the child is dying, and its exit settles the call
        // with the exit status and log. This is the fallback if it lingers.
        const data = ACTING.has(method) ? { mayHaveActed: true } : undefined;
        const error = new SessionLocksError(ErrorCodes.ChildExited, `${method}: ${err && err.message}`, data, method, { cause: err });
        setTimeout(() => call.gen === gen && call.reject(error), TRANSPORT_GRACE).unref();
      },
    );
  }

  /**
   * Calls listener with every sessionsChanged notification, and after a
   * restart with one made by the client: the difference between what the
   * listeners were told and what the new child lists.
   * @returns {{dispose(): void}} stops the listener
   */
  onSessionsChanged(listener) {
    return this.#changed.event(listener);
  }

  /**
   * Calls listener on every change of state: 'exited' when a child ends
   * (with its exit info, and whether and when a restart follows),
   * 'starting' when a restart spawns a new child, 'running' once it has
   * answered and the sessions have been listed again.
   * @returns {{dispose(): void}} stops the listener
   */
  onStateChange(listener) {
    return this.#stateEmitter.event(listener);
  }

  /** Calls listener once, when the client is done (see exited). */
  onExit(listener) {
    if (this.#finalExit) {
      const info = this.#finalExit;
      queueMicrotask(() => listener(info));
      return { dispose() {} };
    }
    return this.#exitEmitter.event(listener);
  }

  /**
   * Ends the child: closes its stdin (it exits on EOF), then SIGTERM after a
   * grace period, then SIGKILL. Stops any restart. Pending and waiting calls
   * reject with ErrorCodes.Disposed. Resolves once the child has exited.
   * Safe to call more than once.
   */
  dispose() {
    if (this.#disposing) return this.#disposing;
    this.#disposed = true;
    clearTimeout(this.#restartTimer);
    this.#restartTimer = null;
    const gen = this.#gen;
    for (const call of [...this.#waiting, ...gen.pending]) this.#rejectGone(call, gen);
    gen.conn.dispose();
    if (gen.exit) {
      // Between a crash and its restart: no child to end.
      if (!this.#finalExit) this.#finish(gen);
      this.#disposing = Promise.resolve();
      return this.#disposing;
    }
    gen.child.stdin.end();
    const term = setTimeout(() => gen.child.kill('SIGTERM'), this.#disposeGrace);
    const kill = setTimeout(() => gen.child.kill('SIGKILL'), 2 * this.#disposeGrace);
    this.#disposing = this.exited.then(() => {
      clearTimeout(term);
      clearTimeout(kill);
    });
    return this.#disposing;
  }

  /** Waits for gen's first answer (status) and checks its version. */
  async #handshake(gen) {
    const timeout = this.#startTimeout;
    let timer;
    try {
      const status = await Promise.race([
        this.#call(gen, 'status', {}),
        new Promise((_, reject) => {
          timer = setTimeout(
            () =>
              reject(
                new SessionLocksError(
                  ErrorCodes.ChildExited,
                  `sessionlocks (${this.#binary}) did not answer within ${timeout} ms.${this.#stderrHint()}`,
                  undefined,
                  'status',
                ),
              ),
            timeout,
          );
        }),
      ]);
      this.#version = status?.version;
      this.#checkVersion(status?.version);
    } finally {
      clearTimeout(timer);
    }
  }

  #checkVersion(binaryVersion) {
    // 0.0.0 is the repository's own package.json, before `make npm` stamps
    // the release into package and binary alike: nothing to compare.
    if (this.#versionCheck === 'off' || PACKAGE_VERSION === UNSTAMPED) return;
    if (typeof binaryVersion === 'string' && npmVersion(binaryVersion) === PACKAGE_VERSION) return;
    const shown = typeof binaryVersion === 'string' && npmVersion(binaryVersion) !== binaryVersion ? ` (${npmVersion(binaryVersion)} as an npm version)` : '';
    const mismatch =
      `The sessionlocks binary ${this.#binary} is version ${binaryVersion}${shown}, but ${MAIN_PACKAGE} is ` +
      `${PACKAGE_VERSION}: the binary must come from the same release as the package, or the two may not speak the same protocol.`;
    const data = { binary: this.#binary, binaryVersion, packageVersion: PACKAGE_VERSION };
    if (this.#versionCheck === 'warn') {
      const key = `${this.#binary}\0${binaryVersion}`;
      if (warned.has(key)) return;
      warned.add(key);
      process.emitWarning(
        `${mismatch} It was given explicitly (SESSIONLOCKS_BINARY or spawn's binary option), so it is used anyway.`,
        { type: 'SessionLocksWarning', code: 'SESSIONLOCKS_VERSION_MISMATCH', detail: JSON.stringify(data) },
      );
      return;
    }
    throw new SessionLocksError(
      ErrorCodes.VersionMismatch,
      `${mismatch} Reinstall so that they match: ${platformPackageName()} must be at ${PACKAGE_VERSION}, as ` +
        `${MAIN_PACKAGE} pins it (npm ci; node_modules or a bundle left from another version is the usual cause). ` +
        `To run another binary on purpose, pass it to SessionLocks.spawn({ binary }) or set SESSIONLOCKS_BINARY ` +
        `(a mismatch is then a warning), or pass versionCheck: 'off'.`,
      data,
      'status',
    );
  }

  #childExited(gen, info) {
    if (gen.exit) return;
    const exit = { code: info.code, signal: info.signal, expected: this.#disposed, stderr: this.#stderrTail };
    if (info.error) exit.error = info.error;
    gen.exit = exit;
    gen.conn.dispose();
    const delay = gen === this.#gen ? this.#restartDelay(gen) : undefined;
    for (const call of [...gen.pending]) {
      if (delay !== undefined && READS.has(call.method) && !call.retried) {
        // A read has no effect to repeat: it goes to the next child, once.
        call.retried = true;
        call.gen = undefined;
        gen.pending.delete(call);
        this.#waiting.add(call);
      } else {
        this.#rejectGone(call, gen);
      }
    }
    if (gen !== this.#gen) return;
    if (delay === undefined) return this.#finish(gen);
    this.#restartTimer = setTimeout(() => this.#respawn(), delay);
    this.#setState({ state: 'exited', pid: gen.child.pid, exit, willRestart: true, restartInMs: delay, error: gen.startError });
  }

  /** The wait before restarting after gen's exit, counted as a failure; undefined when no restart follows. */
  #restartDelay(gen) {
    const policy = this.#policy;
    if (this.#disposed || !this.#armed || !policy) return undefined;
    // A child that ran long enough was no crash loop: start counting afresh.
    if (gen.runningSince && Date.now() - gen.runningSince >= policy.resetAfterMs) this.#failures = 0;
    if (this.#failures >= policy.maxRestarts) return undefined;
    this.#failures++;
    return Math.min(policy.backoffMs * 2 ** (this.#failures - 1), policy.maxBackoffMs);
  }

  /**
   * Rejects a call whose child is gone (Disposed, or ChildExited). For
   * forceResume and reclaimStale, data.mayHaveActed says whether the request
   * had been written to the child's stdin: if not, it surely did nothing.
   */
  #rejectGone(call, gen) {
    const error = (mayHaveActed) =>
      this.#disposed ? this.#disposedError(call.method, mayHaveActed) : this.#exitedError(call.method, gen, mayHaveActed);
    if (!ACTING.has(call.method)) return call.reject(error());
    const written = call.gen === gen && call.written ? call.written : Promise.resolve(false);
    // A write still under way when the child went ends soon, in EPIPE (it
    // never reached the child) or done; if it lingers, assume the worst.
    const lingering = new Promise((resolve) => setTimeout(resolve, TRANSPORT_GRACE, true).unref());
    Promise.race([written, lingering]).then((mayHaveActed) => call.reject(error(mayHaveActed)));
  }

  async #respawn() {
    this.#restartTimer = null;
    if (this.#disposed) return;
    this.#restarts++;
    const child = this.#launch();
    const gen = this.#attach(child);
    this.#setState({ state: 'starting', pid: child.pid });
    try {
      await this.#handshake(gen);
      await this.#relist(gen);
    } catch (err) {
      // Its exit has been handled (the next try is scheduled, or the end), or
      // dispose is ending it gracefully.
      if (gen.exit || this.#disposed) return;
      gen.startError = err;
      gen.child.kill('SIGKILL'); // its exit schedules the next try
      return;
    }
    if (gen.exit || gen !== this.#gen || this.#disposed) return;
    gen.runningSince = Date.now();
    this.#setState({ state: 'running', pid: child.pid });
    const waiting = [...this.#waiting];
    this.#waiting.clear();
    for (const call of waiting) this.#send(gen, call);
  }

  /**
   * Lists every session from the new child and tells the listeners what
   * differs from what they were told before the crash, as one sessionsChanged.
   * Notifications the new child sent before this answer were delivered and
   * applied to the view already; the answer is newer than all of them.
   */
  async #relist(gen) {
    const answer = await this.#call(gen, 'listSessions', {});
    if (gen.exit || this.#disposed) return;
    const change = viewDiff(this.#view, this.#viewScope, answer.sessions);
    this.#setView(answer.sessions, 'all');
    if (change.changed.length || change.removed.length) this.#changed.fire(deepFreeze(change));
  }

  #deliver(change) {
    deepFreeze(change);
    if (this.#view) {
      for (const s of change.changed) this.#view.set(s.id, s);
      for (const id of change.removed) this.#view.delete(id);
    }
    this.#changed.fire(change);
  }

  /** Keeps what a listSessions answer told the caller, when a restart policy needs it. */
  #noted(params, answer) {
    if (!this.#view || !Array.isArray(answer?.sessions)) return answer;
    if (params.ids || params.limit !== undefined || params.offset) {
      for (const s of answer.sessions) this.#view.set(s.id, s);
    } else {
      this.#setView(answer.sessions, params.includeFree === false ? 'nonFree' : 'all');
    }
    return answer;
  }

  #setView(sessions, scope) {
    this.#view = new Map(sessions.map((s) => [s.id, s]));
    this.#viewScope = scope;
  }

  #setState(change) {
    this.#state = change.state;
    this.#stateEmitter.fire({ restarts: this.#restarts, ...change });
  }

  /** The client is done: no child, and none to come. */
  #finish(gen) {
    const exit = { ...gen.exit, expected: this.#disposed };
    this.#finalExit = exit;
    for (const call of [...this.#waiting]) this.#rejectGone(call, gen);
    this.#setState({ state: 'exited', pid: gen.child.pid, exit, willRestart: false, error: gen.startError });
    this.#resolveExited(exit);
    this.#exitEmitter.fire(exit);
    this.#exitEmitter.dispose();
  }

  #disposedError(method, mayHaveActed) {
    const data = mayHaveActed === undefined ? undefined : { mayHaveActed };
    return new SessionLocksError(ErrorCodes.Disposed, `${method}: the sessionlocks client was disposed${acted(mayHaveActed)}`, data, method);
  }

  #exitedError(method, gen, mayHaveActed) {
    const info = gen.exit;
    // A child that never started has no pid; the binary it was to run says more.
    const which = info.error && this.#binary ? this.#binary : `pid ${gen.child.pid ?? 'none'}`;
    let message = `${method}: sessionlocks (${which}) ${describeExit(info)}.`;
    if (this.#finalExit && this.#policy && this.#armed) {
      message += ` The restart policy gave up after ${this.#failures} restarts in a row.`;
      if (gen.startError) message += ` The last one failed: ${gen.startError.message}`;
    }
    const data = { code: info.code, signal: info.signal };
    if (mayHaveActed !== undefined) {
      data.mayHaveActed = mayHaveActed;
      message += acted(mayHaveActed);
    }
    return new SessionLocksError(
      ErrorCodes.ChildExited,
      message + this.#stderrHint(),
      data,
      method,
      info.error ? { cause: info.error } : gen.startError ? { cause: gen.startError } : undefined,
    );
  }

  #stderrHint() {
    // Enough of the log to hold a flag error and the usage after it.
    const tail = this.#stderrTail.trim().slice(-ERROR_LOG_TAIL);
    return tail ? ` Its stderr ended with:\n${tail}` : '';
  }
}

/**
 * viewDiff says what differs between a view (id -> session) and a whole
 * listing: sessions that are new or changed, in full, and ids that are gone.
 * A view kept from includeFree: false answers did not hold free sessions, so
 * a free session it never had is no change.
 */
function viewDiff(view, scope, sessions) {
  const changed = [];
  const seen = new Set();
  for (const s of sessions) {
    seen.add(s.id);
    const before = view.get(s.id);
    if (before ? !sameSession(before, s) : !(scope === 'nonFree' && s.state === 'free')) changed.push(s);
  }
  const removed = [];
  for (const id of view.keys()) if (!seen.has(id)) removed.push(id);
  return { changed, removed };
}

// When a verdict was probed, and whether from the cache, differ from one
// listing to the next without anything having changed.
const probeBookkeeping = (key, value) => (key === 'probedAt' || key === 'cached' ? undefined : value);

function sameSession(a, b) {
  return JSON.stringify(a, probeBookkeeping) === JSON.stringify(b, probeBookkeeping);
}

/** A stand-in for a child that spawn() refused to start: it fails as ENOENT does, asynchronously. */
function failedChild(error) {
  const { EventEmitter } = require('events');
  const { PassThrough } = require('stream');
  const child = new EventEmitter();
  child.pid = undefined;
  child.stdin = new PassThrough();
  child.stdout = new PassThrough();
  child.stderr = new PassThrough();
  child.kill = () => false;
  setImmediate(() => {
    child.emit('error', error);
    child.emit('close', null, null);
  });
  return child;
}

if (typeof Symbol.asyncDispose === 'symbol') {
  SessionLocks.prototype[Symbol.asyncDispose] = function asyncDispose() {
    return this.dispose();
  };
}

/** deepFreeze freezes v and every object and array inside it (parsed JSON: no cycles, no prototypes to skip). */
function deepFreeze(v) {
  if (v === null || typeof v !== 'object' || Object.isFrozen(v)) return v;
  for (const k in v) {
    const e = v[k];
    if (e !== null && typeof e === 'object') deepFreeze(e);
  }
  return Object.freeze(v);
}

/**
 * forceResume's params as sent: an expect that is a canResume answer becomes
 * its token, and its sessionId the session's (which sessionId, if given,
 * must be). An expect left undefined is not sent. An empty or missing token
 * is refused here, never sent: without it the server would take over every
 * holder it finds, which is more than the user decided on.
 */
function forceResumeParams(params) {
  const expect = params?.expect;
  if (expect === undefined) {
    if (params === undefined || !('expect' in params)) return params;
    const { expect: _, ...rest } = params;
    return rest;
  }
  if (expect === '') {
    throw new TypeError(
      'forceResume: expect is an empty string; pass the canResume answer the user decided on, or its token (every answer has one)',
    );
  }
  if (typeof expect === 'string') return params;
  if (expect === null || typeof expect !== 'object') {
    throw new TypeError(`forceResume: expect must be a canResume answer or its token, got ${expect === null ? 'null' : typeof expect}`);
  }
  if (typeof expect.token !== 'string' || expect.token === '') {
    throw new TypeError(
      'forceResume: the canResume answer given as expect has no token, so what the user was shown cannot be checked; ' +
        'nothing was sent (the binary that gave it predates tokens: use one from the same release as this package)',
    );
  }
  if (params.sessionId !== undefined && params.sessionId !== expect.sessionId) {
    throw new TypeError(
      `forceResume: sessionId ${JSON.stringify(params.sessionId)} is not the session of the canResume answer given as expect (${JSON.stringify(expect.sessionId)})`,
    );
  }
  return { ...params, sessionId: expect.sessionId, expect: expect.token };
}

module.exports = { SessionLocks, SessionLocksError, SessionChangedError, ErrorCodes };
