package main

import (
	"archive/tar"
	"archive/zip"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"time"
)

// File is one file of an archive, named relative to the archive's folder.
type File struct {
	Name string
	Mode int64
	Data []byte
}

// Archive packs files under the folder base, in the given order, with
// every entry's time set to stamp; a tar.gz for linux and darwin, a zip for
// windows (what each platform opens with its own tools). It returns the
// archive's file name and bytes.
func Archive(base string, t Target, files []File, stamp time.Time) (string, []byte, error) {
	stamp = stamp.UTC().Truncate(time.Second)
	if t.OS == "windows" {
		data, err := Zip(base, files, stamp)
		return base + ".zip", data, err
	}
	data, err := TarGz(base, files, stamp)
	return base + ".tar.gz", data, err
}

// TarGz writes a gzip-compressed tar in the USTAR format, which has no
// room for access times, owner names or extended attributes: every entry
// is owned by uid and gid 0 with no names. The gzip header carries no file
// name and no modification time, so nothing of the build machine or the
// build time reaches the bytes.
func TarGz(base string, files []File, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw, err := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	if err != nil {
		return nil, err
	}
	tw := tar.NewWriter(zw)
	dir := &tar.Header{Typeflag: tar.TypeDir, Name: base + "/", Mode: 0o755, ModTime: stamp, Format: tar.FormatUSTAR}
	if err := tw.WriteHeader(dir); err != nil {
		return nil, err
	}
	for _, f := range files {
		h := &tar.Header{
			Typeflag: tar.TypeReg, Name: base + "/" + f.Name, Mode: f.Mode,
			Size: int64(len(f.Data)), ModTime: stamp, Format: tar.FormatUSTAR,
		}
		if err := tw.WriteHeader(h); err != nil {
			return nil, fmt.Errorf("tar %s: %w", f.Name, err)
		}
		if _, err := tw.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := tw.Close(); err != nil {
		return nil, err
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Zip writes a zip whose entries carry stamp (in UTC, in both the MS-DOS
// fields and the extended timestamp) and Unix modes, deflated at the best
// compression.
func Zip(base string, files []File, stamp time.Time) ([]byte, error) {
	var buf bytes.Buffer
	zw := zip.NewWriter(&buf)
	zw.RegisterCompressor(zip.Deflate, func(w io.Writer) (io.WriteCloser, error) {
		return flate.NewWriter(w, flate.BestCompression)
	})
	dir := &zip.FileHeader{Name: base + "/", Method: zip.Store, Modified: stamp}
	dir.SetMode(os.ModeDir | 0o755)
	if _, err := zw.CreateHeader(dir); err != nil {
		return nil, err
	}
	for _, f := range files {
		h := &zip.FileHeader{Name: base + "/" + f.Name, Method: zip.Deflate, Modified: stamp}
		h.SetMode(os.FileMode(f.Mode))
		w, err := zw.CreateHeader(h)
		if err != nil {
			return nil, fmt.Errorf("zip %s: %w", f.Name, err)
		}
		if _, err := w.Write(f.Data); err != nil {
			return nil, err
		}
	}
	if err := zw.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// SHA256Sums returns the SHA256SUMS file of the named files of dir, sorted
// by name, in the format of sha256sum and shasum -a 256 (hash, two spaces,
// name), so that `sha256sum -c SHA256SUMS` checks them.
func SHA256Sums(dir string, names []string) ([]byte, error) {
	sorted := append([]string(nil), names...)
	sort.Strings(sorted)
	var b bytes.Buffer
	for _, name := range sorted {
		data, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			return nil, err
		}
		sum := sha256.Sum256(data)
		fmt.Fprintf(&b, "%s  %s\n", hex.EncodeToString(sum[:]), name)
	}
	return b.Bytes(), nil
}
