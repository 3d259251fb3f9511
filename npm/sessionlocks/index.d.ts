// @copilot-ide/sessionlocks: spawn the sessionlocks sidecar and talk to it.
// The wire types (protocol.d.ts) are generated from the Go types through
// schema/sessionlocks.schema.json; this file is the client's API around them.

import type { ChildProcess } from 'child_process';
import type { CanResumeResult, Methods, Notifications, Session } from './protocol';

export * from './protocol';

/** Params and result of a method, by name. */
export type Params<M extends keyof Methods> = Methods[M]['params'];
export type Result<M extends keyof Methods> = Methods[M]['result'];

/**
 * What the client hands out: every answer, notification and error data is deeply frozen (writing to it throws a
 * TypeError), because the client keeps listings and notifications as its view for restarts. Copy to change:
 * `[...sessions].sort(...)`, `{ ...session, pinned: true }`.
 */
export type Frozen<T> = T extends (infer U)[]
  ? ReadonlyArray<Frozen<U>>
  : T extends object
    ? { readonly [K in keyof T]: Frozen<T[K]> }
    : T;

export interface Disposable {
  dispose(): void;
}

export interface SpawnOptions {
  /** The Copilot CLI's session-state directory; the server's default is $COPILOT_HOME/session-state or ~/.copilot/session-state. */
  stateDir?: string;
  /** More arguments for `sessionlocks serve`, e.g. ['--log-level', 'debug']. */
  args?: string[];
  /** Environment variables merged over process.env for the child; undefined removes one. */
  env?: Record<string, string | undefined>;
  /** Working directory of the child. */
  cwd?: string;
  /** The binary to run instead of binaryPath()'s. */
  binary?: string;
  /** How long to wait for the first answer before giving up (default 10000). */
  startTimeoutMs?: number;
  /** How long dispose() waits after closing stdin before SIGTERM, and again before SIGKILL (default 1000). */
  disposeGraceMs?: number;
  /** Receives the child's log output (stderr) as it arrives. */
  onStderr?: (chunk: string) => void;
  /**
   * Spawn the child again when it dies (true: the defaults of RestartPolicy).
   * Off by default: then a crash ends the client, as exited reports.
   */
  restart?: boolean | RestartPolicy;
  /**
   * What to do when the binary's version is not the package's: 'error' (spawn
   * rejects with ErrorCodes.VersionMismatch), 'warn' (a process warning, once
   * per binary and version) or 'off'. Default: 'error' for the platform
   * package's binary, 'warn' for one given explicitly (binary or
   * SESSIONLOCKS_BINARY). A package at version 0.0.0 (the repository's
   * unstamped source) checks nothing.
   */
  versionCheck?: 'error' | 'warn' | 'off';
}

/**
 * When and how often a dead child is spawned again. After the nth restart in
 * a row the wait is min(backoffMs * 2^(n-1), maxBackoffMs); the defaults give
 * 0.1, 0.2, 0.4 ... 10 s, about 45 s in all before giving up.
 */
export interface RestartPolicy {
  /** Restarts in a row before giving up (default 10). */
  maxRestarts?: number;
  /** The wait before the first restart, doubled for each further one (default 100). */
  backoffMs?: number;
  /** The longest wait (default 10000). */
  maxBackoffMs?: number;
  /** A child that ran this long before dying starts the count afresh (default 60000). */
  resetAfterMs?: number;
}

/** The client's state: see SessionLocks.onStateChange. */
export type ClientState = 'starting' | 'running' | 'exited';

/** What onStateChange reports. */
export interface StateChange {
  state: ClientState;
  /** The child this is about (undefined for one that could not be started). */
  pid: number | undefined;
  /** How many times the restart policy has spawned the child again so far. */
  restarts: number;
  /** For 'exited': how the child ended. */
  exit?: ExitInfo;
  /** For 'exited': true when a restart follows, false when the client is done. */
  willRestart?: boolean;
  /** For 'exited' with willRestart: the wait before the restart. */
  restartInMs?: number;
  /** For 'exited': why a restarted child was ended before it ran (no answer in time, a version mismatch). */
  error?: Error;
}

export interface CallOptions {
  /**
   * Aborting sends $/cancelRequest. A call that only reads (listSessions, canResume, status, discover) rejects at
   * once with ErrorCodes.RequestCancelled. (With a restart policy, a read pending when the child dies is sent once
   * more to the restarted child; forceResume and reclaimStale never are, see ChildExitedData.) forceResume and reclaimStale, which act, wait for the server's word
   * instead (see ActOptions); so does request() for them. A call not yet sent (one waiting for a restart, or a
   * signal aborted already) rejects at once either way.
   */
  signal?: AbortSignal;
}

/** The options of forceResume and reclaimStale, the methods that change the state dir. */
export interface ActOptions extends CallOptions {
  /**
   * Aborting sends $/cancelRequest and keeps waiting for the server, whose answer settles the call: the server
   * either stops before it has signalled or removed anything and the call rejects with ErrorCodes.RequestCancelled
   * (nothing was done), or it had begun and finishes, and the call **resolves** with what it did. The promise may
   * therefore resolve after the abort: look at the result, it is no less true for being late (forceResume's lists
   * say which processes were signalled, which exited and which are still running, and which files were removed;
   * reclaimStale's has `cancelled: true` and lists what it removed before it stopped). forceResume waits up to
   * graceMs for signalled processes, so an aborted call may take that long to settle. If the child exits or the
   * client is disposed meanwhile, the call rejects with ErrorCodes.ChildExited or Disposed: what was done is then
   * unknown, and canResume says how the session is.
   */
  signal?: AbortSignal;
}

/**
 * forceResume's params as the typed client takes them: the protocol's (Params<'forceResume'>), except that
 * expect may be the canResume answer the user decided on, as well as its token. The client sends the answer's
 * token, and its sessionId (sessionId may then be left out; if given, it must be the answer's). An empty token, or
 * an answer without one, is refused with a TypeError and nothing is sent; expect: undefined sends no expect.
 */
export type ForceResumeRequest =
  | (Omit<Params<'forceResume'>, 'expect'> & { expect?: string | Frozen<CanResumeResult> })
  | (Omit<Params<'forceResume'>, 'sessionId' | 'expect'> & { sessionId?: string; expect: Frozen<CanResumeResult> });

/**
 * The data of a ChildExited (or Disposed) rejection. For forceResume and reclaimStale, which are never sent again
 * after a crash, mayHaveActed says whether the request had been written to the child's stdin: false means it
 * surely did nothing; true means it may have signalled or removed something (ask canResume how the session is).
 */
export interface ChildExitedData {
  /** The child's exit code (absent for Disposed). */
  code?: number | null;
  /** The signal that ended it (absent for Disposed). */
  signal?: NodeJS.Signals | null;
  /** For forceResume and reclaimStale only. */
  mayHaveActed?: boolean;
}

/** How the child process ended. */
export interface ExitInfo {
  /** The exit code, or null when a signal ended it or it never started. */
  code: number | null;
  /** The signal that ended it, e.g. "SIGKILL", or null. */
  signal: NodeJS.Signals | null;
  /** True when dispose() asked it to end; false when it died on its own. */
  expected: boolean;
  /** The last 8 KiB it wrote to stderr. */
  stderr: string;
  /** Set when the process could not be started at all (e.g. ENOENT). */
  error?: Error;
}

/** JSON-RPC error codes: the server's (as schema/openrpc.json lists them), then the ones this client raises itself. */
export declare const ErrorCodes: {
  readonly ParseError: -32700;
  readonly InvalidRequest: -32600;
  readonly MethodNotFound: -32601;
  readonly InvalidParams: -32602;
  readonly InternalError: -32603;
  readonly SessionNotFound: -32001;
  readonly StateDirUnreadable: -32002;
  readonly FileOperationFailed: -32003;
  /** Another process held the session's operation lock for too long; try again. */
  readonly SessionBusy: -32004;
  /**
   * forceResume with expect found a live or unknown holder the expected canResume answer did not name (a CLI opened
   * the session since): nothing was done. The rejection is a SessionChangedError; data is the fresh canResume answer.
   */
  readonly SessionChanged: -32005;
  /**
   * The call was cancelled: through its AbortSignal, or by $/cancelRequest. For forceResume and reclaimStale it
   * means the server did nothing (see ActOptions).
   */
  readonly RequestCancelled: -32800;
  /** The client was disposed while the call was pending; data is ChildExitedData for forceResume and reclaimStale. */
  readonly Disposed: -32097;
  /**
   * The sessionlocks process exited (or never started) while the call was pending, and the call was not sent again
   * (only reads are, once, with a restart policy); data is ChildExitedData.
   */
  readonly ChildExited: -32096;
  /** spawn: the binary's version is not the package's; data is {binary, binaryVersion, packageVersion}. */
  readonly VersionMismatch: -32095;
};
export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

/** A failed call: the JSON-RPC error's code, message and data, and the method that was called. */
export declare class SessionLocksError extends Error {
  readonly name: 'SessionLocksError';
  readonly code: ErrorCode | number;
  /**
   * For FileOperationFailed: {path, op, error}; for ChildExited and Disposed: ChildExitedData; for VersionMismatch:
   * {binary, binaryVersion, packageVersion}; for SessionChanged: the fresh canResume answer (see SessionChangedError).
   */
  readonly data: unknown;
  readonly method: string;
}

/**
 * The rejection of a forceResume whose expect no longer held (ErrorCodes.SessionChanged): the session has a live or
 * unknown holder the canResume answer the user decided on did not show, and nothing was done. data is the fresh
 * canResume answer: show its message and ask again, passing it as expect.
 */
export declare class SessionChangedError extends SessionLocksError {
  readonly code: typeof ErrorCodes.SessionChanged;
  readonly data: Frozen<CanResumeResult>;
  readonly method: 'forceResume';
}

/** Thrown by binaryPath() when no binary fits; the message says what to do. */
export declare class BinaryNotFoundError extends Error {
  readonly name: 'BinaryNotFoundError';
  readonly code: 'SESSIONLOCKS_BINARY_NOT_FOUND';
  readonly platform: string;
  readonly arch: string;
  /** The per-platform package that should hold the binary. */
  readonly packageName?: string;
  readonly path?: string;
  /** For reason 'asar': the unpacked copy that was looked for. */
  readonly unpackedPath?: string;
  /**
   * Why no binary could be run: bundled without node_modules beside the bundle, omitted by the package manager
   * (optional dependencies left out, or this platform filtered out), never installed (the main tarball alone),
   * installed for another platform, not known (no lockfile to tell); or found inside an app.asar with no unpacked
   * copy ('asar'), or inside a yarn Plug'n'Play zip ('zipped': unplug it).
   */
  readonly reason?: 'bundled' | 'omitted' | 'not-installed' | 'other-platform' | 'missing' | 'asar' | 'zipped';
  /** The package manager whose commands the advice gives: from the project's lockfile, else npm_config_user_agent. */
  readonly manager?: 'npm' | 'pnpm' | 'yarn' | 'bun';
  /** For reason 'bundled': 'webpack', or 'a bundler'. */
  readonly bundler?: string;
  /** Platform packages installed instead of this platform's. */
  readonly installed?: string[];
}

/**
 * The sessionlocks sidecar, spawned as a child process. Every method rejects
 * with SessionLocksError.
 */
export declare class SessionLocks implements Disposable {
  /**
   * Spawns `sessionlocks serve` and resolves once it has answered a first
   * call and its version passed the check (see SpawnOptions.versionCheck).
   */
  static spawn(options?: SpawnOptions): Promise<SessionLocks>;
  /** Takes an already spawned child; such a client cannot restart it. */
  constructor(child: ChildProcess, options?: SpawnOptions);

  /** The current child's process id: a new one after each restart. */
  readonly pid: number | undefined;
  /** The last 8 KiB the children wrote to stderr. */
  readonly stderr: string;
  /** The current state (see onStateChange). */
  readonly state: ClientState;
  /** How many times the restart policy has spawned the child again. */
  readonly restarts: number;
  /**
   * The binary's version as it reported it at the last start, in the form npm versions take (the package's own
   * version, which the handshake checks): e.g. "1.2.0" for a release, "0.0.0-dev.5df2a78" for a build of a commit.
   */
  readonly version: string | undefined;
  /**
   * Resolves when the client is done: its child ended and no restart follows
   * (dispose, no restart policy, or the policy gave up). See ExitInfo.expected.
   */
  readonly exited: Promise<ExitInfo>;

  /** Lists sessions, newest updatedAt first; the answer is frozen (see Frozen). */
  listSessions(params?: Params<'listSessions'>, options?: CallOptions): Promise<Frozen<Result<'listSessions'>>>;
  /**
   * Says whether a session may be resumed now, with a sentence for the user (message). Its token names the live and
   * unknown holders it judged: pass the answer to forceResume as expect once the user has decided on it.
   */
  canResume(params: Params<'canResume'>, options?: CallOptions): Promise<Frozen<Result<'canResume'>>>;
  /**
   * Removes the files of stale holders; unknown and live holders are kept. sessionIds absent: every session; an
   * empty list: none. Aborted, it may still resolve, with `cancelled: true` and what it removed (see ActOptions).
   */
  reclaimStale(params?: Params<'reclaimStale'>, options?: ActOptions): Promise<Frozen<Result<'reclaimStale'>>>;
  /**
   * Removes every holder of one session, after the user chose to take it over.
   *
   * - `expect`: the canResume answer the user decided on (or its token). The server then acts only if every live or
   *   unknown holder the session has is one that answer named; otherwise nothing is done and the call rejects with
   *   a SessionChangedError (ErrorCodes.SessionChanged) whose data is the fresh canResume answer, to ask again with.
   *   Without expect every holder is removed, as the session is found.
   * - `terminate`: first SIGTERM each live holder's proven owner and wait up to `graceMs` (default 3000, at most
   *   600000) for it to exit. An owner still running then keeps its lock files and is listed in `stillRunning`,
   *   unless `kill` asked for SIGKILL after the grace (listed in `killed`), after which its files are removed.
   * - The result: `removed` and `kept` holders; `signalled` (sent SIGTERM), `exited`, `stillRunning`, `killed`;
   *   `notSignalled` (live and unknown holders not signalled, with why); `session` as it is afterwards. A live
   *   holder in `kept` (and `notSignalled`) could not be stopped: tell the user to close it where it runs.
   *
   * Aborted once it has begun to signal or remove, it finishes and resolves with what it did (see ActOptions).
   * Never sent twice: if the child dies meanwhile it rejects with ChildExited (see ChildExitedData).
   */
  forceResume(params: ForceResumeRequest, options?: ActOptions): Promise<Frozen<Result<'forceResume'>>>;
  /** The server's version, state dir, watcher and cache counters. */
  status(options?: CallOptions): Promise<Frozen<Result<'status'>>>;
  /** The server's OpenRPC document. */
  discover(options?: CallOptions): Promise<Frozen<Result<'rpc.discover'>>>;
  /** Any method by name: typed for the protocol's methods, unknown for others (a newer server's). */
  request<M extends keyof Methods>(method: M, params: Params<M>, options?: CallOptions): Promise<Frozen<Result<M>>>;
  request<M extends string>(
    method: M & (M extends keyof Methods ? never : unknown),
    params?: object,
    options?: CallOptions,
  ): Promise<unknown>;

  /**
   * Calls listener with every sessionsChanged notification. After a restart
   * the client adds one of its own: what differs between the view the
   * listeners were given (listSessions() answers plus these notifications)
   * and what the new child lists, so a view kept from them stays right.
   */
  onSessionsChanged(listener: (change: Frozen<Notifications['sessionsChanged']>) => void): Disposable;
  /**
   * Calls listener on every change of state: 'exited' when a child ends (with
   * willRestart), 'starting' when a restart spawns a new child, 'running'
   * once it has answered and the difference has been delivered. Calls made
   * while not 'running' wait for the new child; reads pending when a child
   * died are sent to it once more, forceResume and reclaimStale reject with
   * ErrorCodes.ChildExited (data.mayHaveActed).
   */
  onStateChange(listener: (change: StateChange) => void): Disposable;
  /** Calls listener once when the client is done (see exited). */
  onExit(listener: (info: ExitInfo) => void): Disposable;

  /**
   * Ends the child (stdin EOF, then SIGTERM, then SIGKILL) and any restart;
   * pending and waiting calls reject with ErrorCodes.Disposed.
   */
  dispose(): Promise<void>;
  /**
   * dispose(), for `await using` in a scope that lasts as long as the client is needed. Not at a module's top
   * level: an ES module's scope ends when its body has run, which would dispose the client at once.
   */
  [Symbol.asyncDispose](): Promise<void>;
}

export interface BinaryPathOptions {
  env?: Record<string, string | undefined>;
  platform?: NodeJS.Platform;
  arch?: string;
  /** process.versions.electron, or undefined outside Electron. */
  electron?: string;
  resolve?: (request: string) => string;
}

/**
 * The absolute path of the binary: SESSIONLOCKS_BINARY if set, else the one in
 * the installed per-platform package; inside Electron, a path through app.asar
 * becomes the app.asar.unpacked one. Throws BinaryNotFoundError.
 */
export declare function binaryPath(options?: BinaryPathOptions): string;

/** The per-platform package's name, e.g. "@copilot-ide/sessionlocks-linux-x64". */
export declare function platformPackageName(platform?: string, arch?: string): string;

/** The platform table: Node's platform/arch and Go's GOOS/GOARCH for each package. */
export declare const platforms: ReadonlyArray<{ platform: string; arch: string; goos: string; goarch: string }>;
