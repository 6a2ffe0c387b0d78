package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"sort"
	"strings"
	"testing"
	"time"
)

func testImageInput(t *testing.T) ImageInput {
	t.Helper()
	var zbuf bytes.Buffer
	zw := zip.NewWriter(&zbuf)
	for _, name := range []string{"UTC", "America/Argentina/Buenos_Aires"} {
		w, err := zw.CreateHeader(&zip.FileHeader{Name: name, Method: zip.Store})
		if err != nil {
			t.Fatal(err)
		}
		w.Write([]byte("TZif " + name))
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return ImageInput{Arch: "amd64", Version: "v1.2.3", Revision: "0123456789abcdef0123456789abcdef01234567",
		Binary: bytes.Repeat([]byte("binary "), 1000), CACerts: []byte("-----BEGIN CERTIFICATE-----\n"),
		Zoneinfo: zbuf.Bytes(), Stamp: stamp}
}

type tarFile struct {
	hdr  *tar.Header
	data []byte
}

func readTar(t *testing.T, data []byte) (names []string, files map[string]tarFile) {
	t.Helper()
	files = map[string]tarFile{}
	tr := tar.NewReader(bytes.NewReader(data))
	for {
		h, err := tr.Next()
		if err == io.EOF {
			return names, files
		}
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(tr)
		if err != nil {
			t.Fatal(err)
		}
		names = append(names, h.Name)
		files[h.Name] = tarFile{h, b}
	}
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(s[:])
}

func TestImage_TheSameInputsGiveTheSameBytes(t *testing.T) {
	in := testImageInput(t)
	a, err := Image(in)
	if err != nil {
		t.Fatal(err)
	}
	in.Stamp = stamp.In(time.FixedZone("ART", -3*3600))
	b, err := Image(in)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(a, b) {
		t.Fatalf("two images of the same inputs differ (%d and %d bytes)", len(a), len(b))
	}
}

// TestImage_EveryBlobIsNamedByItsDigestInBothManifests follows the OCI
// layout from index.json and the docker manifest.json to the config and the
// layer, as podman load and docker load do.
func TestImage_EveryBlobIsNamedByItsDigestInBothManifests(t *testing.T) {
	data, err := Image(testImageInput(t))
	if err != nil {
		t.Fatal(err)
	}
	names, files := readTar(t, data)
	if !sort.StringsAreSorted(names) {
		t.Errorf("entries not sorted: %q", names)
	}
	for _, name := range names {
		h := files[name].hdr
		if !h.ModTime.Equal(stamp) || h.Uid != 0 || h.Gid != 0 || h.Uname != "" || h.Format != tar.FormatUSTAR {
			t.Errorf("%s: time %s, owner %d:%d %q, format %s; want the stamp, 0:0 unnamed, USTAR", name, h.ModTime, h.Uid, h.Gid, h.Uname, h.Format)
		}
		if hexSum, ok := strings.CutPrefix(name, "blobs/sha256/"); ok && hexSum != "" {
			if got := sha(files[name].data); got != "sha256:"+hexSum {
				t.Errorf("%s holds bytes of digest %s", name, got)
			}
		}
	}
	if string(files["oci-layout"].data) != `{"imageLayoutVersion":"1.0.0"}` {
		t.Errorf("oci-layout %q", files["oci-layout"].data)
	}
	type desc struct {
		MediaType   string
		Digest      string
		Size        int
		Annotations map[string]string
	}
	var index struct{ Manifests []desc }
	if err := json.Unmarshal(files["index.json"].data, &index); err != nil || len(index.Manifests) != 1 {
		t.Fatalf("index.json: %v %s", err, files["index.json"].data)
	}
	if ref := index.Manifests[0].Annotations["org.opencontainers.image.ref.name"]; ref != "marketplaced:v1.2.3" {
		t.Errorf("index.json names the image %q, want marketplaced:v1.2.3", ref)
	}
	blob := func(d desc) []byte {
		t.Helper()
		f, ok := files["blobs/sha256/"+d.Digest[len("sha256:"):]]
		if !ok || len(f.data) != d.Size {
			t.Fatalf("no blob of %s and size %d", d.Digest, d.Size)
		}
		return f.data
	}
	var manifest struct {
		Config desc
		Layers []desc
	}
	if err := json.Unmarshal(blob(index.Manifests[0]), &manifest); err != nil || len(manifest.Layers) != 1 {
		t.Fatalf("manifest: %v", err)
	}
	var config struct {
		RootFS struct {
			DiffIDs []string `json:"diff_ids"`
		} `json:"rootfs"`
	}
	if err := json.Unmarshal(blob(manifest.Config), &config); err != nil || len(config.RootFS.DiffIDs) != 1 {
		t.Fatalf("config: %v", err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(blob(manifest.Layers[0])))
	if err != nil {
		t.Fatal(err)
	}
	layer, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	if sha(layer) != config.RootFS.DiffIDs[0] {
		t.Errorf("the layer's uncompressed digest %s is not the config's diff_id %s", sha(layer), config.RootFS.DiffIDs[0])
	}

	var docker []struct {
		Config   string
		RepoTags []string
		Layers   []string
	}
	if err := json.Unmarshal(files["manifest.json"].data, &docker); err != nil || len(docker) != 1 {
		t.Fatalf("manifest.json: %v", err)
	}
	if docker[0].Config != "blobs/sha256/"+manifest.Config.Digest[len("sha256:"):] ||
		len(docker[0].Layers) != 1 || docker[0].Layers[0] != "blobs/sha256/"+manifest.Layers[0].Digest[len("sha256:"):] {
		t.Errorf("manifest.json %+v does not name the OCI manifest's config and layer", docker[0])
	}
	if len(docker[0].RepoTags) != 1 || docker[0].RepoTags[0] != "marketplaced:v1.2.3" {
		t.Errorf("manifest.json tags %q, want marketplaced:v1.2.3", docker[0].RepoTags)
	}
}

// TestImage_TheLayerHoldsTheBinaryCertificatesZonesAndAVolumeTheUserOwns
// checks the files and their owners: /data belongs to the image's user,
// everything else to root, every folder listed before what it holds.
func TestImage_TheLayerHoldsTheBinaryCertificatesZonesAndAVolumeTheUserOwns(t *testing.T) {
	in := testImageInput(t)
	layerGz, _, err := imageLayer(in, stamp)
	if err != nil {
		t.Fatal(err)
	}
	zr, err := gzip.NewReader(bytes.NewReader(layerGz))
	if err != nil {
		t.Fatal(err)
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		t.Fatal(err)
	}
	names, files := readTar(t, raw)
	want := []string{
		"data/", "etc/", "etc/ssl/", "etc/ssl/certs/", "etc/ssl/certs/ca-certificates.crt", "marketplaced", "tmp/",
		"usr/", "usr/share/", "usr/share/zoneinfo/", "usr/share/zoneinfo/America/", "usr/share/zoneinfo/America/Argentina/",
		"usr/share/zoneinfo/America/Argentina/Buenos_Aires", "usr/share/zoneinfo/UTC",
	}
	if len(names) != len(want) {
		t.Fatalf("layer entries %q, want %q", names, want)
	}
	for i := range want {
		if names[i] != want[i] {
			t.Fatalf("layer entries %q, want %q", names, want)
		}
	}
	check := func(name string, mode int64, owner int, data []byte) {
		t.Helper()
		h := files[name].hdr
		if h.Mode != mode || h.Uid != owner || h.Gid != owner || !bytes.Equal(files[name].data, data) {
			t.Errorf("%s: mode %o owner %d:%d, %d bytes; want %o %d:%d, %d bytes", name, h.Mode, h.Uid, h.Gid, len(files[name].data), mode, owner, owner, len(data))
		}
	}
	check("marketplaced", 0o755, 0, in.Binary)
	check("data/", 0o755, imageUID, nil)
	check("tmp/", 0o1777, 0, nil)
	check("etc/ssl/certs/ca-certificates.crt", 0o644, 0, in.CACerts)
	check("usr/share/zoneinfo/UTC", 0o644, 0, []byte("TZif UTC"))
}

func TestImage_WithoutVersionTheImageIsNamedByTheCommitsPseudoVersion(t *testing.T) {
	got := pseudoVersion(vcsStamp{revision: "470507336ea46b1ea98ec5729b2dfa7071dbd355"}, stamp)
	if want := "v0.0.0-20261124201622-470507336ea4"; got != want {
		t.Errorf("pseudo-version %q, want %q", got, want)
	}
	if err := CheckVersion(got); err != nil {
		t.Error(err)
	}
}

func TestImage_TargetsMustBeOneLinuxPlatform(t *testing.T) {
	for _, s := range []string{"linux/amd64,linux/arm64", "darwin/arm64", "windows/amd64"} {
		list, err := ParseTargets(s)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := imageTargets(s, list); err == nil {
			t.Errorf("-image -targets %s accepted", s)
		}
	}
	list, _ := ParseTargets("linux/arm64")
	if got, err := imageTargets("linux/arm64", list); err != nil || len(got) != 1 || got[0] != (Target{"linux", "arm64"}) {
		t.Errorf("-image -targets linux/arm64: %v %v", got, err)
	}
	if got, err := imageTargets("", DefaultTargets); err != nil || len(got) != 1 || got[0] != (Target{"linux", "amd64"}) {
		t.Errorf("-image without -targets: %v %v", got, err)
	}
}
