//go:build linux || darwin || freebsd

package badger

import "syscall"

// freeSpace returns the bytes an unprivileged writer may still use on the
// file system that holds dir.
func freeSpace(dir string) (int64, error) {
	var st syscall.Statfs_t
	if err := syscall.Statfs(dir, &st); err != nil {
		return 0, err
	}
	return int64(uint64(st.Bavail) * uint64(st.Bsize)), nil
}

// canMeasureFreeSpace reports whether freeSpace works on this system.
const canMeasureFreeSpace = true
