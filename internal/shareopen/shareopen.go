// Package shareopen opens files and directories so that other processes may still read, write, rename and delete
// them while they are open. On Windows a file opened without FILE_SHARE_DELETE, as os.Open opens it, refuses the
// Copilot CLI's atomic rename of workspace.yaml and its deletes and renames of session directories; the CLI opens
// its own files with every share mode, and so does every open here. Elsewhere it is os.OpenFile.
package shareopen

import "os"

// Open opens name (a file or a directory) for reading, as os.Open does, sharing it fully on Windows.
func Open(name string) (*os.File, error) { return OpenFile(name, os.O_RDONLY, 0) }
