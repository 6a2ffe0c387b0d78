// Command release builds the release archives of marketplaced, the same
// bytes on every machine for the same commit and Go version:
//
//	go run ./internal/release -version v1.2.3 -out dist
//	go run ./internal/release -version v1.2.3 -out dist -targets linux/amd64,darwin/arm64
//
// For each target it builds cmd/marketplaced with CGO_ENABLED=0 and
// -trimpath, stamps the version into internal/buildinfo (the VCS revision
// and time are Go's own vcs.* settings), and packs the binary with README.md
// and CHANGELOG.md into marketplaced_<version>_<os>_<arch>.tar.gz (.zip for
// windows); SHA256SUMS lists every archive. Every archive entry carries the
// commit's time (or SOURCE_DATE_EPOCH), fixed modes and no owner, in a fixed
// order; the gzip header has no name and no time. docs/releasing.md tells
// how to check a release.
//
// With -image it writes the container image instead, built without a
// container engine (docs/container.md):
//
//	go run ./internal/release -image -out dist
//
// It is a Go program rather than a Makefile or a script so that it runs
// wherever Go does (Windows included) with nothing else installed, and so
// that the archive format is code with tests.
package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"time"
)

// DefaultTargets are the platforms of a release.
var DefaultTargets = []Target{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// ExtraFiles go into every archive beside the binary, from the module root.
var ExtraFiles = []string{"README.md", "CHANGELOG.md"}

// Target is a GOOS/GOARCH pair.
type Target struct{ OS, Arch string }

func (t Target) String() string { return t.OS + "/" + t.Arch }

func main() {
	if err := run(os.Args[1:]); err != nil {
		fmt.Fprintln(os.Stderr, "release:", err)
		os.Exit(1)
	}
}

func run(args []string) error {
	fs := flag.NewFlagSet("release", flag.ContinueOnError)
	version := fs.String("version", "", "the release version, vMAJOR.MINOR.PATCH[-PRERELEASE] (required)")
	out := fs.String("out", "dist", "folder to write the archives and SHA256SUMS into")
	targets := fs.String("targets", "", "comma-separated GOOS/GOARCH list (default: every release platform)")
	allowDirty := fs.Bool("allow-dirty", false, "build even when the checkout has uncommitted changes (vcs.modified is then true)")
	image := fs.Bool("image", false, "write the container image marketplaced-image.tar (for linux/amd64, or the one linux target of -targets) instead of the archives; -version defaults to a Go pseudo-version of the commit")
	caCerts := fs.String("ca-certificates", "/etc/ssl/certs/ca-certificates.crt", "with -image: the CA bundle (PEM) to put in the image")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		return fmt.Errorf("unexpected arguments: %q", fs.Args())
	}
	if *version != "" || !*image {
		if err := CheckVersion(*version); err != nil {
			return err
		}
	}
	list, err := ParseTargets(*targets)
	if err != nil {
		return err
	}
	if *image {
		if list, err = imageTargets(*targets, list); err != nil {
			return err
		}
	}
	root, err := goOutput(".", nil, "list", "-m", "-f", "{{.Dir}}")
	if err != nil {
		return err
	}
	module, err := goOutput(root, nil, "list", "-m", "-f", "{{.Path}}")
	if err != nil {
		return err
	}
	if !*allowDirty {
		if dirty, err := gitOutput(root, "status", "--porcelain"); err == nil && dirty != "" {
			return fmt.Errorf("the checkout has uncommitted changes; commit them, or pass -allow-dirty for a build that is not a release:\n%s", dirty)
		}
	}
	stamp, err := sourceTime(root)
	if err != nil {
		return err
	}
	vcs, err := readVCS(root)
	if err != nil {
		return err
	}
	if *version == "" {
		*version = pseudoVersion(vcs, stamp)
	}
	if err := os.MkdirAll(*out, 0o755); err != nil {
		return err
	}
	work, err := os.MkdirTemp("", "marketplace-release-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(work)
	if *image {
		return writeImage(root, module, work, *out, *version, vcs, list[0], *caCerts, stamp)
	}

	extras := make([]File, len(ExtraFiles))
	for i, name := range ExtraFiles {
		data, err := os.ReadFile(filepath.Join(root, name))
		if err != nil {
			return err
		}
		extras[i] = File{Name: name, Mode: 0o644, Data: data}
	}
	var archives []string
	for _, t := range list {
		bin, err := build(root, module, work, *version, vcs, t)
		if err != nil {
			return err
		}
		if t.OS == runtime.GOOS && t.Arch == runtime.GOARCH {
			if err := checkStamp(bin, *version, vcs.revision); err != nil {
				return err
			}
		}
		data, err := os.ReadFile(bin)
		if err != nil {
			return err
		}
		base := ArchiveBase(*version, t)
		files := append([]File{{Name: filepath.Base(bin), Mode: 0o755, Data: data}}, extras...)
		name, archive, err := Archive(base, t, files, stamp)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(*out, name), archive, 0o644); err != nil {
			return err
		}
		archives = append(archives, name)
		fmt.Println(filepath.Join(*out, name))
	}
	sums, err := SHA256Sums(*out, archives)
	if err != nil {
		return err
	}
	if err := os.WriteFile(filepath.Join(*out, "SHA256SUMS"), sums, 0o644); err != nil {
		return err
	}
	fmt.Println(filepath.Join(*out, "SHA256SUMS"))
	return nil
}

// writeImage builds the binary for t and writes the container image of it
// into out/marketplaced-image.tar.
func writeImage(root, module, work, out, version string, vcs vcsStamp, t Target, caCerts string, stamp time.Time) error {
	bin, err := build(root, module, work, version, vcs, t)
	if err != nil {
		return err
	}
	if t.Arch == runtime.GOARCH && runtime.GOOS == "linux" {
		if err := checkStamp(bin, version, vcs.revision); err != nil {
			return err
		}
	}
	binary, err := os.ReadFile(bin)
	if err != nil {
		return err
	}
	certs, err := os.ReadFile(caCerts)
	if err != nil {
		return fmt.Errorf("-ca-certificates: %w", err)
	}
	goroot, err := goOutput(root, nil, "env", "GOROOT")
	if err != nil {
		return err
	}
	zoneinfo, err := os.ReadFile(filepath.Join(goroot, "lib", "time", "zoneinfo.zip"))
	if err != nil {
		return fmt.Errorf("the time zones of Go: %w", err)
	}
	data, err := Image(ImageInput{Arch: t.Arch, Version: version, Revision: vcs.revision, Binary: binary,
		CACerts: certs, Zoneinfo: zoneinfo, Stamp: stamp})
	if err != nil {
		return err
	}
	name := filepath.Join(out, ImageFile)
	if err := os.WriteFile(name, data, 0o644); err != nil {
		return err
	}
	// Its own sums file: SHA256SUMS is the archives', which a run with
	// -image does not build.
	sums, err := SHA256Sums(out, []string{ImageFile})
	if err != nil {
		return err
	}
	if err := os.WriteFile(name+".sha256", sums, 0o644); err != nil {
		return err
	}
	fmt.Println(name)
	fmt.Println(name + ".sha256")
	return nil
}

// ImageFile is the name of the container image archive that -image writes.
const ImageFile = "marketplaced-image.tar"

// imageTargets is the one platform of the image: linux/amd64 unless
// -targets names one linux platform.
func imageTargets(s string, list []Target) ([]Target, error) {
	if strings.TrimSpace(s) == "" {
		return []Target{{"linux", "amd64"}}, nil
	}
	if len(list) != 1 || list[0].OS != "linux" {
		return nil, fmt.Errorf("-image: -targets must name one linux platform (linux/amd64 or linux/arm64), not %q", s)
	}
	return list, nil
}

// pseudoVersion is the version of a build that names none: Go's
// pseudo-version of the commit (v0.0.0-yyyymmddhhmmss-abcdefabcdef), which
// go install would show for it too.
func pseudoVersion(vcs vcsStamp, stamp time.Time) string {
	rev := vcs.revision
	if len(rev) > 12 {
		rev = rev[:12]
	}
	if rev == "" {
		rev = "000000000000"
	}
	return "v0.0.0-" + stamp.UTC().Format("20060102150405") + "-" + rev
}

var versionPattern = regexp.MustCompile(`^v(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)(-[0-9A-Za-z-]+(\.[0-9A-Za-z-]+)*)?$`)

// CheckVersion accepts a semantic version with the leading v that Go
// module versions carry (v1.2.3, v1.3.0-rc.1), and nothing else: the
// version names the archives and must be a valid tag for go install.
func CheckVersion(v string) error {
	if v == "" {
		return errors.New("-version is required (e.g. -version v1.2.3)")
	}
	if !versionPattern.MatchString(v) {
		return fmt.Errorf("-version %q is not a semantic version such as v1.2.3 or v1.3.0-rc.1", v)
	}
	return nil
}

// ParseTargets reads a comma-separated GOOS/GOARCH list; empty means every
// release platform. Only the release platforms are accepted.
func ParseTargets(s string) ([]Target, error) {
	if strings.TrimSpace(s) == "" {
		return DefaultTargets, nil
	}
	var list []Target
	seen := map[Target]bool{}
	for _, part := range strings.Split(s, ",") {
		goos, goarch, ok := strings.Cut(strings.TrimSpace(part), "/")
		t := Target{goos, goarch}
		known := false
		for _, d := range DefaultTargets {
			known = known || d == t
		}
		if !ok || !known {
			return nil, fmt.Errorf("-targets: %q is not one of %v", part, DefaultTargets)
		}
		if !seen[t] {
			seen[t] = true
			list = append(list, t)
		}
	}
	return list, nil
}

// ArchiveBase is an archive's name without extension, also the folder its
// files are packed in.
func ArchiveBase(version string, t Target) string {
	return "marketplaced_" + version + "_" + t.OS + "_" + t.Arch
}

// sourceTime is the time every archive entry carries: SOURCE_DATE_EPOCH
// when set (the reproducible-builds.org convention, for a build from a
// source tarball), else the commit time of HEAD.
func sourceTime(root string) (time.Time, error) {
	if s := os.Getenv("SOURCE_DATE_EPOCH"); s != "" {
		sec, err := strconv.ParseInt(s, 10, 64)
		if err != nil || sec < 0 {
			return time.Time{}, fmt.Errorf("SOURCE_DATE_EPOCH %q is not a number of seconds", s)
		}
		return time.Unix(sec, 0).UTC(), nil
	}
	s, err := gitOutput(root, "log", "-1", "--format=%ct")
	if err != nil {
		return time.Time{}, fmt.Errorf("the commit time (set SOURCE_DATE_EPOCH outside a git checkout): %w", err)
	}
	sec, err := strconv.ParseInt(s, 10, 64)
	if err != nil {
		return time.Time{}, fmt.Errorf("the commit time %q: %w", s, err)
	}
	return time.Unix(sec, 0).UTC(), nil
}

// buildEnv fixes every variable that changes the bytes go build writes, so
// that the caller's environment cannot: the platform, cgo off, the
// per-architecture levels at their defaults, no extra flags, no workspace.
func buildEnv(t Target) []string {
	return []string{
		"GOOS=" + t.OS, "GOARCH=" + t.Arch, "CGO_ENABLED=0",
		"GOAMD64=v1", "GOARM64=v8.0", "GOEXPERIMENT=", "GOFLAGS=", "GOWORK=off",
	}
}

// vcsStamp is the checkout's revision as Go's vcs.* settings write it.
type vcsStamp struct{ revision, time, modified string }

// readVCS reads the revision, its commit time and whether the tree has
// uncommitted changes; all empty outside a git checkout.
func readVCS(root string) (vcsStamp, error) {
	rev, err := gitOutput(root, "rev-parse", "HEAD")
	if err != nil {
		return vcsStamp{}, nil
	}
	ct, err := gitOutput(root, "log", "-1", "--format=%ct")
	if err != nil {
		return vcsStamp{}, err
	}
	sec, err := strconv.ParseInt(ct, 10, 64)
	if err != nil {
		return vcsStamp{}, fmt.Errorf("the commit time %q: %w", ct, err)
	}
	dirty, err := gitOutput(root, "status", "--porcelain")
	if err != nil {
		return vcsStamp{}, err
	}
	return vcsStamp{rev, time.Unix(sec, 0).UTC().Format(time.RFC3339), strconv.FormatBool(dirty != "")}, nil
}

// ldflags strips the symbol table and DWARF (smaller archives; panics keep
// their stack traces) and stamps the version, and the revision for builds
// where Go records none (internal/buildinfo).
func ldflags(module, version string, vcs vcsStamp) string {
	pkg := module + "/internal/buildinfo"
	flags := "-s -w -X " + pkg + ".version=" + version
	if vcs.revision != "" {
		flags += " -X " + pkg + ".revision=" + vcs.revision + " -X " + pkg + ".revisionTime=" + vcs.time +
			" -X " + pkg + ".modified=" + vcs.modified
	}
	return flags
}

func build(root, module, work, version string, vcs vcsStamp, t Target) (string, error) {
	name := "marketplaced"
	if t.OS == "windows" {
		name += ".exe"
	}
	dir := filepath.Join(work, t.OS+"_"+t.Arch)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	bin := filepath.Join(dir, name)
	_, err := goOutput(root, buildEnv(t), "build", "-trimpath", "-ldflags="+ldflags(module, version, vcs), "-o", bin, "./cmd/marketplaced")
	if err != nil {
		return "", fmt.Errorf("build %s: %w", t, err)
	}
	return bin, nil
}

// checkStamp runs a binary built for this machine and checks that
// -version shows the release version and, in a git checkout, the
// revision built.
func checkStamp(bin, version, revision string) error {
	out, err := exec.Command(bin, "-version").Output()
	if err != nil {
		return fmt.Errorf("%s -version: %w", bin, err)
	}
	var info struct {
		Version  string `json:"version"`
		Revision string `json:"revision"`
	}
	if err := json.Unmarshal(out, &info); err != nil {
		return fmt.Errorf("%s -version: %w", bin, err)
	}
	if info.Version != version {
		return fmt.Errorf("%s -version shows version %q, want %q", bin, info.Version, version)
	}
	if info.Revision != revision {
		return fmt.Errorf("%s -version shows revision %q, want %q", bin, info.Revision, revision)
	}
	return nil
}

func goOutput(dir string, env []string, args ...string) (string, error) {
	cmd := exec.Command("go", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), env...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("go %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}

func gitOutput(dir string, args ...string) (string, error) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return "", fmt.Errorf("git %s: %v: %s", strings.Join(args, " "), err, strings.TrimSpace(stderr.String()))
	}
	return strings.TrimSpace(string(out)), nil
}
