// Package buildinfo tells which build of the server is running, from what
// the Go toolchain recorded in the binary (debug.ReadBuildInfo) and the
// version a release build stamps in.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// version is the release version, set only by the release build
// (internal/release) with the linker:
//
//	-ldflags "-X <module path>/internal/buildinfo.version=v1.2.3"
//
// It wins over the module version Go records, which for a build in a
// checkout is the checkout's VCS tag only when HEAD carries exactly that tag
// and the tree is clean, and otherwise a pseudo-version or "(devel)": the
// release's archives are named by this version, so the binary says the same.
var version string

// revision, revisionTime and modified are the VCS revision, its commit time
// (RFC 3339, UTC) and "true" for uncommitted changes, also set by the
// release build. Go records the same as vcs.* settings, which win; but Go
// finds the repository only by a .git folder, so a build in a git worktree
// (whose .git is a file) would otherwise say nothing of its revision.
var revision, revisionTime, modified string

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
	bi, ok := debug.ReadBuildInfo()
	return read(stamp{version, revision, revisionTime, modified}, bi, ok)
})

// stamp is what the release build set with the linker.
type stamp struct{ version, revision, time, modified string }

func read(stamped stamp, bi *debug.BuildInfo, ok bool) Info {
	info := Info{Module: "github.com/marketplace/marketplace", Version: "(devel)", Go: runtime.Version()}
	if ok {
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
	}
	if stamped.version != "" {
		info.Version = stamped.version
	}
	if info.Revision == "" && stamped.revision != "" {
		info.Revision = stamped.revision
		info.Time = stamped.time
		info.Modified = stamped.modified == "true"
	}
	return info
}
