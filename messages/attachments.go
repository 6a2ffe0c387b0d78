package messages

import (
	"context"
	"errors"
	"fmt"
	"io"
	"maps"
	"mime"
	"path"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/geo"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/storage"
)

// Limits of an attachment.
const (
	// MaxAttachmentSize is 25 MB (MiB: the public API writes "25 Mb").
	MaxAttachmentSize = 25 << 20
	// MaxFilenameLength bounds an original file name, in characters.
	MaxFilenameLength = 200
	// chunkSize is the size of the values an attachment is kept in: far
	// below what one transaction of any backend holds, and what an upload
	// or a download has in memory at a time.
	chunkSize = 256 << 10
)

// attachmentTypes are the formats an attachment may have, by the
// extension of its file name, with the type it is answered with when the
// upload names none of its own.
var attachmentTypes = map[string]string{
	"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "pdf": "application/pdf", "txt": "text/plain",
}

// attachment is an uploaded file as stored.
type attachment struct {
	ID       string    `json:"id"`
	Owner    int64     `json:"owner"`
	SiteID   string    `json:"site_id"`
	Original string    `json:"original_filename"`
	Type     string    `json:"type"`
	Size     int64     `json:"size"`
	Chunks   int       `json:"chunks"`
	Created  time.Time `json:"created"`
	// Complete: every chunk is stored; an upload that stopped half way is
	// not, and goes with the expired ones.
	Complete bool `json:"complete"`
	// Packs are the conversations a message of which links it; linked,
	// it never expires.
	Packs []int64 `json:"packs,omitempty"`
}

func (a attachment) expiresMs() int64 { return a.Created.Add(AttachmentTTL).UnixMilli() }

// usable says whether the attachment may be linked or read at now.
func (a attachment) usable(now time.Time) bool {
	return a.Complete && (len(a.Packs) > 0 || now.Before(a.Created.Add(AttachmentTTL)))
}

func getAttachment(tx storage.Tx, id string) (attachment, bool, error) {
	var a attachment
	err := kv.GetJSON(tx, attachmentKey(id), &a)
	if errors.Is(err, storage.ErrNotFound) {
		return a, false, nil
	}
	if err != nil {
		return a, false, errs.Internalf(err, "read attachment %s", id)
	}
	return a, true, nil
}

// linkAttachments checks that caller may attach ids to a message of pack
// and links them: each must be caller's, complete and, if no message
// links it yet, less than AttachmentTTL old. Errors: *Error
// (unprocessable).
func (s *Service) linkAttachments(tx storage.Tx, caller, packID int64, ids []string, now time.Time) ([]attachmentRef, error) {
	if len(ids) == 0 {
		return nil, nil
	}
	keys := make([][]byte, len(ids))
	for i, id := range ids {
		keys[i] = attachmentKey(id)
	}
	if err := storage.Prefetch(tx, keys...); err != nil {
		return nil, err
	}
	var out []attachmentRef
	for _, id := range ids {
		a, ok, err := getAttachment(tx, id)
		if err != nil {
			return nil, err
		}
		if !ok || a.Owner != caller || !a.usable(now) {
			return nil, errUnprocessableAttachment()
		}
		if len(a.Packs) == 0 {
			if err := tx.Delete(expiryKey(a.expiresMs(), a.ID)); err != nil {
				return nil, err
			}
		}
		if !slices.Contains(a.Packs, packID) {
			a.Packs = append(a.Packs, packID)
			if err := kv.SetJSON(tx, attachmentKey(a.ID), a); err != nil {
				return nil, err
			}
		}
		out = append(out, attachmentRef{Filename: a.ID, Original: a.Original, Type: a.Type, Size: a.Size, Created: a.Created})
	}
	return out, nil
}

// Upload is a file sent by POST /messages/attachments.
type Upload struct {
	// SiteID is the site_id query parameter.
	SiteID string
	// Present: the request has a file part.
	Present bool
	// Filename is the file's original name, ContentType the type the
	// upload gives it ("" for none).
	Filename, ContentType string
	// Body is the file's bytes, read once, as they arrive.
	Body io.Reader
}

// AttachmentID is the answer of an upload.
type AttachmentID struct {
	ID string `json:"id"`
}

// Messages of the attachment rules.
const (
	msgFileEmpty    = "File attached is empty"
	msgFileSlash    = `File name cannot include characters like /, \`
	msgFileTooBig   = "File attachment is bigger than 25 Mb."
	msgSiteRequired = "The queryparam 'site_id' is required"
	msgFilenameLong = "The original_filename exceeded 200 character limit"
	msgFileFormat   = "The file format is not supported: the formats allowed are JPG, PNG, PDF and TXT"
	msgUnknownSite  = "Invalid site_id: '%s' is not a recognized site"
	msgNoAttachment = "The attachment %s was not found"
	// sweepPerUpload is how many expired attachments an upload deletes.
	sweepPerUpload = 4
)

// checkSite refuses a site_id that is missing or names no site. Errors:
// Invalid.
func checkSite(tx storage.Tx, siteID string) error {
	if siteID == "" {
		return invalid(msgSiteRequired)
	}
	if _, err := geo.GetSite(tx, siteID); err != nil {
		if errs.Is(err, errs.NotFound) {
			return invalid(fmt.Sprintf(msgUnknownSite, siteID))
		}
		return err
	}
	return nil
}

// checkUpload applies the rules on an upload's site and file name, and
// returns the extension and the type the file is kept with.
func checkUpload(in Upload) (ext, typ string, err error) {
	if !in.Present {
		return "", "", invalid(msgFileEmpty)
	}
	if strings.ContainsAny(in.Filename, `/\`) {
		return "", "", invalid(msgFileSlash)
	}
	if utf8.RuneCountInString(in.Filename) > MaxFilenameLength {
		return "", "", invalid(msgFilenameLong)
	}
	ext = strings.ToLower(strings.TrimPrefix(path.Ext(in.Filename), "."))
	typ, ok := attachmentTypes[ext]
	if !ok {
		return "", "", invalid(msgFileFormat)
	}
	// The type the upload names, when it is one of the formats: a
	// download answers with it.
	if mt, _, err := mime.ParseMediaType(in.ContentType); err == nil && slices.Contains(slices.Collect(maps.Values(attachmentTypes)), mt) &&
		len(in.ContentType) <= 100 && utf8.ValidString(in.ContentType) {
		typ = in.ContentType
	}
	return ext, typ, nil
}

// Upload keeps a file of caller for a message: at most 25 MB, a JPG, PNG,
// PDF or TXT by its name, with a name of at most 200 characters and no
// slash. Its bytes are read as they arrive and kept in the store in
// chunks, a transaction each, so that neither the upload nor the store
// holds the whole file in memory. A file no message links within
// AttachmentTTL is deleted (Sweep; each upload sweeps a few). Errors:
// Invalid (the spec's messages of 3.8).
func (s *Service) Upload(ctx context.Context, caller int64, in Upload) (AttachmentID, error) {
	if in.SiteID == "" {
		return AttachmentID{}, invalid(msgSiteRequired)
	}
	ext, typ, err := checkUpload(in)
	if err != nil {
		return AttachmentID{}, err
	}
	if err := s.store.View(ctx, func(tx storage.Tx) error { return checkSite(tx, in.SiteID) }); err != nil {
		return AttachmentID{}, err
	}
	buf := make([]byte, chunkSize)
	n, err := io.ReadFull(in.Body, buf)
	if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
		return AttachmentID{}, errs.Invalidf("The file could not be read: %v", err)
	}
	if n == 0 {
		return AttachmentID{}, invalid(msgFileEmpty)
	}
	q, err := s.store.Sequence(attachmentSequence)
	if err != nil {
		return AttachmentID{}, err
	}
	num, err := q.Next(ctx)
	if err != nil {
		return AttachmentID{}, err
	}
	now := s.clock.Now()
	a := attachment{ID: fmt.Sprintf("%d_%s.%s", caller, attachmentUUID(num), ext), Owner: caller, SiteID: in.SiteID,
		Original: in.Filename, Type: typ, Created: now}
	// The record comes first, not complete, with its expiry: an upload
	// that stops half way (the client's, or the process's end) leaves
	// chunks that the sweep finds by it.
	if err := s.store.Update(ctx, func(tx storage.Tx) error {
		if err := kv.SetJSON(tx, attachmentKey(a.ID), a); err != nil {
			return err
		}
		return tx.Set(expiryKey(a.expiresMs(), a.ID), nil)
	}); err != nil {
		return AttachmentID{}, err
	}
	fail := func(err error) (AttachmentID, error) {
		if derr := s.deleteAttachment(context.WithoutCancel(ctx), a.ID); derr != nil {
			return AttachmentID{}, errors.Join(err, derr)
		}
		return AttachmentID{}, err
	}
	for n > 0 {
		if a.Size+int64(n) > MaxAttachmentSize {
			return fail(invalid(msgFileTooBig))
		}
		chunk, at := buf[:n], a.Chunks
		if err := s.store.Update(ctx, func(tx storage.Tx) error { return tx.Set(chunkKey(a.ID, at), chunk) }); err != nil {
			return fail(err)
		}
		a.Size += int64(n)
		a.Chunks++
		n, err = io.ReadFull(in.Body, buf)
		if err != nil && !errors.Is(err, io.ErrUnexpectedEOF) && !errors.Is(err, io.EOF) {
			return fail(errs.Invalidf("The file could not be read: %v", err))
		}
	}
	a.Complete = true
	if err := s.store.Update(ctx, func(tx storage.Tx) error { return kv.SetJSON(tx, attachmentKey(a.ID), a) }); err != nil {
		return fail(err)
	}
	// Some of what expired goes with each upload: the uploads are what
	// makes it grow.
	if _, err := s.Sweep(ctx, sweepPerUpload); err != nil {
		return AttachmentID{}, err
	}
	return AttachmentID{ID: a.ID}, nil
}

// deleteAttachment removes attachment id, its chunks and its expiry.
func (s *Service) deleteAttachment(ctx context.Context, id string) error {
	if err := kv.DeleteRange(ctx, s.store, storage.Prefix(chunkPrefix(id))); err != nil {
		return err
	}
	return s.store.Update(ctx, func(tx storage.Tx) error {
		a, ok, err := getAttachment(tx, id)
		if err != nil || !ok {
			return err
		}
		if err := tx.Delete(expiryKey(a.expiresMs(), id)); err != nil {
			return err
		}
		return tx.Delete(attachmentKey(id))
	})
}

// Sweep deletes up to max attachments that no message linked within
// AttachmentTTL of their upload (and uploads that stopped half way), by
// the engine's clock, and returns how many it deleted.
func (s *Service) Sweep(ctx context.Context, max int) (int, error) {
	now := s.clock.Now()
	var due []string
	err := s.store.View(ctx, func(tx storage.Tx) error {
		prefix := expiryPrefix()
		it := tx.Iterate(storage.Range{Start: prefix, End: expiryKey(now.UnixMilli()+1, "")})
		defer it.Close()
		for ; it.Valid() && len(due) < max; it.Next() {
			r := keycodec.Read(it.Key()[len(prefix):])
			_ = r.Int()
			id := r.Str()
			if r.Err() == nil {
				due = append(due, id)
			}
		}
		return nil
	})
	if err != nil {
		return 0, err
	}
	for _, id := range due {
		if err := s.deleteAttachment(ctx, id); err != nil {
			return 0, err
		}
	}
	return len(due), nil
}

// AttachmentFile is an attachment to download.
type AttachmentFile struct {
	ID   string
	Type string
	Size int64
	// chunks is how many values hold its bytes.
	chunks int
}

// Attachment returns attachment id to caller: its uploader, or a party of
// a conversation whose message links it; siteID is the site_id query
// parameter. Errors: Invalid (site_id missing or unknown), NotFound (no
// such attachment for caller, or one expired).
func (s *Service) Attachment(ctx context.Context, caller int64, id, siteID string) (AttachmentFile, error) {
	now := s.clock.Now()
	var out AttachmentFile
	err := s.store.View(ctx, func(tx storage.Tx) error {
		if err := checkSite(tx, siteID); err != nil {
			return err
		}
		a, ok, err := getAttachment(tx, id)
		if err != nil {
			return err
		}
		if !ok || !a.usable(now) || !s.mayRead(tx, caller, a) {
			return errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf(msgNoAttachment, id))
		}
		out = AttachmentFile{ID: a.ID, Type: a.Type, Size: a.Size, chunks: a.Chunks}
		return nil
	})
	return out, err
}

// mayRead says whether caller may download a: its uploader, or a party of
// a conversation that links it.
func (s *Service) mayRead(tx storage.Tx, caller int64, a attachment) bool {
	if a.Owner == caller {
		return true
	}
	for _, packID := range a.Packs {
		c, err := getConversation(tx, packID)
		if err == nil && (c.SellerID == caller || c.BuyerID == caller) {
			return true
		}
	}
	return false
}

// CopyAttachment writes the bytes of f to w, a chunk at a time, each read
// in a transaction of its own: a slow reader holds no transaction open,
// and no more than a chunk is in memory. An attachment's bytes never
// change once complete.
func (s *Service) CopyAttachment(ctx context.Context, f AttachmentFile, w io.Writer) (int64, error) {
	var written int64
	for i := 0; i < f.chunks; i++ {
		var b []byte
		err := s.store.View(ctx, func(tx storage.Tx) error {
			var err error
			b, err = tx.Get(chunkKey(f.ID, i))
			return err
		})
		if err != nil {
			return written, errs.Internalf(err, "read chunk %d of attachment %s", i, f.ID)
		}
		n, err := w.Write(b)
		written += int64(n)
		if err != nil {
			return written, err
		}
	}
	return written, nil
}
