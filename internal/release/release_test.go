package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

var (
	stamp = time.Date(2026, 11, 24, 20, 16, 22, 0, time.UTC)
	files = []File{
		{Name: "marketplaced", Mode: 0o755, Data: bytes.Repeat([]byte("binary "), 1000)},
		{Name: "README.md", Mode: 0o644, Data: []byte("# marketplace\n")},
		{Name: "CHANGELOG.md", Mode: 0o644, Data: []byte("# Changelog\n")},
	}
)

func TestArchive_TheSameInputsGiveTheSameBytes(t *testing.T) {
	for _, target := range DefaultTargets {
		base := ArchiveBase("v1.2.3", target)
		name1, a, err := Archive(base, target, files, stamp)
		if err != nil {
			t.Fatal(err)
		}
		// The stamp's location must not matter: only its instant does.
		name2, b, err := Archive(base, target, files, stamp.In(time.FixedZone("ART", -3*3600)))
		if err != nil {
			t.Fatal(err)
		}
		if name1 != name2 || !bytes.Equal(a, b) {
			t.Errorf("%s: two archives of the same files differ (%s, %d and %d bytes)", target, name1, len(a), len(b))
		}
	}
}

func TestArchive_NameAndFormatFollowThePlatform(t *testing.T) {
	cases := []struct {
		target Target
		want   string
	}{
		{Target{"linux", "amd64"}, "marketplaced_v1.2.3_linux_amd64.tar.gz"},
		{Target{"darwin", "arm64"}, "marketplaced_v1.2.3_darwin_arm64.tar.gz"},
		{Target{"windows", "amd64"}, "marketplaced_v1.2.3_windows_amd64.zip"},
	}
	for _, c := range cases {
		name, _, err := Archive(ArchiveBase("v1.2.3", c.target), c.target, files, stamp)
		if err != nil {
			t.Fatal(err)
		}
		if name != c.want {
			t.Errorf("%s: archive %q, want %q", c.target, name, c.want)
		}
	}
}

func TestTarGz_HeadersCarryOnlyTheStampModesAndNoOwner(t *testing.T) {
	data, err := TarGz("marketplaced_v1.2.3_linux_amd64", files, stamp)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	if zr.Name != "" || !zr.ModTime.IsZero() || zr.Comment != "" {
		t.Errorf("gzip header: name %q, mtime %v, comment %q; want none", zr.Name, zr.ModTime, zr.Comment)
	}
	tr := tar.NewReader(zr)
	var names []string
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		if !h.ModTime.Equal(stamp) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Gname != "" {
			t.Errorf("%s: mtime %v uid %d gid %d uname %q gname %q; want %v, 0, 0, no names",
				h.Name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Gname, stamp)
		}
		if len(h.PAXRecords) > 0 {
			t.Errorf("%s: PAX records %v; want none", h.Name, h.PAXRecords)
		}
		wantMode := int64(0o644)
		if h.Typeflag == tar.TypeDir || strings.HasSuffix(h.Name, "/marketplaced") {
			wantMode = 0o755
		}
		if h.Mode != wantMode {
			t.Errorf("%s: mode %o, want %o", h.Name, h.Mode, wantMode)
		}
		if h.Typeflag == tar.TypeReg {
			body, _ := io.ReadAll(tr)
			if f := fileNamed(strings.TrimPrefix(h.Name, "marketplaced_v1.2.3_linux_amd64/")); !bytes.Equal(body, f.Data) {
				t.Errorf("%s: content differs from the input", h.Name)
			}
		}
	}
	want := "marketplaced_v1.2.3_linux_amd64/ marketplaced_v1.2.3_linux_amd64/marketplaced " +
		"marketplaced_v1.2.3_linux_amd64/README.md marketplaced_v1.2.3_linux_amd64/CHANGELOG.md"
	if got := strings.Join(names, " "); got != want {
		t.Errorf("entries %q, want %q (the order given)", got, want)
	}
}

func TestZip_EntriesCarryTheStampAndModes(t *testing.T) {
	data, err := Zip("marketplaced_v1.2.3_windows_amd64", files, stamp)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if len(zr.File) != 4 {
		t.Fatalf("%d entries, want 4 (the folder and three files)", len(zr.File))
	}
	for _, f := range zr.File {
		if !f.Modified.Equal(stamp) {
			t.Errorf("%s: modified %v, want %v", f.Name, f.Modified, stamp)
		}
		if f.Name == "marketplaced_v1.2.3_windows_amd64/marketplaced" && f.Mode().Perm() != 0o755 {
			t.Errorf("%s: mode %v, want 0755", f.Name, f.Mode())
		}
	}
}

func fileNamed(name string) File {
	for _, f := range files {
		if f.Name == name {
			return f
		}
	}
	return File{}
}

func TestSHA256Sums_SortedInTheFormatSha256sumChecks(t *testing.T) {
	dir := t.TempDir()
	for name, body := range map[string]string{"b.zip": "b", "a.tar.gz": "a"} {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	got, err := SHA256Sums(dir, []string{"b.zip", "a.tar.gz"})
	if err != nil {
		t.Fatal(err)
	}
	want := "ca978112ca1bbdcafac231b39a23dc4da786eff8147c4e72b9807785afee48bb  a.tar.gz\n" +
		"3e23e8160039594a33894f6564e1b1348bbd7a0088d42c4acb73eeaed59c009d  b.zip\n"
	if string(got) != want {
		t.Errorf("SHA256SUMS:\n%s\nwant:\n%s", got, want)
	}
}

func TestCheckVersion_AcceptsOnlySemanticVersionsWithV(t *testing.T) {
	for _, ok := range []string{"v0.1.0", "v1.2.3", "v1.3.0-rc.1", "v2.0.0-beta"} {
		if err := CheckVersion(ok); err != nil {
			t.Errorf("CheckVersion(%q) = %v, want nil", ok, err)
		}
	}
	for _, bad := range []string{"", "1.2.3", "v1.2", "v01.2.3", "v1.2.3+meta", "v1.2.3-", "v1.2.3 ", "latest"} {
		if err := CheckVersion(bad); err == nil {
			t.Errorf("CheckVersion(%q) = nil, want an error", bad)
		}
	}
}

func TestParseTargets_DefaultsToEveryPlatformAndRefusesOthers(t *testing.T) {
	all, err := ParseTargets("")
	if err != nil || len(all) != 6 {
		t.Fatalf("ParseTargets(\"\") = %v, %v; want the six release platforms", all, err)
	}
	got, err := ParseTargets("linux/amd64, windows/arm64,linux/amd64")
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || got[0] != (Target{"linux", "amd64"}) || got[1] != (Target{"windows", "arm64"}) {
		t.Errorf("ParseTargets = %v, want linux/amd64 and windows/arm64 once each", got)
	}
	for _, bad := range []string{"linux", "plan9/amd64", "linux/386", "linux/amd64,"} {
		if _, err := ParseTargets(bad); err == nil {
			t.Errorf("ParseTargets(%q) = nil error, want one", bad)
		}
	}
}

func TestBuildEnv_FixesWhatChangesTheBinary(t *testing.T) {
	env := strings.Join(buildEnv(Target{"darwin", "arm64"}), " ")
	for _, want := range []string{"GOOS=darwin", "GOARCH=arm64", "CGO_ENABLED=0", "GOFLAGS=", "GOAMD64=v1", "GOARM64=v8.0", "GOWORK=off"} {
		if !strings.Contains(" "+env+" ", " "+want+" ") {
			t.Errorf("build environment %q lacks %s", env, want)
		}
	}
}

func TestLdflags_StampVersionAndRevisionIntoBuildinfo(t *testing.T) {
	got := ldflags("example.com/m", "v1.2.3", vcsStamp{"abc123", "2026-11-24T20:16:22Z", "false"})
	want := "-s -w -X example.com/m/internal/buildinfo.version=v1.2.3 -X example.com/m/internal/buildinfo.revision=abc123 " +
		"-X example.com/m/internal/buildinfo.revisionTime=2026-11-24T20:16:22Z -X example.com/m/internal/buildinfo.modified=false"
	if got != want {
		t.Errorf("ldflags =\n%s\nwant\n%s", got, want)
	}
	if got := ldflags("example.com/m", "v1.2.3", vcsStamp{}); got != "-s -w -X example.com/m/internal/buildinfo.version=v1.2.3" {
		t.Errorf("ldflags outside a checkout = %q, want the version only", got)
	}
}
