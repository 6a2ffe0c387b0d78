package drift

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// errorEntry is one error answer of an operation's (or the document's)
// x-errors list: a status, an error code and the message, a template in
// which each {name} stands for any text (an id, a value from the request).
type errorEntry struct {
	status  int
	code    string
	message string
	re      *regexp.Regexp
}

// placeholder is a {name} of a message template.
var placeholder = regexp.MustCompile(`\{[a-z_][a-z0-9_.\[\]]*\}`)

// readErrors reads an x-errors list: [{status, error, message}, ...].
func readErrors(raw json.RawMessage) ([]errorEntry, error) {
	if raw == nil {
		return nil, nil
	}
	var list []struct {
		Status  *int    `json:"status"`
		Error   *string `json:"error"`
		Message *string `json:"message"`
	}
	if err := json.Unmarshal(raw, &list); err != nil {
		return nil, err
	}
	out := make([]errorEntry, 0, len(list))
	for i, e := range list {
		if e.Status == nil || e.Error == nil || e.Message == nil {
			return nil, fmt.Errorf("entry %d: status, error and message are required", i)
		}
		if *e.Status < 400 || *e.Status > 599 {
			return nil, fmt.Errorf("entry %d: status %d is not an error status", i, *e.Status)
		}
		out = append(out, errorEntry{status: *e.Status, code: *e.Error, message: *e.Message, re: templateRegexp(*e.Message)})
	}
	return out, nil
}

// templateRegexp matches the messages a template stands for.
func templateRegexp(tmpl string) *regexp.Regexp {
	var b strings.Builder
	b.WriteString(`(?s)\A`)
	last := 0
	for _, m := range placeholder.FindAllStringIndex(tmpl, -1) {
		b.WriteString(regexp.QuoteMeta(tmpl[last:m[0]]))
		b.WriteString(`.*?`)
		last = m[1]
	}
	b.WriteString(regexp.QuoteMeta(tmpl[last:]))
	b.WriteString(`\z`)
	return regexp.MustCompile(b.String())
}

// checkError compares the code and message of an error answer with the
// operation's and the document's lists for its status. A message is also
// the engine's when another route lists it with the same status and code.
func (c *Contract) checkError(op *operation, status int, body map[string]any, w *walker) {
	code, _ := body["error"].(string)
	msg, _ := body["message"].(string)
	var codes []string
	var templates []string
	codeKnown, matched := false, false
	for _, l := range [][]errorEntry{op.errors, c.common} {
		for _, e := range l {
			if e.status != status {
				continue
			}
			codes = append(codes, e.code)
			if e.code != code {
				continue
			}
			codeKnown = true
			templates = append(templates, e.message)
			if e.re.MatchString(msg) {
				matched = true
			}
		}
	}
	if codeKnown && !matched {
		for _, e := range c.anyRoute {
			if e.status == status && e.code == code && e.re.MatchString(msg) {
				matched = true
				break
			}
		}
	}
	switch {
	case len(codes) == 0:
		// A status the list does not have: the status finding says it.
	case !codeKnown:
		slices.Sort(codes)
		w.add(Finding{Kind: ErrorCode, Path: "$.error", Got: strconv.Quote(short(code)), Want: strings.Join(slices.Compact(codes), ", ")})
	case !matched:
		w.add(Finding{Kind: ErrorMessage, Path: "$.message", Got: strconv.Quote(short(msg)), Want: short(strings.Join(templates, " | "))})
	}
}
