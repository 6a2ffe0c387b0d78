package drift

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"mime"
	"os"
	"path/filepath"
	"regexp"
	"strings"
)

// A file is read as a stream of JSON tokens, each exchange decoded on its
// own and dropped once counted, so that a HAR file of a million entries
// costs the memory of one.

// errNotRecording is the error of a JSON file that is neither a mapping,
// a list of mappings nor a HAR file.
var errNotRecording = errors.New("neither a stub mapping, a {\"mappings\": [...]} list nor a HAR file")

// readFile calls fn with each exchange of the file at path, or with the
// reason it cannot be checked (a URL pattern, an entry without an answer).
// br is the buffer the file is read through, reused from file to file.
func readFile(path string, br *bufio.Reader, fn func(ex Exchange, skip string)) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer f.Close()
	br.Reset(f)
	dec := json.NewDecoder(br)
	if err := expectDelim(dec, '{'); err != nil {
		return errNotRecording
	}
	var single mapping
	var sawRequest, sawResponse, sawList bool
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		switch key {
		case "log":
			sawList = true
			if err := readHARLog(dec, path, fn); err != nil {
				return err
			}
		case "mappings":
			sawList = true
			if err := expectDelim(dec, '['); err != nil {
				return fmt.Errorf("mappings: %w", err)
			}
			for i := 0; dec.More(); i++ {
				var m mapping
				if err := dec.Decode(&m); err != nil {
					return fmt.Errorf("mappings[%d]: %w", i, err)
				}
				m.emit(path, i+1, fn)
			}
			if _, err := dec.Token(); err != nil {
				return err
			}
		case "request":
			sawRequest = true
			if err := dec.Decode(&single.Request); err != nil {
				return fmt.Errorf("request: %w", err)
			}
		case "response":
			sawResponse = true
			if err := dec.Decode(&single.Response); err != nil {
				return fmt.Errorf("response: %w", err)
			}
		default:
			if err := skipValue(dec); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil {
		return err
	}
	switch {
	case sawRequest && sawResponse:
		single.emit(path, 0, fn)
	case !sawList:
		return errNotRecording
	}
	return nil
}

func expectDelim(dec *json.Decoder, d json.Delim) error {
	tok, err := dec.Token()
	if err != nil {
		return err
	}
	if tok != d {
		return fmt.Errorf("%v where %v was expected", tok, d)
	}
	return nil
}

func skipValue(dec *json.Decoder) error {
	var raw json.RawMessage
	return dec.Decode(&raw)
}

// HAR 1.2: log.entries[].request and .response.
type harEntry struct {
	Request struct {
		Method string `json:"method"`
		URL    string `json:"url"`
	} `json:"request"`
	Response struct {
		Status  int `json:"status"`
		Headers []struct {
			Name  string `json:"name"`
			Value string `json:"value"`
		} `json:"headers"`
		Content struct {
			MimeType string  `json:"mimeType"`
			Text     *string `json:"text"`
			Encoding string  `json:"encoding"`
		} `json:"content"`
	} `json:"response"`
}

func readHARLog(dec *json.Decoder, path string, fn func(Exchange, string)) error {
	if err := expectDelim(dec, '{'); err != nil {
		return fmt.Errorf("log: %w", err)
	}
	for dec.More() {
		key, err := dec.Token()
		if err != nil {
			return err
		}
		if key != "entries" {
			if err := skipValue(dec); err != nil {
				return err
			}
			continue
		}
		if err := expectDelim(dec, '['); err != nil {
			return fmt.Errorf("log.entries: %w", err)
		}
		for i := 0; dec.More(); i++ {
			var e harEntry
			if err := dec.Decode(&e); err != nil {
				return fmt.Errorf("log.entries[%d]: %w", i, err)
			}
			ex := Exchange{Method: strings.ToUpper(e.Request.Method), URL: e.Request.URL, Status: e.Response.Status,
				ContentType: e.Response.Content.MimeType, Source: path, Entry: i + 1}
			for _, h := range e.Response.Headers {
				if strings.EqualFold(h.Name, "Content-Type") {
					ex.ContentType = h.Value
				}
			}
			skip := ""
			switch c := e.Response.Content; {
			case ex.Status == 0:
				// Browsers record a request that got no answer with status 0.
				skip = "no answer was recorded"
			case c.Text == nil:
				ex.NoBody = true
			case c.Encoding == "base64":
				b, err := base64.StdEncoding.DecodeString(*c.Text)
				if err != nil {
					skip = "its body is not valid base64"
				}
				ex.Body = b
			default:
				ex.Body = []byte(*c.Text)
			}
			fn(ex, skip)
		}
		if _, err := dec.Token(); err != nil {
			return err
		}
	}
	_, err := dec.Token()
	return err
}

// mapping is a stub mapping in WireMock's format, read leniently: what
// WireMock and other tools add beside the request and the response is
// ignored.
type mapping struct {
	Request struct {
		Method          string  `json:"method"`
		URL             *string `json:"url"`
		URLPath         *string `json:"urlPath"`
		URLPattern      *string `json:"urlPattern"`
		URLPathPattern  *string `json:"urlPathPattern"`
		URLPathTemplate *string `json:"urlPathTemplate"`
	} `json:"request"`
	Response struct {
		Status       int                        `json:"status"`
		Headers      map[string]json.RawMessage `json:"headers"`
		Body         *string                    `json:"body"`
		JSONBody     json.RawMessage            `json:"jsonBody"`
		Base64Body   *string                    `json:"base64Body"`
		BodyFileName *string                    `json:"bodyFileName"`
	} `json:"response"`
}

// templateParam is a {name} segment of a urlPathTemplate.
var templateParam = regexp.MustCompile(`\{[^/{}]+\}`)

// emit calls fn with the mapping's exchange; file is the mapping's file,
// whose folder's sibling __files holds the bodies it names (WireMock's
// layout: mappings/ and __files/ side by side).
func (m *mapping) emit(file string, entry int, fn func(Exchange, string)) {
	r, resp := &m.Request, &m.Response
	ex := Exchange{Method: strings.ToUpper(r.Method), Status: resp.Status, Source: file, Entry: entry}
	if ex.Status == 0 {
		ex.Status = 200
	}
	skip := ""
	switch {
	case r.URL != nil:
		ex.URL = *r.URL
	case r.URLPath != nil:
		ex.URL = *r.URLPath
	case r.URLPathTemplate != nil:
		// A parameter of the template is no literal segment of a route:
		// NUL never is.
		ex.URL = templateParam.ReplaceAllString(*r.URLPathTemplate, "%00")
	case r.URLPattern != nil || r.URLPathPattern != nil:
		p := r.URLPattern
		if p == nil {
			p = r.URLPathPattern
		}
		re, err := regexp.Compile(*p)
		lit, complete := "", false
		if err == nil {
			lit, complete = re.LiteralPrefix()
		}
		if !complete {
			skip = "its URL is a regular expression"
		}
		ex.URL = lit
	default:
		skip = "it matches every URL"
	}
	if ex.Method == "" || ex.Method == "ANY" {
		skip = "it matches every method"
	}
	for name, v := range resp.Headers {
		if strings.EqualFold(name, "Content-Type") {
			var one string
			var many []string
			if json.Unmarshal(v, &one) == nil {
				ex.ContentType = one
			} else if json.Unmarshal(v, &many) == nil && len(many) > 0 {
				ex.ContentType = many[0]
			}
		}
	}
	switch {
	case resp.JSONBody != nil:
		ex.Body = resp.JSONBody
		if ex.ContentType == "" {
			ex.ContentType = "application/json"
		}
	case resp.Body != nil:
		ex.Body = []byte(*resp.Body)
	case resp.Base64Body != nil:
		b, err := base64.StdEncoding.DecodeString(*resp.Base64Body)
		if err != nil && skip == "" {
			skip = "its base64Body is not valid base64"
		}
		ex.Body = b
	case resp.BodyFileName != nil:
		b, err := readBodyFile(file, *resp.BodyFileName)
		if err != nil && skip == "" {
			skip = "its bodyFileName cannot be read"
		}
		ex.Body = b
		if ex.ContentType == "" {
			if mt := mime.TypeByExtension(filepath.Ext(*resp.BodyFileName)); mt != "" {
				ex.ContentType = mt
			}
		}
	}
	fn(ex, skip)
}

// readBodyFile reads a mapping's bodyFileName from the __files folder
// beside the mapping's folder, or in it.
func readBodyFile(mappingFile, name string) ([]byte, error) {
	if !filepath.IsLocal(filepath.FromSlash(name)) {
		return nil, fmt.Errorf("bodyFileName %s leaves the __files folder", name)
	}
	dir := filepath.Dir(mappingFile)
	var firstErr error
	for _, d := range []string{filepath.Join(filepath.Dir(dir), "__files"), filepath.Join(dir, "__files")} {
		b, err := os.ReadFile(filepath.Join(d, filepath.FromSlash(name)))
		if err == nil {
			return b, nil
		}
		if firstErr == nil {
			firstErr = err
		}
	}
	return nil, firstErr
}

// files calls fn with each file a path names: itself, or the *.json and
// *.har files under a folder, __files folders left out (the bodies that
// mappings name). A folder is read a batch of entries at a time, in the
// order the file system gives, so that a folder of a million recordings
// costs no more memory than one of ten: the report does not depend on the
// order.
func files(path string, fn func(file string)) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		fn(path)
		return nil
	}
	d, err := os.Open(path)
	if err != nil {
		return err
	}
	defer d.Close()
	for {
		entries, err := d.ReadDir(256)
		for _, e := range entries {
			p := filepath.Join(path, e.Name())
			switch {
			case e.IsDir():
				if e.Name() == "__files" {
					continue
				}
				if err := files(p, fn); err != nil {
					return err
				}
			case e.Type().IsRegular() || e.Type()&fs.ModeSymlink != 0:
				switch strings.ToLower(filepath.Ext(p)) {
				case ".json", ".har":
					fn(p)
				}
			}
		}
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
	}
}
