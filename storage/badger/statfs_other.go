//go:build !(linux || darwin || freebsd)

package badger

import "errors"

// freeSpace is not implemented here: the store then takes every write, and
// a full disk is only reported when Badger itself returns ENOSPC.
func freeSpace(string) (int64, error) {
	return 0, errors.New("free space is not measured on this system")
}

// canMeasureFreeSpace reports whether freeSpace works on this system.
const canMeasureFreeSpace = false
