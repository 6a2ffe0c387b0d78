package httpapi

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

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
	q, err := questions.ParseSearch(qv, caller)
	if err != nil {
		return err
	}
	q.Offset, q.Limit, q.V4 = pg.Offset, pg.Limit, v == 4
	res, err := s.m.Questions.Search(r.Context(), caller, q)
	if err != nil {
		return err
	}
	s.writeSearchEnvelope(w, searchEnvelope{
		Total: res.Total, Limit: pg.Limit, Questions: res.Questions,
		Filters: searchFilters{Limit: pg.Limit, Offset: pg.Offset, APIVersion: strconv.Itoa(v),
			Sorts: q.Sorts, Caller: caller, Item: q.ItemID},
		AvailableFilters: questions.AvailableFilters,
		AvailableSorts:   questions.SortFields,
	})
	return nil
}

// handleAsk answers POST /questions {text, item_id}.
func (s *Server) handleAsk(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	b, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := questions.ParseAskBody(b)
	if err != nil {
		return err
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
	b, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := questions.ParseAnswerBody(b)
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
	if err := decode(r, &in); err != nil {
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
	if err := decode(r, &in); err != nil {
		return err
	}
	q, err := s.m.Questions.Moderate(r.Context(), id, in)
	if err != nil {
		return err
	}
	writeQuestion(w, http.StatusOK, q)
	return nil
}
