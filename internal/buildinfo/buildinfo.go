// Package buildinfo tells which build of the server is running, from what
// the Go toolchain recorded in the binary (debug.ReadBuildInfo).
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Info is the build of the running binary: the answer of GET /version and
// of marketplaced -version. Revision, Time and Modified are empty when the
// binary was built without VCS data (go test, -buildvcs=false).
type Info struct {
	Module   string `json:"module"`
	Version  string `json:"version"`
	Go       string `json:"go"`
	Revision string `json:"revision,omitempty"`
	Time     string `json:"time,omitempty"`
	Modified bool   `json:"modified"`
}

// Get returns the running binary's build, read once.
var Get = sync.OnceValue(func() Info {
	info := Info{Module: "marketplace", Version: "(devel)", Go: runtime.Version()}
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return info
	}
	if bi.Main.Path != "" {
		info.Module = bi.Main.Path
	}
	if bi.Main.Version != "" {
		info.Version = bi.Main.Version
	}
	if bi.GoVersion != "" {
		info.Go = bi.GoVersion
	}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			info.Revision = s.Value
		case "vcs.time":
			info.Time = s.Value
		case "vcs.modified":
			info.Modified = s.Value == "true"
		}
	}
	return info
})
