package httpapi

import (
	"bytes"
	"encoding/json"
	"net/http"
	"net/url"
	"strconv"
	"unicode/utf8"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/questions"
)

// handleQuestionOrSearch answers GET /questions/search and
// GET /questions/:question_id: the one place where the name "search" is told
// apart from a question id.
func (s *Server) handleQuestionOrSearch(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if p.ByName("question_id") == "search" {
		return s.handleSearchQuestions(w, r, caller)
	}
	return s.handleGetQuestion(w, r, p, caller)
}

// handleGetQuestion answers GET /questions/:question_id[?api_version=4].
func (s *Server) handleGetQuestion(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := questions.ParseID(p.ByName("question_id"))
	if err != nil {
		return err
	}
	v, err := questions.ParseAPIVersion(r.URL.Query().Get("api_version"))
	if err != nil {
		return err
	}
	q, err := s.m.Questions.Question(r.Context(), caller, id, v == 4)
	if err != nil {
		return err
	}
	writeQuestion(w, http.StatusOK, q)
	return nil
}

// searchFilters is the filters object of the search envelope.
type searchFilters struct {
	Limit      int              `json:"limit"`
	Offset     int              `json:"offset"`
	APIVersion string           `json:"api_version"`
	IsAdmin    bool             `json:"is_admin"`
	Sorts      []questions.Sort `json:"sorts"`
	Caller     int64            `json:"caller"`
	Item       string           `json:"item,omitempty"`
}

// searchEnvelope is the answer of GET /questions/search.
type searchEnvelope struct {
	Total            int                  `json:"total"`
	Limit            int                  `json:"limit"`
	Questions        []questions.Question `json:"questions"`
	Filters          searchFilters        `json:"filters"`
	AvailableFilters []questions.Filter   `json:"available_filters"`
	AvailableSorts   []string             `json:"available_sorts"`
}

func queryID(q url.Values, name string) (int64, error) {
	raw := q.Get(name)
	if raw == "" {
		return 0, nil
	}
	n, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || n <= 0 {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a positive integer", name, raw)
	}
	return n, nil
}

// handleSearchQuestions answers GET /questions/search.
func (s *Server) handleSearchQuestions(w http.ResponseWriter, r *http.Request, caller int64) error {
	qv := r.URL.Query()
	pg, err := readPageOf(qv, defaultLimit)
	if err != nil {
		return err
	}
	v, err := questions.ParseAPIVersion(qv.Get("api_version"))
	if err != nil {
		return err
	}
	sorts, err := questions.ParseSorts(qv.Get("sort_fields"), qv.Get("sort_types"))
	if err != nil {
		return err
	}
	q := questions.SearchQuery{ItemID: qv.Get("item"), Status: qv.Get("status"), Sorts: sorts,
		Offset: pg.Offset, Limit: pg.Limit, V4: v == 4}
	if q.ItemID == "" {
		q.ItemID = qv.Get("item_id")
	}
	if q.SellerID, err = queryID(qv, "seller_id"); err != nil {
		return err
	}
	if q.SellerID == 0 {
		// "seller" is the id available_filters gives the seller filter.
		if q.SellerID, err = queryID(qv, "seller"); err != nil {
			return err
		}
	}
	if q.SellerID != 0 && caller == 0 {
		// A seller's questions are for the seller's token only: an
		// anonymous call lacks the token rather than the right.
		return errNoToken
	}
	if q.From, err = queryID(qv, "from"); err != nil {
		return err
	}
	for _, f := range [...]struct {
		name string
		dst  *int64
	}{{"totalDivisions", &q.TotalDivisions}, {"division", &q.Division}} {
		name, dst := f.name, f.dst
		if raw := qv.Get(name); raw != "" {
			n, err := strconv.ParseInt(raw, 10, 64)
			if err != nil {
				return errs.Invalidf("Invalid %s: %s. It must be a non-negative integer", name, raw)
			}
			*dst = n
		}
	}
	res, err := s.m.Questions.Search(r.Context(), caller, q)
	if err != nil {
		return err
	}
	s.writeSearchEnvelope(w, searchEnvelope{
		Total: res.Total, Limit: pg.Limit, Questions: res.Questions,
		Filters: searchFilters{Limit: pg.Limit, Offset: pg.Offset, APIVersion: strconv.Itoa(v),
			Sorts: sorts, Caller: caller, Item: q.ItemID},
		AvailableFilters: questions.AvailableFilters,
		AvailableSorts:   questions.SortFields,
	})
	return nil
}

// decodeAttributes reads a JSON object body as its attributes, for the
// bodies whose valid attributes the questions rules check. A body that is
// empty, not JSON at all, or JSON that is not an object (an array, a string,
// null) has none of the valid attributes, so it reaches those rules as an
// empty object and gets their invalid_post_body answer ("Invalid JSON. Valid
// attributes are: ..."), which is the spec's error for such a body, rather
// than a decoding message. Only a body over the size limit keeps its 413.
func decodeAttributes(r *http.Request) (map[string]json.RawMessage, error) {
	b, err := readBody(r)
	if err != nil {
		return nil, err
	}
	return attributesOf(b), nil
}

// attributesOf decodes body b as decodeAttributes does.
func attributesOf(b []byte) map[string]json.RawMessage {
	fields := map[string]json.RawMessage{}
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fields
	}
	// Unmarshal refuses trailing data after the object, as a second value
	// would be.
	if err := json.Unmarshal(trimmed, &fields); err != nil {
		return map[string]json.RawMessage{}
	}
	return fields
}

// plainAsk reads the usual body of an ask, an object of exactly text and
// item_id as strings with no escapes and no control characters, without
// the attribute map and the reflection of the general path, which is a
// good part of an ask's allocations. It reads what questions.ParseAsk
// would; for any other body it returns false, and the general path gives
// that body its answer.
func plainAsk(b []byte) (in questions.AskInput, ok bool) {
	i := skipJSONSpace(b, 0)
	if i == len(b) || b[i] != '{' {
		return in, false
	}
	var text, item bool
	for n := range 2 {
		key, j, ok := plainJSONString(b, skipJSONSpace(b, i+1))
		if !ok {
			return in, false
		}
		i = skipJSONSpace(b, j)
		if i == len(b) || b[i] != ':' {
			return in, false
		}
		value, j, ok := plainJSONString(b, skipJSONSpace(b, i+1))
		if !ok {
			return in, false
		}
		switch string(key) {
		case "text":
			if text {
				return in, false
			}
			text, in.Text = true, string(value)
		case "item_id":
			if item {
				return in, false
			}
			item, in.ItemID = true, string(value)
		default:
			return in, false
		}
		i = skipJSONSpace(b, j)
		if i == len(b) || b[i] != ",}"[n] {
			return in, false
		}
	}
	return in, text && item && skipJSONSpace(b, i+1) == len(b)
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainJSONString reads the string that starts at b[i] when it has no
// escapes, no control characters and is valid UTF-8 (what the decoder
// would keep byte for byte), and returns its content and the index after
// it.
func plainJSONString(b []byte, i int) ([]byte, int, bool) {
	if i == len(b) || b[i] != '"' {
		return nil, 0, false
	}
	ascii := true
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			s := b[i+1 : j]
			if !ascii && !utf8.Valid(s) {
				return nil, 0, false
			}
			return s, j + 1, true
		case c == '\\' || c < 0x20:
			return nil, 0, false
		case c >= 0x80:
			ascii = false
		}
	}
	return nil, 0, false
}

// decodeObject decodes a body that must be a JSON object into v. Other JSON
// values get a message that says so, not the decoder's one, which names Go
// types.
func decodeObject(r *http.Request, v any) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	if trimmed := bytes.TrimSpace(b); len(trimmed) > 0 && trimmed[0] != '{' && json.Valid(trimmed) {
		return errs.Invalidf("Malformed JSON body: a JSON object is expected")
	}
	return decodeBytes(b, v)
}

// handleAsk answers POST /questions {text, item_id}.
func (s *Server) handleAsk(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	in, ok := plainAsk(b)
	if !ok {
		if in, err = questions.ParseAsk(attributesOf(b)); err != nil {
			return err
		}
	}
	q, err := s.m.Questions.Ask(r.Context(), caller, in)
	if err != nil {
		return err
	}
	writeQuestion(w, http.StatusCreated, q)
	return nil
}

// handleAnswer answers POST /answers {question_id, text}.
func (s *Server) handleAnswer(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	fields, err := decodeAttributes(r)
	if err != nil {
		return err
	}
	in, err := questions.ParseAnswer(fields)
	if err != nil {
		return err
	}
	q, err := s.m.Questions.Answer(r.Context(), caller, in)
	if err != nil {
		return err
	}
	writeQuestion(w, http.StatusOK, q)
	return nil
}

// handleDeleteQuestion answers DELETE /questions/:question_id with a JSON
// array holding one confirmation text.
func (s *Server) handleDeleteQuestion(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := questions.ParseID(p.ByName("question_id"))
	if err != nil {
		return err
	}
	if err := s.m.Questions.Delete(r.Context(), caller, id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, []string{questions.DeleteMessage})
	return nil
}

// hideResponse is the answer of POST /my/questions/hidden.
type hideResponse struct {
	QuestionIDs []int64 `json:"question_ids"`
}

// handleHideQuestions answers POST /my/questions/hidden {question_ids}.
func (s *Server) handleHideQuestions(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	var in questions.HideInput
	if err := decodeObject(r, &in); err != nil {
		return err
	}
	ids, err := s.m.Questions.Hide(r.Context(), caller, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, hideResponse{QuestionIDs: ids})
	return nil
}

// handleModerateQuestion answers PUT /operator/questions/:question_id
// {status, answer_status}.
func (s *Server) handleModerateQuestion(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := questions.ParseID(p.ByName("question_id"))
	if err != nil {
		return err
	}
	var in questions.Moderation
	if err := decodeObject(r, &in); err != nil {
		return err
	}
	q, err := s.m.Questions.Moderate(r.Context(), id, in)
	if err != nil {
		return err
	}
	writeQuestion(w, http.StatusOK, q)
	return nil
}
