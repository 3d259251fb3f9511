package rpc

// Engine errors to JSON-RPC errors.

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"time"

	"github.com/copilot-ide/sessionlocks/sessionlocks"
)

// toWireError maps an engine error onto a JSON-RPC error, or returns nil
// when it is none the protocol names (the caller answers -32603).
func toWireError(err error) *Error {
	var (
		je  *Error
		nfe *sessionlocks.NotFoundError
		sde *sessionlocks.StateDirError
		fe  *sessionlocks.FileError
		ce  *sessionlocks.ChangedError
	)
	switch {
	case errors.As(err, &je):
		return je
	case errors.Is(err, sessionlocks.ErrInvalidID): // an *IDError says why
		return paramsError("", "%s", err.Error())
	case errors.As(err, &nfe):
		return newError(CodeSessionNotFound, err.Error(), &ErrorData{SessionID: nfe.ID, StateDir: nfe.Dir})
	case errors.As(err, &sde):
		cause := osError(sde.Err)
		return newError(CodeStateDir, fmt.Sprintf("state directory %s unreadable: %s", sde.Path, cause), &ErrorData{Path: sde.Path, Error: cause})
	case errors.As(err, &fe):
		cause := osError(fe.Err)
		return newError(CodeFileOp, fmt.Sprintf("%s %s: %s", fe.Op, fe.Path, cause), &ErrorData{Path: fe.Path, Op: fe.Op, Error: cause})
	case errors.Is(err, sessionlocks.ErrBusy):
		return newError(CodeSessionBusy, err.Error(), nil)
	case errors.As(err, &ce):
		e := &Error{Code: CodeSessionChanged, Message: "session changed: " + ce.Session.Message(time.Now()) + " Nothing was done; ask again with the answer in data."}
		e.SetError(wireCanResume(ce.Session, time.Now()))
		return e
	}
	return nil
}

// osError is the operating system's own message ("permission denied"),
// without the op and path an *fs.PathError repeats: the error data carries
// those separately.
func osError(err error) string {
	if err == nil {
		return "unknown error"
	}
	var pe *fs.PathError
	if errors.As(err, &pe) && pe.Err != nil {
		return pe.Err.Error()
	}
	var se *os.SyscallError
	if errors.As(err, &se) && se.Err != nil {
		return se.Err.Error()
	}
	return err.Error()
}
