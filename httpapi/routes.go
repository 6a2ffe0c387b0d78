package httpapi

import "net/http"

// routes registers every route. httprouter cannot hold a static segment and a
// parameter at the same position for one method, and every route through one
// position must use the same parameter name: hence /users/:user_id also
// where the spec writes {seller_id}. Where the spec needs a static name beside
// a parameter (GET /questions/search beside GET /questions/:question_id), the
// parameter route is registered once and dispatches the static name inside it.
func (s *Server) routes() {
	s.opsRoutes()

	// Users and stores.
	// A user's public subset is a public read, as in the public API.
	s.handle(http.MethodGet, "/users/:user_id", s.optionalUser(s.handleGetUser))
	s.handle(http.MethodGet, "/users/:user_id/stores/search", s.user(s.handleSearchStores))

	// Operator: accounts.
	s.handle(http.MethodPost, "/operator/users", s.operator(s.handleOperatorCreateUser))
	s.handle(http.MethodGet, "/operator/users/:user_id", s.operator(s.handleOperatorGetUser))
	s.handle(http.MethodPost, "/operator/users/:user_id/tokens", s.operator(s.handleOperatorIssueToken))
	s.handle(http.MethodDelete, "/operator/users/:user_id/tokens", s.operator(s.handleOperatorRevokeUserTokens))
	s.handle(http.MethodPost, "/operator/tokens/revoke", s.operator(s.handleOperatorRevokeToken))
	s.handle(http.MethodPut, "/operator/users/:user_id/tags", s.operator(s.handleOperatorSetTags))
	s.handle(http.MethodPost, "/operator/users/:user_id/stores", s.operator(s.handleOperatorCreateStore))
	s.handle(http.MethodPut, "/operator/reference", s.operator(s.handleOperatorImportReference))

	s.stockRoutes()
	s.questionRoutes()
	s.responseTimeRoutes()
	s.referenceRoutes()
	s.catalogRoutes()
	s.notifyRoutes()
	s.oauthRoutes()
	s.clockRoutes()
	s.testingRoutes()
	s.stateRoutes()
	s.operatorListRoutes()
	s.consoleRoutes()

	// Public reads: sites, categories, multigets, a seller's items.
	s.publicReadRoutes()
}
