package httpapi

import (
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/messages"
)

// messagesVia is the catch-all the GET routes of the messages area are
// served through: httprouter cannot hold GET /messages/unread beside GET
// /messages/:message_id (dispatch.go).
const messagesVia = "/messages/*path"

// messageRoutes are the routes of the post-sale messages area
// (docs/messages.md).
func (s *Server) messageRoutes() []route {
	return []route{
		get("/messages/packs/:pack_id/sellers/:user_id", byUser(s.messagesAnswer(s.handleConversation))).through(messagesVia),
		post("/messages/packs/:pack_id/sellers/:user_id", byUser(s.messagesAnswer(s.handleSendMessage))).keyed(),
		get("/messages/:message_id", byUser(s.messagesAnswer(s.handleGetMessage))).through(messagesVia),
		get("/messages/unread", byUser(s.messagesAnswer(s.handleUnread))).through(messagesVia),
		get("/messages/unread/packs/:pack_id/sellers/:user_id", byUser(s.messagesAnswer(s.handleUnreadOf))).through(messagesVia),
		post("/messages/attachments", byUser(s.messagesAnswer(s.handleUploadAttachment))).reads(multipartBody).keyed(),
		get("/messages/attachments/:attachment_id", byUser(s.messagesAnswer(s.handleGetAttachment))).through(messagesVia),
		get("/messages/action_guide/packs/:pack_id", byUser(s.messagesAnswer(s.handleActionGuide))).through(messagesVia),
		get("/messages/action_guide/packs/:pack_id/caps_available", byUser(s.messagesAnswer(s.handleActionGuideCaps))).through(messagesVia),
		post("/messages/action_guide/packs/:pack_id/option", byUser(s.messagesAnswer(s.handleActionGuideOption))).keyed(),
		put("/messages/mark_as_read/:message_ids", byUser(s.messagesAnswer(s.handleMarkAsRead))),
		// Removed from the public API, which answers it 404.
		get("/messages/orders/:order_id", byUser(s.handleRemovedOrderMessages)).through(messagesVia),
		put("/operator/messages/:message_id/moderation", byOperator(s.handleModerateMessage)),
	}
}

// statusCodeBody is the messaging body of a send refused because the
// conversation is blocked (the spec's variant B).
type statusCodeBody struct {
	StatusCode int    `json:"status_code"`
	Code       string `json:"code"`
	Message    string `json:"message"`
}

// causeBody is the action guide's refusal body (variant B, with a cause).
type causeBody struct {
	Cause      string `json:"cause"`
	Error      string `json:"error"`
	Message    string `json:"message"`
	StatusCode int    `json:"status_code"`
}

// messagesAnswer answers the errors of package messages that have a shape
// or a status of their own (messages.Error); the others go to writeError.
func (s *Server) messagesAnswer(h authedFunc) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		err := h(w, r, p, caller)
		var me *messages.Error
		if err == nil || !errors.As(err, &me) {
			return err
		}
		status := statusByKind[me.Err.Kind]
		if me.Unprocessable {
			status = http.StatusUnprocessableEntity
		}
		switch me.Shape {
		case messages.ShapeStatusCode:
			s.writeJSON(w, status, statusCodeBody{StatusCode: status, Code: me.Err.Code, Message: me.Err.Message})
		case messages.ShapeCause:
			s.writeJSON(w, status, causeBody{Cause: me.Cause, Error: me.Err.Code, Message: me.Err.Message, StatusCode: status})
		default:
			s.writeJSON(w, status, errorBody{Message: me.Err.Message, Error: me.Err.Code, Status: status, Cause: []any{}})
		}
		return nil
	}
}

// packParams reads the pack and the seller of a conversation's path.
func packParams(p httprouter.Params) (packID, sellerID int64, err error) {
	if packID, err = messages.ParsePackID(p.ByName("pack_id")); err != nil {
		return 0, 0, err
	}
	if sellerID, err = messages.ParseSellerID(p.ByName("user_id")); err != nil {
		return 0, 0, err
	}
	return packID, sellerID, nil
}

// handleConversation answers GET
// /messages/packs/:pack_id/sellers/:user_id?tag=post_sale[&limit&offset&mark_as_read].
func (s *Server) handleConversation(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	qv := r.URL.Query()
	if err := messages.CheckTag(qv); err != nil {
		return err
	}
	packID, sellerID, err := packParams(p)
	if err != nil {
		return err
	}
	q, err := messages.ParseConversationQuery(qv)
	if err != nil {
		return err
	}
	c, err := s.m.Messages.Conversation(r.Context(), caller, packID, sellerID, q)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, c)
	return nil
}

// handleSendMessage answers POST
// /messages/packs/:pack_id/sellers/:user_id?tag=post_sale {from, to,
// text, attachments}: the seller's message to the buyer, or the buyer's
// to the seller.
func (s *Server) handleSendMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if err := messages.CheckTag(r.URL.Query()); err != nil {
		return err
	}
	packID, sellerID, err := packParams(p)
	if err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := messages.ParseSendBody(b)
	if err != nil {
		return err
	}
	m, err := s.m.Messages.Send(r.Context(), caller, tokenApp(token(r)), packID, sellerID, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, m)
	return nil
}

// handleGetMessage answers GET /messages/:message_id?tag=post_sale.
func (s *Server) handleGetMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if err := messages.CheckTag(r.URL.Query()); err != nil {
		return err
	}
	m, err := s.m.Messages.Message(r.Context(), caller, p.ByName("message_id"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, m)
	return nil
}

// handleUnread answers GET /messages/unread?role=seller|buyer&tag=post_sale.
func (s *Server) handleUnread(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	qv := r.URL.Query()
	if err := messages.CheckTag(qv); err != nil {
		return err
	}
	u, err := s.m.Messages.Unread(r.Context(), caller, qv.Get("role"))
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, u)
	return nil
}

// handleUnreadOf answers GET
// /messages/unread/packs/:pack_id/sellers/:user_id?tag=post_sale.
func (s *Server) handleUnreadOf(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if err := messages.CheckTag(r.URL.Query()); err != nil {
		return err
	}
	packID, sellerID, err := packParams(p)
	if err != nil {
		return err
	}
	u, err := s.m.Messages.UnreadOf(r.Context(), caller, packID, sellerID)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, u)
	return nil
}

// maxUploadBytes bounds the body of an upload: the file's limit and room
// for the multipart framing around it.
const maxUploadBytes = messages.MaxAttachmentSize + 1<<20

// handleUploadAttachment answers POST
// /messages/attachments?tag=post_sale&site_id=, a multipart form whose
// part "file" is the file. The part is handed to the domain as it
// arrives, never read whole.
func (s *Server) handleUploadAttachment(w http.ResponseWriter, r *http.Request, _ httprouter.Params, caller int64) error {
	qv := r.URL.Query()
	if err := messages.CheckTag(qv); err != nil {
		return err
	}
	in := messages.Upload{SiteID: qv.Get("site_id")}
	r.Body = http.MaxBytesReader(w, r.Body, maxUploadBytes)
	if mr, err := r.MultipartReader(); err == nil {
		for {
			part, err := mr.NextPart()
			if err != nil {
				break
			}
			if part.FormName() != "file" {
				continue
			}
			// The name as sent: Part.FileName keeps only its last
			// element, and a name with a slash is the rules' to refuse.
			_, params, _ := mime.ParseMediaType(part.Header.Get("Content-Disposition"))
			in.Present, in.Filename, in.ContentType, in.Body = true, params["filename"], part.Header.Get("Content-Type"), part
			break
		}
	}
	if in.Body == nil {
		in.Body = strings.NewReader("")
	}
	a, err := s.m.Messages.Upload(r.Context(), caller, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, a)
	return nil
}

// handleGetAttachment answers GET
// /messages/attachments/:attachment_id?tag=post_sale&site_id= with the
// file's bytes and its type, read a chunk at a time.
func (s *Server) handleGetAttachment(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	qv := r.URL.Query()
	if err := messages.CheckTag(qv); err != nil {
		return err
	}
	f, err := s.m.Messages.Attachment(r.Context(), caller, p.ByName("attachment_id"), qv.Get("site_id"))
	if err != nil {
		return err
	}
	h := w.Header()
	h.Set("Content-Type", f.Type)
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.WriteHeader(http.StatusOK)
	if r.Method == http.MethodHead {
		return nil
	}
	if _, err := s.m.Messages.CopyAttachment(r.Context(), f, w); err != nil && !errors.Is(err, io.ErrClosedPipe) {
		// The status is sent: the client sees a body shorter than its
		// Content-Length.
		s.logger.Warn("send an attachment", "id", f.ID, "err", err)
	}
	return nil
}

// handleActionGuide answers GET /messages/action_guide/packs/:pack_id?tag=post_sale.
func (s *Server) handleActionGuide(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if err := messages.CheckTag(r.URL.Query()); err != nil {
		return err
	}
	packID, err := messages.ParsePackID(p.ByName("pack_id"))
	if err != nil {
		return err
	}
	g, err := s.m.Messages.Guide(r.Context(), caller, packID)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, g)
	return nil
}

// handleActionGuideCaps answers GET
// /messages/action_guide/packs/:pack_id/caps_available?tag=post_sale.
func (s *Server) handleActionGuideCaps(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if err := messages.CheckTag(r.URL.Query()); err != nil {
		return err
	}
	packID, err := messages.ParsePackID(p.ByName("pack_id"))
	if err != nil {
		return err
	}
	caps, err := s.m.Messages.Caps(r.Context(), caller, packID)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, caps)
	return nil
}

// handleActionGuideOption answers POST
// /messages/action_guide/packs/:pack_id/option?tag=post_sale {option_id,
// template_id, text, vars}.
func (s *Server) handleActionGuideOption(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	if err := messages.CheckTag(r.URL.Query()); err != nil {
		return err
	}
	packID, err := messages.ParsePackID(p.ByName("pack_id"))
	if err != nil {
		return err
	}
	b, err := readBody(r)
	if err != nil {
		return err
	}
	in, err := messages.ParseOptionBody(b)
	if err != nil {
		return err
	}
	m, err := s.m.Messages.SendOption(r.Context(), caller, tokenApp(token(r)), packID, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, m)
	return nil
}

// handleMarkAsRead answers the older PUT /messages/mark_as_read/:message_ids
// (ids joined by commas) with {}.
func (s *Server) handleMarkAsRead(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
	ids, err := messages.ParseMessageIDs(p.ByName("message_ids"))
	if err != nil {
		return err
	}
	if err := s.m.Messages.MarkAsRead(r.Context(), caller, ids); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, struct{}{})
	return nil
}

// handleRemovedOrderMessages answers GET /messages/orders/:order_id, which
// the public API removed: 404 "Resource not found.", as it answers.
func (s *Server) handleRemovedOrderMessages(http.ResponseWriter, *http.Request, httprouter.Params, int64) error {
	return messages.ErrRemovedRoute()
}

// handleModerateMessage answers PUT /operator/messages/:message_id/moderation
// {status, reason}.
func (s *Server) handleModerateMessage(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	var in messages.ModerationInput
	if err := decode(r, &in); err != nil {
		return err
	}
	m, err := s.m.Messages.Moderate(r.Context(), p.ByName("message_id"), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, m)
	return nil
}
