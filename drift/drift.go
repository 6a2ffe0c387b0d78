// Package drift compares recorded exchanges of the real API with the
// engine's contract, its OpenAPI document, and says where the engine
// drifts: a status a route never answers, a body that breaks the answer's
// schema (a type that differs, a required field that is missing, a value
// outside the document's list), fields the recorded answer has that ours
// never sends, and error answers whose code or message for their status
// differ from ours. Exchanges of routes the engine does not emulate are
// counted as candidates for stubs.
//
// It reads mappings in the stub format (WireMock's, one per file or a
// {"mappings": [...]} list, with bodies inline or in __files) and HAR 1.2
// files, one file and one exchange at a time, keeping only per-route
// aggregates: memory does not grow with the number of files. It runs
// offline, on files only. `marketplaced drift` is its command; the same
// Contract checks every answer of the project's HTTP tests
// (httpapi.Config.CheckResponse), so the engine's own exchanges never
// drift.
package drift

// Exchange is one recorded request and the answer to it.
type Exchange struct {
	// Method is the request's method (GET, POST, ...).
	Method string
	// URL is the request's URL: absolute, or a path with its query.
	URL string
	// Status is the answer's HTTP status.
	Status int
	// ContentType is the answer's Content-Type header, if any.
	ContentType string
	// Body is the answer's body; nil when the recording has none.
	Body []byte
	// NoBody says that the recording did not keep the body (a HAR entry
	// without content text): only the status is checked.
	NoBody bool
	// Source is the file the exchange was read from, and Entry its place
	// in the file (from 1; 0 for a file of one mapping), for the report's
	// examples.
	Source string
	Entry  int
}

// Kind names a kind of difference.
type Kind string

// The kinds of difference, in the order the report lists them.
const (
	// Status: the route never answers this status.
	Status Kind = "status"
	// Type: a value's JSON type is not the one the schema gives.
	Type Kind = "type"
	// Missing: a field the schema requires is not there.
	Missing Kind = "missing"
	// Extra: a field the engine never sends.
	Extra Kind = "extra"
	// Value: a value outside the schema's list of values (enum).
	Value Kind = "value"
	// ErrorCode: an error answer whose "error" code the engine never
	// answers with that status on the route.
	ErrorCode Kind = "error"
	// ErrorMessage: an error answer whose message is none of the engine's
	// for that status and code on the route.
	ErrorMessage Kind = "message"
	// Body: an answer that should be JSON and is not.
	Body Kind = "body"
)

var kindOrder = map[Kind]int{Status: 0, Body: 1, Type: 2, Missing: 3, Extra: 4, Value: 5, ErrorCode: 6, ErrorMessage: 7}

// Finding is one difference between an exchange and the contract.
type Finding struct {
	Kind Kind
	// Path is the JSON path of the value ($.shipping.logistic_type);
	// array elements are [*] and the entries of a map .*; "" for a status.
	Path string
	// Got is what the recording has there (a type, a value, an error
	// code), short; Want is what the engine's contract says.
	Got, Want string
}

// describe is the finding as a line of the report, without its path.
func (f Finding) describe() string {
	switch f.Kind {
	case Status:
		return "a status the route never answers (ours: " + f.Want + ")"
	case Body:
		return "the body is not JSON (" + f.Got + ")"
	case Type:
		return "the type is " + f.Got + ", ours " + f.Want
	case Missing:
		return "a required field is missing"
	case Extra:
		return "a field ours never sends"
	case Value:
		return "the value " + f.Got + " is not among ours (" + f.Want + ")"
	case ErrorCode:
		return "the error code " + f.Got + " is not ours for this status (ours: " + f.Want + ")"
	case ErrorMessage:
		return "the message " + f.Got + " is none of ours (" + f.Want + ")"
	}
	return string(f.Kind)
}

// String is the finding as one line: its path and what differs.
func (f Finding) String() string {
	at := f.Path
	if at == "" {
		at = "status " + f.Got
	}
	return at + ": " + f.describe()
}
