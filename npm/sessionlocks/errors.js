'use strict';
// The errors a call of the typed client rejects with: the server's JSON-RPC
// errors as SessionLocksError (SessionChangedError for a forceResume whose
// expect no longer held), and the codes the client raises itself.

/**
 * JSON-RPC error codes: the server's, as the OpenRPC document lists them
 * (schema/openrpc.json; a test keeps the two in step), then the ones this
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
  /** forceResume's expect named other holders than the session has now; data is the fresh canResume answer. */
  SessionChanged: -32005,
  /**
   * The call was cancelled: through its AbortSignal, or by $/cancelRequest. For forceResume and reclaimStale,
   * the server's word that it did nothing (an aborted call of theirs that had acted resolves instead).
   */
  RequestCancelled: -32800,
  /** The client was disposed while the call was pending. */
  Disposed: -32097,
  /** The sessionlocks process exited (or never started) while the call was pending. */
  ChildExited: -32096,
  /** The binary's version is not the package's (spawn's version check). */
  VersionMismatch: -32095,
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

/**
 * SessionChangedError is the SessionLocksError of a forceResume whose expect
 * no longer held (ErrorCodes.SessionChanged): a CLI opened the session after
 * the canResume answer the user decided on, and nothing was done. data is the
 * fresh canResume answer, to ask the user again with (and pass as expect).
 */
class SessionChangedError extends SessionLocksError {}

/** What a rejected forceResume or reclaimStale says about its effect. */
function acted(mayHaveActed) {
  if (mayHaveActed === undefined) return '';
  return mayHaveActed
    ? ' The request had reached it, so it may have acted: canResume says how the session is now.'
    : ' The request never reached it: nothing was done.';
}

function cancelled(method, signal) {
  return new SessionLocksError(ErrorCodes.RequestCancelled, `${method}: cancelled`, undefined, method, { cause: signal.reason });
}

/** The SessionLocksError for an error answer of the server's; acting: the method changes the state dir. */
function answerError(err, method, signal, acting) {
  if (err.code === ErrorCodes.SessionChanged) {
    return new SessionChangedError(err.code, err.message, err.data, method);
  }
  if (err.code === ErrorCodes.RequestCancelled && signal?.aborted) {
    // The server's word that the aborted request did nothing.
    const what = acting ? `${method}: cancelled before it did anything` : `${method}: cancelled`;
    return new SessionLocksError(err.code, what, err.data, method, { cause: signal.reason });
  }
  return new SessionLocksError(err.code, err.message, err.data, method);
}

module.exports = { ErrorCodes, SessionLocksError, SessionChangedError, acted, cancelled, answerError };
