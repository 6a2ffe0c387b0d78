package claims

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/kv"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage"
)

// MaxFileSize bounds an uploaded file: 5 MB.
const MaxFileSize = 5 << 20

// maxFileName bounds the name of an uploaded file.
const maxFileName = 125

// File kinds: what a file is uploaded for.
const (
	// FileMessage: an attachment of a claim message (POST
	// .../attachments).
	FileMessage = kindMessage
	// FileEvidence: a file of a shipping evidence (POST
	// .../attachments-evidences).
	FileEvidence = kindEvidence
	// FileReturn: a file of a return review (POST .../returns/attachments).
	FileReturn = kindReturn
)

// fileTypes are the files a claim takes, by extension.
var fileTypes = map[string]string{"jpg": "image/jpeg", "jpeg": "image/jpeg", "png": "image/png", "pdf": "application/pdf"}

// fileRecord is an uploaded file's metadata; its bytes are in pieces of
// their own keys.
type fileRecord struct {
	Name     string `json:"name"`
	Original string `json:"original"`
	Type     string `json:"type"`
	Size     int64  `json:"size"`
	UserID   int64  `json:"user_id"`
	AtMs     int64  `json:"at_ms"`
	Pieces   int64  `json:"pieces"`
}

// Uploaded is what an upload answers: who uploaded, and the file's name in
// the claim.
type Uploaded struct {
	UserID int64
	Name   string
}

// AddFile stores file f that caller uploads to claim id for kind
// (FileMessage, FileEvidence, FileReturn) and returns the name the claim
// knows it by: {uuid}_{user}.{ext} for messages and evidences,
// {user}_{uuid}.{ext} for returns, as the public API names them. A file is
// a JPG, PNG or PDF of at most 5 MB whose name has at most 125 characters
// of a-z, A-Z, 0-9, '.', '_' and '-'. Any player uploads a message's file;
// evidences and return reviews are the seller's.
// Errors: Invalid (the file), NotFound, Forbidden; for returns, in the
// words of their routes (variant C).
func (s *Service) AddFile(ctx context.Context, caller, id int64, kind string, f Upload) (Uploaded, error) {
	ext, err := checkFile(kind, id, f)
	if err != nil {
		return Uploaded{}, err
	}
	now := s.clock.Now()
	name := uuid.NewString() + "_" + itoa(caller) + "." + ext
	if kind == kindReturn {
		name = itoa(caller) + "_" + uuid.NewString() + "." + ext
	}
	err = s.store.Update(ctx, func(tx storage.Tx) error {
		r, err := getRecord(tx, id)
		if err != nil {
			if kind == kindReturn && errs.Is(err, errs.NotFound) {
				return errClaimNotFoundC(id)
			}
			return err
		}
		role := r.roleOf(caller)
		switch {
		case kind == kindReturn && role != RoleRespondent:
			return errRoleC(caller, id)
		case role == "", kind == kindEvidence && role != RoleRespondent:
			return errForbidden()
		}
		rec := fileRecord{Name: name, Original: f.Name, Type: fileTypes[ext], Size: int64(len(f.Data)), UserID: caller, AtMs: now.UnixMilli()}
		for i := 0; i*blobPiece < len(f.Data) || i == 0; i++ {
			end := min((i+1)*blobPiece, len(f.Data))
			if err := tx.Set(blobKey(id, kind, name, int64(i)), f.Data[i*blobPiece:end]); err != nil {
				return err
			}
			rec.Pieces++
		}
		return kv.SetJSON(tx, fileKey(id, kind, name), rec)
	})
	if err != nil {
		return Uploaded{}, err
	}
	return Uploaded{UserID: caller, Name: name}, nil
}

// checkFile checks an upload in a fixed order and returns its extension.
func checkFile(kind string, id int64, f Upload) (string, error) {
	ext := strings.ToLower(strings.TrimPrefix(path.Ext(f.Name), "."))
	if kind == kindReturn {
		switch {
		case len(f.Data) == 0:
			return "", errs.WithCode(errs.Invalid, "bad_request_error", fmt.Sprintf("Error retrieving uploaded file. claim_id: %d", id))
		case !validFileName(f.Name):
			return "", errs.WithCode(errs.Invalid, "bad_request_error", "Invalid file_name: "+f.Name)
		case fileTypes[ext] == "":
			return "", errs.WithCode(errs.Invalid, "bad_request_error", "Invalid mime_type")
		case len(f.Data) > MaxFileSize:
			return "", errs.WithCode(errs.Invalid, "bad_request_error", "File attachment is bigger than 5 Mb.")
		}
		return ext, nil
	}
	switch {
	case len(f.Data) == 0:
		return "", errs.Invalidf("File attached is empty")
	case !validFileName(f.Name):
		return "", errs.Invalidf("Invalid file name: it must have at most 125 characters of a-z, A-Z, 0-9, '.', '_' and '-'")
	case fileTypes[ext] == "":
		return "", errs.Invalidf("Invalid file type: only JPG, PNG and PDF files are allowed")
	case len(f.Data) > MaxFileSize:
		return "", errs.Invalidf("File attachment is bigger than 5 Mb.")
	}
	return ext, nil
}

func validFileName(name string) bool {
	if name == "" || len(name) > maxFileName {
		return false
	}
	for _, c := range name {
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return false
		}
	}
	return true
}

// errFileNotFound answers a file the claim does not have.
func errFileNotFound(id int64, name string) error {
	return errs.WithCode(errs.NotFound, "not_found", fmt.Sprintf("Attachment not found [claim: %d - fileName: %s]", id, name))
}

func getFile(tx storage.Tx, id int64, kind, name string) (fileRecord, error) {
	var f fileRecord
	err := kv.GetJSON(tx, fileKey(id, kind, name), &f)
	if errors.Is(err, storage.ErrNotFound) {
		return f, errFileNotFound(id, name)
	}
	if err != nil {
		return f, errs.Internalf(err, "read file %s of claim %d", name, id)
	}
	return f, nil
}

// File returns the metadata of file name of kind of claim id, to a player.
// Its date is the site's local time without offset, as the public API
// writes it. Errors: NotFound (the claim, the file), Forbidden.
func (s *Service) File(ctx context.Context, caller, id int64, kind, name string) (FileInfo, error) {
	var out FileInfo
	err := s.readWith(ctx, caller, id, [][]byte{fileKey(id, kind, name)}, func(tx storage.Tx, r *record, _ []actionRecord) error {
		f, err := getFile(tx, id, kind, name)
		if err != nil {
			return err
		}
		out = s.fileInfo(tx, r, f)
		return nil
	})
	return out, err
}

func (s *Service) fileInfo(tx storage.Tx, r *record, f fileRecord) FileInfo {
	local := s.stamp(tx, r, f.AtMs)
	if t, err := time.Parse(sales.TimeLayout, local); err == nil {
		local = t.Format("2006-01-02T15:04:05")
	}
	return FileInfo{Filename: f.Name, OriginalFilename: f.Original, Size: f.Size, DateCreated: local, Type: f.Type}
}

// FileData returns file name of kind of claim id with its bytes, to a
// player. Errors: NotFound, Forbidden.
func (s *Service) FileData(ctx context.Context, caller, id int64, kind, name string) (FileInfo, []byte, error) {
	var out FileInfo
	var data []byte
	// The claim, the file's metadata and as many pieces as the largest
	// file has are read at once: pieces a smaller file lacks cost nothing.
	keys := [][]byte{fileKey(id, kind, name)}
	for i := range int64(MaxFileSize/blobPiece + 1) {
		keys = append(keys, blobKey(id, kind, name, i))
	}
	err := s.readWith(ctx, caller, id, keys, func(tx storage.Tx, r *record, _ []actionRecord) error {
		f, err := getFile(tx, id, kind, name)
		if err != nil {
			return err
		}
		out = s.fileInfo(tx, r, f)
		data = make([]byte, 0, f.Size)
		for i := range f.Pieces {
			b, err := tx.Get(blobKey(id, kind, name, i))
			if err != nil {
				return errs.Internalf(err, "piece %d of file %s of claim %d", i, name, id)
			}
			data = append(data, b...)
		}
		return nil
	})
	return out, data, err
}

// messageFiles reads the metadata of the files a message of caller names,
// in tx. Errors: Invalid ("Attachment not found ...": a file the claim
// does not have, or another user's).
func (s *Service) messageFiles(tx storage.Tx, r *record, caller int64, kind string, names []string, errOf func(name string) error) ([]fileRecord, error) {
	out := make([]fileRecord, 0, len(names))
	for _, n := range names {
		f, err := getFile(tx, r.ID, kind, n)
		if errs.Is(err, errs.NotFound) || (err == nil && f.UserID != caller) {
			return nil, errOf(n)
		}
		if err != nil {
			return nil, err
		}
		out = append(out, f)
	}
	return out, nil
}
