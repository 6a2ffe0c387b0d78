package httpapi

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/feedback"
	"github.com/marketplace/marketplace/notes"
)

// feedbackRoutes are the routes of the ratings the parties of a sale give
// each other and of the seller's notes (docs/post-sale.md).
func (s *Server) feedbackRoutes() []route {
	return []route{
		post("/orders/:order_id/feedback", byUser(s.handleGiveFeedback)).reads(objectBody).keyed(),
		get("/orders/:order_id/feedback", byUser(s.handleOrderFeedback)),
		get("/orders/:order_id/feedback/:side", byUser(s.handleOrderFeedbackSide)),
		put("/orders/:order_id/feedback/:side", byUser(s.handleChangeFeedbackSide)).reads(objectBody),
		get("/feedback/:feedback_id", byUser(s.handleGetFeedback)),
		put("/feedback/:feedback_id", byUser(s.handleChangeFeedback)).reads(objectBody),
		post("/feedback/:feedback_id/reply", byUser(s.handleReplyFeedback)).reads(objectBody).keyed(),

		post("/orders/:order_id/notes", byUser(s.handleCreateNote(notes.OnOrder))).reads(objectBody).keyed(),
		get("/orders/:order_id/notes", byUser(s.handleListNotes(notes.OnOrder))),
		put("/orders/:order_id/notes/:note_id", byUser(s.handleUpdateNote(notes.OnOrder))).reads(objectBody),
		del("/orders/:order_id/notes/:note_id", byUser(s.handleDeleteNote)),
		post("/packs/:pack_id/notes", byUser(s.handleCreateNote(notes.OnPack))).reads(objectBody).keyed(),
		get("/packs/:pack_id/notes", byUser(s.handleListNotes(notes.OnPack))),
		get("/packs/:pack_id/notes/:note_id", byUser(s.handleGetPackNote)),
		put("/packs/:pack_id/notes/:note_id", byUser(s.handleUpdateNote(notes.OnPack))).reads(objectBody),
	}
}

// handleGiveFeedback answers POST /orders/:order_id/feedback: 201 with the
// feedback.
func (s *Server) handleGiveFeedback(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	var in feedback.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	f, err := s.m.Feedback.Give(r.Context(), caller, id, in, tokenApp(token(r)))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, f)
	return nil
}

// handleOrderFeedback answers GET /orders/:order_id/feedback: both sides.
func (s *Server) handleOrderFeedback(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return readByID(s, "order_id", s.m.Feedback.OfOrder)(w, r, p, caller)
}

// feedbackSide reads the :side of the legacy routes: sale or purchase.
func feedbackSide(p httprouter.Params) (string, error) {
	role, ok := feedback.Side(p.ByName("side"))
	if !ok {
		return "", errs.WithCode(errs.NotFound, "not_found", "Resource not found. The side of an order's feedback is sale or purchase")
	}
	return role, nil
}

// handleOrderFeedbackSide answers GET /orders/:order_id/feedback/sale and
// /purchase: one side, 404 while it is not given.
func (s *Server) handleOrderFeedbackSide(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	role, err := feedbackSide(p)
	if err != nil {
		return err
	}
	f, err := s.m.Feedback.OfSide(r.Context(), caller, id, role)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, f)
	return nil
}

// handleChangeFeedbackSide answers PUT /orders/:order_id/feedback/sale and
// /purchase, as PUT /feedback/:feedback_id does for that side's feedback.
func (s *Server) handleChangeFeedbackSide(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	role, err := feedbackSide(p)
	if err != nil {
		return err
	}
	var in feedback.Input
	if err := decode(r, &in); err != nil {
		return err
	}
	changed, err := s.m.Feedback.ChangeSide(r.Context(), caller, id, role, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, changed)
	return nil
}

// handleGetFeedback answers GET /feedback/:feedback_id.
func (s *Server) handleGetFeedback(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return readByID(s, "feedback_id", s.m.Feedback.Get)(w, r, p, caller)
}

// handleChangeFeedback answers PUT /feedback/:feedback_id: 200 with the
// changed feedback.
func (s *Server) handleChangeFeedback(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	return writeByID(s, "feedback_id", s.m.Feedback.Change)(w, r, p, caller)
}

// handleReplyFeedback answers POST /feedback/:feedback_id/reply: 200 with
// the feedback and its reply.
func (s *Server) handleReplyFeedback(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "feedback_id")
	if err != nil {
		return err
	}
	var in struct {
		Reply *string `json:"reply"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	text := ""
	if in.Reply != nil {
		text = *in.Reply
	}
	f, err := s.m.Feedback.Reply(r.Context(), caller, id, text)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, f)
	return nil
}

// noteTarget reads the order or pack id of a notes route.
func noteTarget(p httprouter.Params, on notes.On) (int64, error) {
	if on == notes.OnPack {
		return int64Param(p, "pack_id")
	}
	return int64Param(p, "order_id")
}

// noteBody reads {"note": "..."}.
func noteBody(r *http.Request) (string, error) {
	var in struct {
		Note *string `json:"note"`
	}
	if err := decode(r, &in); err != nil {
		return "", err
	}
	if in.Note == nil {
		return "", nil
	}
	return *in.Note, nil
}

// noteAnswer is the answer of a note's creation or change: {"note": ...}.
type noteAnswer struct {
	Note notes.Note `json:"note"`
}

// handleCreateNote answers POST /orders/:order_id/notes and
// /packs/:pack_id/notes: 201 with {"note": ...}.
func (s *Server) handleCreateNote(on notes.On) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := noteTarget(p, on)
		if err != nil {
			return err
		}
		text, err := noteBody(r)
		if err != nil {
			return err
		}
		n, err := s.m.Notes.Create(r.Context(), caller, on, id, text)
		if err != nil {
			return err
		}
		s.writeJSON(w, http.StatusCreated, noteAnswer{Note: n})
		return nil
	}
}

// handleListNotes answers GET /orders/:order_id/notes ([{"order_id":
// "<id>", "results": [...]}], the id a string as older payloads send it)
// and GET /packs/:pack_id/notes ([{"pack_id": <id>, "results": [...]}]).
func (s *Server) handleListNotes(on notes.On) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := noteTarget(p, on)
		if err != nil {
			return err
		}
		list, err := s.m.Notes.List(r.Context(), caller, on, id)
		if err != nil {
			return err
		}
		if on == notes.OnPack {
			s.writeJSON(w, http.StatusOK, []struct {
				PackID  int64        `json:"pack_id"`
				Results []notes.Note `json:"results"`
			}{{id, list}})
			return nil
		}
		s.writeJSON(w, http.StatusOK, []struct {
			OrderID string       `json:"order_id"`
			Results []notes.Note `json:"results"`
		}{{strconv.FormatInt(id, 10), list}})
		return nil
	}
}

// handleGetPackNote answers GET /packs/:pack_id/notes/:note_id: the note,
// not wrapped.
func (s *Server) handleGetPackNote(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "pack_id")
	if err != nil {
		return err
	}
	n, err := s.m.Notes.Get(r.Context(), caller, notes.OnPack, id, p.ByName("note_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, n)
	return nil
}

// handleUpdateNote answers PUT /orders/:order_id/notes/:note_id and
// /packs/:pack_id/notes/:note_id: 200 with {"note": ...}.
func (s *Server) handleUpdateNote(on notes.On) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := noteTarget(p, on)
		if err != nil {
			return err
		}
		text, err := noteBody(r)
		if err != nil {
			return err
		}
		n, err := s.m.Notes.Update(r.Context(), caller, on, id, p.ByName("note_id"), text)
		if err != nil {
			return err
		}
		s.writeJSON(w, http.StatusOK, noteAnswer{Note: n})
		return nil
	}
}

// handleDeleteNote answers DELETE /orders/:order_id/notes/:note_id: 200
// with {}.
func (s *Server) handleDeleteNote(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	id, err := int64Param(p, "order_id")
	if err != nil {
		return err
	}
	if err := s.m.Notes.Delete(r.Context(), caller, notes.OnOrder, id, p.ByName("note_id")); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, struct{}{})
	return nil
}
