package buildinfo

import (
	"runtime/debug"
	"testing"
)

func checkoutBuild() *debug.BuildInfo {
	return &debug.BuildInfo{
		GoVersion: "go1.26.8",
		Main:      debug.Module{Path: "example.com/marketplace", Version: "v0.0.0-20261124201622-ca14d10f00aa"},
		Settings: []debug.BuildSetting{
			{Key: "vcs.revision", Value: "ca14d10f00aa"},
			{Key: "vcs.time", Value: "2026-11-24T20:16:22Z"},
			{Key: "vcs.modified", Value: "false"},
		},
	}
}

func TestRead_TheReleaseVersionWinsOverTheModuleVersion(t *testing.T) {
	got := read(stamp{version: "v1.2.3"}, checkoutBuild(), true)
	want := Info{Module: "example.com/marketplace", Version: "v1.2.3", Go: "go1.26.8",
		Revision: "ca14d10f00aa", Time: "2026-11-24T20:16:22Z"}
	if got != want {
		t.Errorf("read = %+v, want %+v", got, want)
	}
}

func TestRead_WithoutAReleaseVersionTheModuleVersionIsShown(t *testing.T) {
	got := read(stamp{}, checkoutBuild(), true)
	if got.Version != "v0.0.0-20261124201622-ca14d10f00aa" || got.Revision != "ca14d10f00aa" {
		t.Errorf("read = %+v, want the module's pseudo-version and the revision", got)
	}
}

func TestRead_WithoutBuildInfoTheVersionIsDevel(t *testing.T) {
	got := read(stamp{}, nil, false)
	if got.Version != "(devel)" || got.Revision != "" || got.Modified {
		t.Errorf("read = %+v, want (devel) and no VCS data", got)
	}
	if got := read(stamp{version: "v1.0.0"}, nil, false); got.Version != "v1.0.0" {
		t.Errorf("read with a release version = %+v, want v1.0.0", got)
	}
}

func TestRead_StampedRevisionFillsInWhenGoRecordedNone(t *testing.T) {
	bi := checkoutBuild()
	bi.Settings = nil // a build in a git worktree: Go finds no .git folder
	got := read(stamp{version: "v1.2.3", revision: "ca14d10f00aa", time: "2026-11-24T20:16:22Z", modified: "true"}, bi, true)
	if got.Revision != "ca14d10f00aa" || got.Time != "2026-11-24T20:16:22Z" || !got.Modified {
		t.Errorf("read = %+v, want the stamped revision, time and modified", got)
	}
}

func TestRead_GoRecordedRevisionWinsOverTheStampedOne(t *testing.T) {
	got := read(stamp{revision: "other", time: "2000-01-01T00:00:00Z", modified: "true"}, checkoutBuild(), true)
	if got.Revision != "ca14d10f00aa" || got.Time != "2026-11-24T20:16:22Z" || got.Modified {
		t.Errorf("read = %+v, want Go's vcs.* settings", got)
	}
}
