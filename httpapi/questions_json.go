package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strconv"
	"sync"

	"github.com/marketplace/marketplace/internal/jsonenc"
	"github.com/marketplace/marketplace/questions"
)

// The question search answers up to fifty questions a page, and encoding them
// through reflection cost more than finding them. These functions append the
// same bytes encoding/json gives (with HTML escaping off, as writeJSON sets
// it); a test holds them to that over random values.

// staticSearchTail is the constant end of every search envelope.
var staticSearchTail = sync.OnceValue(func() []byte {
	var buf bytes.Buffer
	buf.WriteString(`,"available_filters":`)
	mustEncode(&buf, questions.AvailableFilters)
	buf.WriteString(`,"available_sorts":`)
	mustEncode(&buf, questions.SortFields)
	return bytes.Clone(buf.Bytes())
})

// mustEncode appends v as encoding/json writes it, without the newline; v is
// one of the package's own constant values, which always encode.
func mustEncode(buf *bytes.Buffer, v any) {
	enc := json.NewEncoder(buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		panic(err)
	}
	buf.Truncate(buf.Len() - 1)
}

// writeSearchEnvelope answers e as writeJSON would.
func (s *Server) writeSearchEnvelope(w http.ResponseWriter, e searchEnvelope) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	b := appendSearchEnvelope(buf.AvailableBuffer(), e)
	buf.Write(b)
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write(buf.Bytes())
}

// writeQuestion answers one question as writeJSON would.
func writeQuestion(w http.ResponseWriter, status int, q questions.Question) {
	writeEncoded(w, status, func(b []byte) []byte { return appendQuestion(b, q) })
}

func appendSearchEnvelope(b []byte, e searchEnvelope) []byte {
	b = append(b, `{"total":`...)
	b = strconv.AppendInt(b, int64(e.Total), 10)
	b = append(b, `,"limit":`...)
	b = strconv.AppendInt(b, int64(e.Limit), 10)
	b = append(b, `,"questions":`...)
	if e.Questions == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, q := range e.Questions {
			if i > 0 {
				b = append(b, ',')
			}
			b = appendQuestion(b, q)
		}
		b = append(b, ']')
	}
	f := e.Filters
	b = append(b, `,"filters":{"limit":`...)
	b = strconv.AppendInt(b, int64(f.Limit), 10)
	b = append(b, `,"offset":`...)
	b = strconv.AppendInt(b, int64(f.Offset), 10)
	b = append(b, `,"api_version":`...)
	b = jsonenc.AppendString(b, f.APIVersion)
	b = append(b, `,"is_admin":`...)
	b = strconv.AppendBool(b, f.IsAdmin)
	b = append(b, `,"sorts":`...)
	if f.Sorts == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, '[')
		for i, srt := range f.Sorts {
			if i > 0 {
				b = append(b, ',')
			}
			b = append(b, `{"field":`...)
			b = jsonenc.AppendString(b, srt.Field)
			b = append(b, `,"type":`...)
			b = jsonenc.AppendString(b, srt.Type)
			b = append(b, '}')
		}
		b = append(b, ']')
	}
	b = append(b, `,"caller":`...)
	b = strconv.AppendInt(b, f.Caller, 10)
	if f.Item != "" {
		b = append(b, `,"item":`...)
		b = jsonenc.AppendString(b, f.Item)
	}
	b = append(b, '}')
	if sameSlice(e.AvailableFilters, questions.AvailableFilters) && sameSlice(e.AvailableSorts, questions.SortFields) {
		b = append(b, staticSearchTail()...)
	} else {
		var buf bytes.Buffer
		buf.WriteString(`,"available_filters":`)
		mustEncode(&buf, e.AvailableFilters)
		buf.WriteString(`,"available_sorts":`)
		mustEncode(&buf, e.AvailableSorts)
		b = append(b, buf.Bytes()...)
	}
	return append(b, "}\n"...)
}

// sameSlice reports whether a and b are the same slice, not merely equal.
func sameSlice[T any](a, b []T) bool {
	return len(a) > 0 && len(a) == len(b) && &a[0] == &b[0]
}

func appendQuestion(b []byte, q questions.Question) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, q.ID, 10)
	b = append(b, `,"seller_id":`...)
	b = strconv.AppendInt(b, q.SellerID, 10)
	b = append(b, `,"item_id":`...)
	b = jsonenc.AppendString(b, q.ItemID)
	b = append(b, `,"text":`...)
	b = jsonenc.AppendString(b, q.Text)
	b = append(b, `,"status":`...)
	b = jsonenc.AppendString(b, q.Status)
	b = append(b, `,"date_created":`...)
	b = jsonenc.AppendString(b, q.DateCreated)
	b = append(b, `,"deleted_from_listing":`...)
	b = strconv.AppendBool(b, q.DeletedFromListing)
	b = append(b, `,"hold":`...)
	b = strconv.AppendBool(b, q.Hold)
	if q.SuspectedSpam != nil {
		b = append(b, `,"suspected_spam":`...)
		b = strconv.AppendBool(b, *q.SuspectedSpam)
	}
	b = append(b, `,"answer":`...)
	if a := q.Answer; a == nil {
		b = append(b, "null"...)
	} else {
		b = append(b, `{"text":`...)
		b = jsonenc.AppendString(b, a.Text)
		b = append(b, `,"status":`...)
		b = jsonenc.AppendString(b, a.Status)
		b = append(b, `,"date_created":`...)
		b = jsonenc.AppendString(b, a.DateCreated)
		b = append(b, '}')
	}
	b = append(b, `,"from":{"id":`...)
	b = strconv.AppendInt(b, q.From.ID, 10)
	if q.From.AnsweredQuestions != nil {
		b = append(b, `,"answered_questions":`...)
		b = strconv.AppendInt(b, *q.From.AnsweredQuestions, 10)
	}
	b = append(b, '}')
	if d := q.Details; d != nil {
		b = append(b, `,"buyer_id":`...)
		b = strconv.AppendInt(b, d.BuyerID, 10)
		b = append(b, `,"last_updated":`...)
		b = jsonenc.AppendString(b, d.LastUpdated)
		b = append(b, `,"app_id":`...)
		if d.AppID == nil {
			b = append(b, "null"...)
		} else {
			b = strconv.AppendInt(b, *d.AppID, 10)
		}
	}
	return append(b, '}')
}
