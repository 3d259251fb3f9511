package procfiles

// Decoding the Restart Manager's records (<restartmanager.h>), built on
// every system so that it is tested on recorded bytes everywhere.

import (
	"encoding/binary"
	"fmt"
	"time"
)

const (
	// sizeof(RM_PROCESS_INFO): RM_UNIQUE_PROCESS { DWORD dwProcessId;
	// FILETIME ProcessStartTime; } (12 bytes), WCHAR strAppName[256],
	// WCHAR strServiceShortName[64], then ApplicationType, AppStatus,
	// TSSessionId and bRestartable (4 bytes each).
	rmProcessInfoSize = 668
	cchRMSessionKey   = 32 // CCH_RM_SESSION_KEY: a GUID as 32 hex digits
	errorMoreData     = 234
)

// decodeProcessInfo decodes n RM_PROCESS_INFO records from b.
func decodeProcessInfo(b []byte, n int) ([]Process, error) {
	if n < 0 || n*rmProcessInfoSize > len(b) {
		return nil, fmt.Errorf("RmGetList reported %d processes in a %d-byte buffer", n, len(b))
	}
	out := make([]Process, 0, n)
	for i := range n {
		r := b[i*rmProcessInfoSize:]
		low, high := binary.LittleEndian.Uint32(r[4:]), binary.LittleEndian.Uint32(r[8:])
		out = append(out, Process{PID: int(binary.LittleEndian.Uint32(r)), Start: filetime(uint64(high)<<32 | uint64(low))})
	}
	return out, nil
}

// filetime converts a FILETIME (100 ns since 1601) as Filetime.Nanoseconds
// does, as the engine's start times are; zero stays zero.
func filetime(ft uint64) time.Time {
	if ft == 0 {
		return time.Time{}
	}
	const unixEpoch = 116444736000000000 // 1970-01-01 in FILETIME units
	return time.Unix(0, (int64(ft)-unixEpoch)*100)
}
