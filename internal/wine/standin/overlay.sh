#!/usr/bin/env bash
# An overlay of GOROOT's internal/syscall/windows/at_windows.go for Wine 8. Go 1.26's os.RemoveAll deletes each
# file with NtSetInformationFile(FileDispositionInformationEx) and falls back to the older call only on the answers
# Windows gives when it lacks the class; Wine 8 answers STATUS_NOT_IMPLEMENTED (0xC0000002), so every RemoveAll,
# t.TempDir's clean-up among them, fails with "Invalid function". The overlay adds that status to the fallback's
# answers: one line, and nothing changes on a system that has the call. It goes when the Wine we install
# implements FileDispositionInformationEx.
#
# It is written for Go 1.26's file: on another Go, or if the line it changes is not there exactly once, it fails
# and says so rather than build the tests with a stale copy.
#
# Usage: overlay.sh DIR: writes DIR/at_windows.go.txt (not .go, so that no package is left in the module's tree)
# and DIR/overlay.json, and prints the latter's path.
set -euo pipefail
out=$1
want=go1.26
version=$(go env GOVERSION)
case $version in
"$want" | "$want".*) ;;
*)
  echo "internal/wine/standin/overlay.sh: written for $want, the toolchain is $version: check whether Go still" \
    "needs FileDispositionInformationEx in os.RemoveAll and whether the Wine here answers it, then update or delete" \
    "this overlay" >&2
  exit 1
  ;;
esac
src=$(go env GOROOT)/src/internal/syscall/windows/at_windows.go
line=$'\t\tSTATUS_NOT_SUPPORTED:     // the file system doesn\'t support FILE_DISPOSITION_INFORMATION_EX or one of the flags'
if [ "$(grep -cxF -- "$line" "$src")" != 1 ]; then
  echo "internal/wine/standin/overlay.sh: $src no longer has the fallback line this overlay extends; update it" >&2
  exit 1
fi
mkdir -p "$out"
awk -v line="$line" '$0 == line { sub(/STATUS_NOT_SUPPORTED:/, "STATUS_NOT_SUPPORTED, NTStatus(0xC0000002) /* Wine 8: STATUS_NOT_IMPLEMENTED */:") } { print }' \
  "$src" >"$out/at_windows.go.txt"
printf '{"Replace": {"%s": "%s"}}\n' "$src" "$out/at_windows.go.txt" >"$out/overlay.json"
echo "$out/overlay.json"
