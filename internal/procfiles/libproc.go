package procfiles

// Decoding libproc's records (<sys/proc_info.h>, xnu-11417.101.15), built
// on every system so that it is tested on recorded bytes everywhere. One
// layout serves darwin/arm64 and amd64 (little-endian, fixed-width fields).

import (
	"bytes"
	"encoding/binary"
	"fmt"
)

const (
	procAllPIDs             = 1 // PROC_ALL_PIDS: proc_listpids' type
	procPIDListFDs          = 1 // PROC_PIDLISTFDS: proc_pidinfo's flavor
	procPIDFDVnodePathInfo  = 2 // PROC_PIDFDVNODEPATHINFO: proc_pidfdinfo's flavor
	proxFDTypeVnode         = 1 // PROX_FDTYPE_VNODE
	fdInfoSize              = 8 // sizeof(struct proc_fdinfo)
	vnodeFDInfoWithPathSize = 1200
	maxPathLen              = 1024 // MAXPATHLEN
)

// fdEntry is struct proc_fdinfo: a descriptor and its type.
type fdEntry struct {
	fd  int32
	typ uint32
}

// decodeFDList decodes PROC_PIDLISTFDS: an array of struct proc_fdinfo
// { int32_t proc_fd; uint32_t proc_fdtype; }.
func decodeFDList(b []byte) ([]fdEntry, error) {
	if len(b)%fdInfoSize != 0 {
		return nil, fmt.Errorf("proc_pidinfo(PROC_PIDLISTFDS) returned %d bytes, not a whole number of %d-byte records", len(b), fdInfoSize)
	}
	out := make([]fdEntry, 0, len(b)/fdInfoSize)
	for ; len(b) > 0; b = b[fdInfoSize:] {
		out = append(out, fdEntry{fd: int32(binary.LittleEndian.Uint32(b)), typ: binary.LittleEndian.Uint32(b[4:])})
	}
	return out, nil
}

// The offsets in struct vnode_fdinfowithpath { struct proc_fileinfo pfi
// (24 bytes); struct vnode_info_path pvip; } of what is read: pvip starts
// with struct vinfo_stat { uint32_t vst_dev; uint16_t vst_mode; uint16_t
// vst_nlink; uint64_t vst_ino; ... } (136 bytes), then vi_type, vi_pad and
// vi_fsid (16), then char vip_path[MAXPATHLEN].
const (
	offDev  = 24
	offIno  = 24 + 8
	offPath = 24 + 136 + 16
)

// decodeVnodePath decodes PROC_PIDFDVNODEPATHINFO's struct
// vnode_fdinfowithpath into the file's identity and path.
func decodeVnodePath(fd int32, b []byte) (OpenFile, error) {
	if len(b) != vnodeFDInfoWithPathSize {
		return OpenFile{}, fmt.Errorf("proc_pidfdinfo(PROC_PIDFDVNODEPATHINFO) returned %d bytes, not %d", len(b), vnodeFDInfoWithPathSize)
	}
	path := b[offPath : offPath+maxPathLen]
	if i := bytes.IndexByte(path, 0); i >= 0 {
		path = path[:i]
	}
	return OpenFile{
		FD:     int(fd),
		FileID: FileID{Dev: uint64(binary.LittleEndian.Uint32(b[offDev:])), Ino: binary.LittleEndian.Uint64(b[offIno:])},
		Path:   string(path),
	}, nil
}

// sameDarwinFile reports whether got (a vinfo_stat's) is want, by the low
// 32 bits of Dev.
func sameDarwinFile(got, want FileID) bool {
	return got.Ino == want.Ino && uint32(got.Dev) == uint32(want.Dev)
}

// decodePIDs decodes proc_listpids: an array of int32 pids, 0 (the kernel)
// left out.
func decodePIDs(b []byte) []int32 {
	out := make([]int32, 0, len(b)/4)
	for ; len(b) >= 4; b = b[4:] {
		if pid := int32(binary.LittleEndian.Uint32(b)); pid > 0 {
			out = append(out, pid)
		}
	}
	return out
}
