package httpapi

import (
	"bytes"
	"net/http"
	"strconv"

	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/internal/jsonenc"
)

// The most requested answers are encoded without reflection, into the same
// bytes encoding/json writes with HTML escaping off (as writeJSON sets it);
// tests hold each encoder to that over random values.

// writeEncoded answers status and the bytes enc appends, as writeJSON would.
func writeEncoded(w http.ResponseWriter, status int, enc func([]byte) []byte) {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	b := enc(buf.AvailableBuffer())
	buf.Write(b)
	buf.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// writeAppended answers status and the bytes enc appends, as writeEncoded
// does, unless enc fails: then nothing is written and the error is returned
// for the handler to answer.
func writeAppended(w http.ResponseWriter, status int, enc func([]byte) ([]byte, error)) error {
	buf := bufPool.Get().(*bytes.Buffer)
	buf.Reset()
	defer bufPool.Put(buf)
	b, err := enc(buf.AvailableBuffer())
	if err != nil {
		return err
	}
	buf.Write(b)
	buf.WriteByte('\n')
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
	return nil
}

// writeUserView answers a user record, whole or public, as writeJSON would.
func (s *Server) writeUserView(w http.ResponseWriter, v accounts.UserView) {
	switch u := v.(type) {
	case accounts.User:
		writeEncoded(w, http.StatusOK, func(b []byte) []byte { return appendUser(b, u) })
	case accounts.PublicUser:
		writeEncoded(w, http.StatusOK, func(b []byte) []byte { return appendPublicUser(b, u) })
	default:
		s.writeJSON(w, http.StatusOK, v)
	}
}

func appendUser(b []byte, u accounts.User) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"nickname":`...)
	b = jsonenc.AppendString(b, u.Nickname)
	b = append(b, `,"registration_date":`...)
	b = jsonenc.AppendString(b, u.RegistrationDate)
	b = append(b, `,"first_name":`...)
	b = jsonenc.AppendString(b, u.FirstName)
	b = append(b, `,"last_name":`...)
	b = jsonenc.AppendString(b, u.LastName)
	b = append(b, `,"gender":`...)
	b = jsonenc.AppendString(b, u.Gender)
	b = append(b, `,"country_id":`...)
	b = jsonenc.AppendString(b, u.CountryID)
	b = append(b, `,"site_id":`...)
	b = jsonenc.AppendString(b, u.SiteID)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, u.Tags)
	return append(b, '}')
}

func appendPublicUser(b []byte, u accounts.PublicUser) []byte {
	b = append(b, `{"id":`...)
	b = strconv.AppendInt(b, u.ID, 10)
	b = append(b, `,"nickname":`...)
	b = jsonenc.AppendString(b, u.Nickname)
	b = append(b, `,"registration_date":`...)
	b = jsonenc.AppendString(b, u.RegistrationDate)
	b = append(b, `,"country_id":`...)
	b = jsonenc.AppendString(b, u.CountryID)
	b = append(b, `,"site_id":`...)
	b = jsonenc.AppendString(b, u.SiteID)
	b = append(b, `,"tags":`...)
	b = appendStrings(b, u.Tags)
	return append(b, '}')
}

func appendStrings(b []byte, ss []string) []byte {
	if ss == nil {
		return append(b, "null"...)
	}
	b = append(b, '[')
	for i, s := range ss {
		if i > 0 {
			b = append(b, ',')
		}
		b = jsonenc.AppendString(b, s)
	}
	return append(b, ']')
}
