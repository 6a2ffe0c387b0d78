package httpapi

import (
	"net/http"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
)

// createdUser is the answer of POST /operator/users: the full user record
// plus its first access token.
type createdUser struct {
	accounts.User
	AccessToken string `json:"access_token"`
}

// handleOperatorCreateUser answers POST /operator/users.
func (s *Server) handleOperatorCreateUser(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in accounts.NewUser
	if err := decode(r, &in); err != nil {
		return err
	}
	u, tok, err := s.m.CreateUser(r.Context(), in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, createdUser{User: u, AccessToken: tok})
	return nil
}

// handleOperatorGetUser answers GET /operator/users/:user_id with the full
// record.
func (s *Server) handleOperatorGetUser(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	u, err := s.m.Accounts.User(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, u)
	return nil
}

// handleOperatorIssueToken answers POST /operator/users/:user_id/tokens.
func (s *Server) handleOperatorIssueToken(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	tok, err := s.m.Accounts.IssueToken(r.Context(), id)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, map[string]any{"user_id": id, "access_token": tok})
	return nil
}

// handleOperatorSetTags answers PUT /operator/users/:user_id/tags.
func (s *Server) handleOperatorSetTags(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	var in struct {
		Tags *[]string `json:"tags"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.Tags == nil {
		return errRequired("tags")
	}
	u, err := s.m.Accounts.SetTags(r.Context(), id, *in.Tags)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, u)
	return nil
}

// handleOperatorCreateStore answers POST /operator/users/:user_id/stores.
func (s *Server) handleOperatorCreateStore(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	var in accounts.NewStore
	if err := decode(r, &in); err != nil {
		return err
	}
	st, err := s.m.Accounts.CreateStore(r.Context(), id, in)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusCreated, st)
	return nil
}

// handleOperatorImportReference answers PUT /operator/reference: upserts the
// records of a reference document (docs/reference-data.md) in one
// transaction.
func (s *Server) handleOperatorImportReference(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var doc marketplace.ReferenceDocument
	if err := decode(r, &doc); err != nil {
		return err
	}
	res, err := s.m.ImportReference(r.Context(), doc)
	if err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, res)
	return nil
}

// handleOperatorRevokeUserTokens answers DELETE /operator/users/:user_id/tokens:
// every token of the user stops working at once.
func (s *Server) handleOperatorRevokeUserTokens(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
	id, err := int64Param(p, "user_id")
	if err != nil {
		return err
	}
	if _, err := s.m.Accounts.User(r.Context(), id); err != nil {
		return err
	}
	if err := s.m.Accounts.RevokeAllTokens(r.Context(), id); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"user_id": id, "revoked": true})
	return nil
}

// handleOperatorRevokeToken answers POST /operator/tokens/revoke with
// {access_token}: that one token stops working. The token travels in the body,
// not the path, so that it never appears in request logs.
func (s *Server) handleOperatorRevokeToken(w http.ResponseWriter, r *http.Request, _ httprouter.Params) error {
	var in struct {
		AccessToken string `json:"access_token"`
	}
	if err := decode(r, &in); err != nil {
		return err
	}
	if in.AccessToken == "" {
		return errRequired("access_token")
	}
	if err := s.m.Accounts.RevokeToken(r.Context(), in.AccessToken); err != nil {
		return err
	}
	s.writeJSON(w, http.StatusOK, map[string]any{"revoked": true})
	return nil
}
