package messages_test

import (
	"bytes"
	"crypto/sha256"
	"errors"
	"io"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/keycodec"
	"github.com/marketplace/marketplace/messages"
	"github.com/marketplace/marketplace/storage"
)

// pattern is a reader of n bytes that are not all alike, made as they are
// read: a large file without its bytes in memory.
type pattern struct{ n, off int64 }

func (p *pattern) Read(b []byte) (int, error) {
	if p.off >= p.n {
		return 0, io.EOF
	}
	k := min(int64(len(b)), p.n-p.off)
	for i := range k {
		b[i] = byte((p.off + i) * 7 % 251)
	}
	p.off += k
	return int(k), nil
}

func (e *env) upload(owner int64, name string, body io.Reader) (string, error) {
	a, err := e.msg.Upload(ctx, owner, messages.Upload{SiteID: "MLA", Present: true, Filename: name, Body: body})
	return a.ID, err
}

func (e *env) download(caller int64, id string) ([]byte, messages.AttachmentFile, error) {
	f, err := e.msg.Attachment(ctx, caller, id, "MLA")
	if err != nil {
		return nil, f, err
	}
	var b bytes.Buffer
	n, err := e.msg.CopyAttachment(ctx, f, &b)
	if err == nil && n != f.Size {
		err = errors.New("short copy")
	}
	return b.Bytes(), f, err
}

// chunks counts the stored chunks of every attachment.
func (e *env) chunks() int {
	e.tb.Helper()
	n := 0
	err := e.store.View(ctx, func(tx storage.Tx) error {
		it := tx.Iterate(storage.Prefix(keycodec.New("msg/attc")))
		defer it.Close()
		for ; it.Valid(); it.Next() {
			n++
		}
		return nil
	})
	if err != nil {
		e.tb.Fatalf("count chunks: %v", err)
	}
	return n
}

var attachmentID = regexp.MustCompile(`^[0-9]+_[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\.pdf$`)

func TestUpload_TheBytesAreKeptInChunksAndReadBackWhole(t *testing.T) {
	e := newEnv(t)
	const size = 600 << 10
	id, err := e.upload(e.buyer, "Factura.PDF", &pattern{n: size})
	if err != nil {
		t.Fatal(err)
	}
	if !attachmentID.MatchString(id) || !strings.HasPrefix(id, itoa(e.buyer)+"_") {
		t.Fatalf("id %q is not {user_id}_{uuid}.{ext}", id)
	}
	if n := e.chunks(); n != 3 {
		t.Fatalf("%d chunks for 600 KiB, want 3 of 256 KiB", n)
	}
	b, f, err := e.download(e.buyer, id)
	if err != nil {
		t.Fatal(err)
	}
	want, _ := io.ReadAll(&pattern{n: size})
	if sha256.Sum256(b) != sha256.Sum256(want) || f.Type != "application/pdf" || f.Size != size {
		t.Fatalf("read back %d bytes of type %s", len(b), f.Type)
	}
}

func TestUpload_TheTypeGivenByTheUploadIsKept(t *testing.T) {
	e := newEnv(t)
	a, err := e.msg.Upload(ctx, e.buyer, messages.Upload{SiteID: "MLA", Present: true, Filename: "foto.png", ContentType: "image/png; q=1",
		Body: strings.NewReader("png")})
	if err != nil {
		t.Fatal(err)
	}
	if _, f, err := e.download(e.buyer, a.ID); err != nil || f.Type != "image/png; q=1" {
		t.Fatalf("type %q %v", f.Type, err)
	}
}

func TestUpload_TheSpecsLimits(t *testing.T) {
	e := newEnv(t)
	up := func(in messages.Upload) error {
		if in.Body == nil {
			in.Body = strings.NewReader("x")
		}
		_, err := e.msg.Upload(ctx, e.buyer, in)
		return err
	}
	wantErr(t, up(messages.Upload{Present: true, Filename: "a.txt"}), errs.Invalid, "The queryparam 'site_id' is required")
	wantErr(t, up(messages.Upload{SiteID: "XYZ", Present: true, Filename: "a.txt"}), errs.Invalid, "Invalid site_id: 'XYZ' is not a recognized site")
	wantErr(t, up(messages.Upload{SiteID: "MLA"}), errs.Invalid, "File attached is empty")
	wantErr(t, up(messages.Upload{SiteID: "MLA", Present: true, Filename: "a.txt", Body: strings.NewReader("")}), errs.Invalid, "File attached is empty")
	wantErr(t, up(messages.Upload{SiteID: "MLA", Present: true, Filename: `a\b.txt`}), errs.Invalid, `File name cannot include characters like /, \`)
	wantErr(t, up(messages.Upload{SiteID: "MLA", Present: true, Filename: "a/b.txt"}), errs.Invalid, `File name cannot include characters like /, \`)
	wantErr(t, up(messages.Upload{SiteID: "MLA", Present: true, Filename: strings.Repeat("ñ", 197) + ".txt"}), errs.Invalid, "The original_filename exceeded 200 character limit")
	wantErr(t, up(messages.Upload{SiteID: "MLA", Present: true, Filename: "a.exe"}), errs.Invalid, "The file format is not supported: the formats allowed are JPG, PNG, PDF and TXT")
	if err := up(messages.Upload{SiteID: "MLA", Present: true, Filename: strings.Repeat("ñ", 196) + ".txt"}); err != nil {
		t.Fatalf("a name of 200 characters: %v", err)
	}
	chunksBefore := e.chunks()
	wantErr(t, up(messages.Upload{SiteID: "MLA", Present: true, Filename: "big.jpg", Body: &pattern{n: messages.MaxAttachmentSize + 1}}),
		errs.Invalid, "File attachment is bigger than 25 Mb.")
	if n := e.chunks(); n != chunksBefore {
		t.Fatalf("a refused upload left %d chunks", n-chunksBefore)
	}
	if err := up(messages.Upload{SiteID: "MLA", Present: true, Filename: "max.jpg", Body: &pattern{n: messages.MaxAttachmentSize}}); err != nil {
		t.Fatalf("25 MB exactly: %v", err)
	}
}

func TestAttachments_AnUnlinkedAttachmentExpiresAfter48HoursAndALinkedOneStays(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	linked, err := e.upload(e.buyer, "a.jpg", &pattern{n: 10})
	if err != nil {
		t.Fatal(err)
	}
	loose, err := e.upload(e.buyer, "b.jpg", &pattern{n: 300 << 10})
	if err != nil {
		t.Fatal(err)
	}
	m := e.mustSend(o, e.buyer, "fotos", linked)
	if len(m.Attachments) != 1 || m.Attachments[0].Filename != linked || m.Attachments[0].OriginalFilename != "a.jpg" ||
		m.Attachments[0].Type != "image/jpeg" || m.Attachments[0].Size != 10 {
		t.Fatalf("attachments = %+v", m.Attachments)
	}
	e.clock.Advance(messages.AttachmentTTL)
	_, err = e.send(o, e.buyer, "tarde", loose)
	var me *messages.Error
	if !errors.As(err, &me) || !me.Unprocessable || me.Err.Message != "Attachment key is invalid or not found" {
		t.Fatalf("an expired attachment: %v", err)
	}
	if _, _, err := e.download(e.buyer, loose); !errs.Is(err, errs.NotFound) {
		t.Fatalf("an expired attachment is read: %v", err)
	}
	if n, err := e.msg.Sweep(ctx, 10); err != nil || n != 1 {
		t.Fatalf("sweep deleted %d: %v", n, err)
	}
	if n := e.chunks(); n != 1 {
		t.Fatalf("%d chunks left, want the linked one's", n)
	}
	// The seller, the linked attachment's other party, reads it.
	if b, _, err := e.download(e.seller, linked); err != nil || len(b) != 10 {
		t.Fatalf("the linked attachment: %d bytes, %v", len(b), err)
	}
	if _, _, err := e.download(e.other, linked); !errs.Is(err, errs.NotFound) {
		t.Fatalf("a stranger reads it: %v", err)
	}
}

func TestAttachments_OnlyTheUploaderAttachesItsFile(t *testing.T) {
	e := newEnv(t)
	o := e.paid()
	id, err := e.upload(e.other, "a.txt", strings.NewReader("hola"))
	if err != nil {
		t.Fatal(err)
	}
	for _, att := range []string{id, "1_nope.txt"} {
		_, err = e.send(o, e.buyer, "mirá", att)
		var me *messages.Error
		if !errors.As(err, &me) || !me.Unprocessable {
			t.Fatalf("%s: %v", att, err)
		}
	}
	if _, _, err := e.download(e.buyer, id); !errs.Is(err, errs.NotFound) {
		t.Fatalf("another user's upload is read: %v", err)
	}
	e.clock.Advance(time.Minute)
}
