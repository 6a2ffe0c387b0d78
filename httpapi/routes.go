package httpapi

import (
	"net/http"
	"slices"
	"strings"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/faults"
)

// Route is one registered route: its method and its path in httprouter's
// syntax (/items/:item_id).
type Route struct {
	Method, Path string
}

// Routes returns every route of the API, in registration order, so that
// tests and documents can be checked against the router itself. The
// operator console's pages are on the router but are not API routes.
func (s *Server) Routes() []Route { return slices.Clone(s.registered) }

// access is who may call a route.
type access uint8

const (
	// anyone: no token is read.
	anyone access = iota
	// anyoneWithToken: anonymous callers (caller 0), or callers whose token
	// is valid; a token that is sent must be valid.
	anyoneWithToken
	// aUser: a user's token.
	aUser
	// theOperator: the operator token; a user's token gets 403.
	theOperator
)

// String names the access as docs and tests say it.
func (a access) String() string {
	switch a {
	case anyoneWithToken:
		return "anyone, optional token"
	case aUser:
		return "user"
	case theOperator:
		return "operator"
	default:
		return "anyone"
	}
}

// endpoint is who may call a route and its handler: h for anyone and the
// operator, ah for the routes that know their caller.
type endpoint struct {
	who access
	h   handlerFunc
	ah  authedFunc
}

func open(h handlerFunc) endpoint       { return endpoint{who: anyone, h: h} }
func withToken(h authedFunc) endpoint   { return endpoint{who: anyoneWithToken, ah: h} }
func byUser(h authedFunc) endpoint      { return endpoint{who: aUser, ah: h} }
func byOperator(h handlerFunc) endpoint { return endpoint{who: theOperator, h: h} }

// route is one row of the route table.
type route struct {
	method, path string
	endpoint
	// statics are the spec's paths that this parameter route serves by a
	// static name in its parameter's place (GET /questions/search through
	// GET /questions/:question_id): httprouter cannot hold both at one
	// position, so the handler tells the name apart. Requests to them are
	// journaled and faulted under their own path.
	statics []string
	// gated: the engine's state gate holds the request (marketplace.Enter),
	// so a reset or a restore never runs beside it.
	gated bool
	// faulted: fault rules may answer it; faults.CheckRoute says which
	// routes rules may name.
	faulted bool
	// journaled: the request journal records it (see journaledPath).
	journaled bool
	// searches are the request templates of the route (its own, or static
	// names it serves) that are searches: they take a search slot
	// (Config.ConcurrentSearches) before they run.
	searches []string
	// idempotent: a request with an X-Idempotency-Key header is carried
	// out once per key and caller, and a retry gets the first answer again
	// (httpapi/idempotency.go, package idempotency).
	idempotent bool
	// body is what the route reads from its request body.
	body bodyKind
	// metric is the route's label in the metrics: its path in the router's
	// syntax, so that one route is one series whatever ids it is called
	// with.
	metric string
	// bare routes are served by the router as they are: no log line, no
	// metrics, no gate, no faults, no journal, and not in Routes.
	bare httprouter.Handle
	// via is the catch-all router path (/messages/*path) the route is
	// served through when httprouter cannot hold it beside its siblings
	// (a static segment and a parameter at one position): the catch-all
	// dispatches each request to the route whose path it matches
	// (dispatch.go). Everything else treats the route as any other.
	via string
	// ops: an operations route (health, readiness, version, the OpenAPI
	// document, metrics), the server's own like the operator's and the
	// console's: no stub may take it (ownPaths).
	ops bool
}

func get(path string, e endpoint) route  { return newRoute(http.MethodGet, path, e) }
func head(path string, e endpoint) route { return newRoute(http.MethodHead, path, e) }
func post(path string, e endpoint) route { return newRoute(http.MethodPost, path, e) }
func put(path string, e endpoint) route  { return newRoute(http.MethodPut, path, e) }
func del(path string, e endpoint) route  { return newRoute(http.MethodDelete, path, e) }
func bare(path string, h httprouter.Handle) route {
	return route{method: http.MethodGet, path: path, bare: h}
}

// newRoute gives a route the properties most routes have.
func newRoute(method, path string, e endpoint) route {
	return route{method: method, path: path, endpoint: e, gated: true,
		faulted: faults.CheckRoute(specTemplate(path)) == nil, journaled: journaledPath(path), metric: path}
}

// bodyKind is what a route reads from its request body.
type bodyKind uint8

const (
	// noBody: the body is not read.
	noBody bodyKind = iota
	// objectBody: one JSON object; an empty body, or JSON that is not an
	// object (null, an array, a number, a string), is a 400.
	objectBody
	// optionalObjectBody: nothing, or one JSON object.
	optionalObjectBody
	// paramsBody: OAuth 2 parameters, form-encoded or as one JSON object.
	paramsBody
	// htmlFormBody: the fields of an HTML form (the authorization page).
	htmlFormBody
	// multipartBody: a multipart form, read part by part as it arrives
	// (an upload).
	multipartBody
)

// reads says what the route reads from its body.
func (rt route) reads(k bodyKind) route {
	rt.body = k
	return rt
}

// serves adds the static names the route serves in its parameter's place.
func (rt route) serves(paths ...string) route {
	rt.statics = append(rt.statics, paths...)
	return rt
}

// search marks the route as a search, or, given static names it serves,
// those of its paths: a search waits for a search slot before it runs.
func (rt route) search(statics ...string) route {
	if len(statics) == 0 {
		statics = []string{specTemplate(rt.path)}
	}
	rt.searches = append(rt.searches, statics...)
	return rt
}

// keyed marks a route that creates something, whose requests carry out
// once per X-Idempotency-Key (docs/idempotency.md). Only routes that know
// their caller take keys, since a key is its caller's.
func (rt route) keyed() route {
	rt.idempotent = true
	return rt
}

// through serves the route through the catch-all router path via
// (route.via).
func (rt route) through(via string) route {
	rt.via = via
	return rt
}

// operations marks an operations route (route.ops).
func (rt route) operations() route {
	rt.ops = true
	return rt
}

// takesGate marks a route that takes the engine's state gate itself, to
// hold every other request out (reset, snapshots, fixtures): entering it
// for the request too would wait forever.
func (rt route) takesGate() route {
	rt.gated = false
	return rt
}

// journaledPath reports whether the journal records a request to path.
// The operator's own requests are left out, so that a test reading the
// journal does not find its reads there; so are the scrapes of the
// metrics, which would push a test's requests out. Requests that no route
// matches are judged by their path alone.
func journaledPath(path string) bool {
	return !strings.HasPrefix(path, "/operator/") && path != "/metrics"
}

// specTemplate is the spec-style template of a router path:
// /questions/:question_id is /questions/{question_id}.
func specTemplate(path string) string {
	if !strings.ContainsAny(path, ":*") {
		return path
	}
	parts := strings.Split(path, "/")
	for i, p := range parts {
		if strings.HasPrefix(p, ":") || strings.HasPrefix(p, "*") {
			parts[i] = "{" + p[1:] + "}"
		}
	}
	return strings.Join(parts, "/")
}

// routeTable is every route of the server, in registration order. Where
// the spec writes {seller_id} the router says :user_id: every route
// through one position must use the same parameter name.
func (s *Server) routeTable() []route {
	return slices.Concat([]route{
		// Operations and tools. No token: a load balancer or a Prometheus
		// scraper has none, and none of them tells anything about the
		// marketplace's data (docs/spec-decisions.md).
		get("/health", open(s.handleHealth)).operations(),
		head("/health", open(s.handleHealth)).operations(),
		get("/ready", open(s.handleReady)).operations(),
		head("/ready", open(s.handleReady)).operations(),
		get("/version", open(s.handleVersion)).operations(),
		head("/version", open(s.handleVersion)).operations(),
		get("/openapi.json", open(s.handleOpenAPI)).operations(),
		get("/metrics", open(s.handleMetrics)).operations(),

		// Users and stores. A user's public subset is a public read; "me"
		// is the token's user.
		get("/users/:user_id", withToken(s.handleGetUser)).serves("/users/me"),
		get("/users/:user_id/stores/search", byUser(s.handleSearchStores)),

		// The operator's accounts.
		post("/operator/users", byOperator(s.handleOperatorCreateUser)).reads(objectBody).keyed(),
		get("/operator/users/:user_id", byOperator(s.handleOperatorGetUser)),
		post("/operator/users/:user_id/tokens", byOperator(s.handleOperatorIssueToken)).keyed(),
		del("/operator/users/:user_id/tokens", byOperator(s.handleOperatorRevokeUserTokens)),
		post("/operator/tokens/revoke", byOperator(s.handleOperatorRevokeToken)).reads(objectBody),
		put("/operator/users/:user_id/tags", byOperator(s.handleOperatorSetTags)).reads(objectBody),
		post("/operator/users/:user_id/stores", byOperator(s.handleOperatorCreateStore)).reads(objectBody).keyed(),
		put("/operator/reference", byOperator(s.handleOperatorImportReference)).reads(objectBody),

		// Stock. POST /items/multiwarehouse shares its position with POST
		// /items/:item_id/relist.
		post("/items", byUser(s.handlePublishItem)).reads(objectBody).keyed(),
		post("/items/:item_id", byUser(s.handlePostItemName)).serves("/items/multiwarehouse").reads(objectBody).keyed(),
		get("/items/:item_id", withToken(s.handleGetItem)),
		put("/items/:item_id", byUser(s.handleUpdateItem)).reads(objectBody),
		post("/items/:item_id/relist", byUser(s.handleRelistItem)).reads(objectBody).keyed(),
		get("/user-products/:user_product_id/stock", byUser(s.handleGetStock)),
		put("/user-products/:user_product_id/stock/type/seller_warehouse", byUser(s.handlePutStock)).reads(optionalObjectBody).keyed(),
		get("/sites/:site_id/search", withToken(s.handleSiteSearch)).search(),

		// Sales: orders, packs and shipments are read by their seller and
		// their buyer; the statuses are a public read. The operator makes
		// the sales (no public route does) and reads any of them.
		get("/orders/:order_id", byUser(s.handleOrderOrSearch)).serves("/orders/search").search("/orders/search"),
		get("/packs/:pack_id", byUser(s.handleGetPack)),
		get("/shipments/:shipment_id", byUser(s.handleGetShipment)),
		get("/shipments/:shipment_id/history", byUser(s.handleShipmentHistory)),
		get("/shipment_statuses", withToken(s.handleShipmentStatuses)),
		post("/operator/orders", byOperator(s.handleOperatorPlaceOrder)).reads(objectBody).keyed(),
		get("/operator/orders", byOperator(s.handleOperatorSearchOrders)),
		get("/operator/orders/:order_id", byOperator(s.handleOperatorGetOrder)),
		post("/operator/orders/:order_id/payments", byOperator(s.handleOperatorPayOrder)).reads(objectBody).keyed(),
		post("/operator/orders/:order_id/cancel", byOperator(s.handleOperatorCancelOrder)),
		put("/operator/shipments/:shipment_id/status", byOperator(s.handleOperatorMoveShipment)).reads(objectBody),

		// Questions, answers, moderation and blacklists.
		get("/questions/:question_id", withToken(s.handleQuestionOrSearch)).serves("/questions/search").search("/questions/search"),
		post("/questions", byUser(s.handleAsk)).reads(objectBody).keyed(),
		del("/questions/:question_id", byUser(s.handleDeleteQuestion)),
		post("/answers", byUser(s.handleAnswer)).reads(objectBody).keyed(),
		post("/my/questions/hidden", byUser(s.handleHideQuestions)).reads(objectBody),
		put("/operator/questions/:question_id", byOperator(s.handleModerateQuestion)).reads(objectBody),
		post("/users/:user_id/questions_blacklist", byUser(s.handleBlock)).reads(objectBody),
		get("/users/:user_id/questions_blacklist", byUser(s.handleBlacklist)),
		del("/users/:user_id/questions_blacklist/:blocked_id", byUser(s.handleUnblock)),
		get("/users/:user_id/questions/response_time", byUser(s.handleGetResponseTime)),

		// Reference data.
		get("/sites/:site_id/listing_prices", withToken(s.handleListingPrices)),
		get("/sites/:site_id/listing_prices/:listing_type_id", withToken(s.handleListingPrice)),
		get("/classified_locations/countries", withToken(s.handleCountries)),
		get("/classified_locations/countries/:country_id", withToken(s.handleCountry)),
		get("/classified_locations/states/:state_id", withToken(s.handleState)),
		get("/classified_locations/cities/:city_id", withToken(s.handleCity)),
		get("/currencies", withToken(s.handleCurrencies)),
		get("/currencies/:currency_id", withToken(s.handleCurrency)),
		get("/currency_conversions/search", withToken(s.handleCurrencyConversion)),
		get("/countries/:country_id/zip_codes/:zip_code", withToken(s.handleZipCode)),
		get("/country/:country_id/zip_codes/search_between", withToken(s.handleZipCodesBetween)),

		// Catalog.
		get("/sites/:site_id/domains", withToken(s.handleSiteDomains)),
		get("/catalog_domains/:domain_id/products", withToken(s.handleDomainProducts)),
		get("/products/:product_id", withToken(s.handleProduct)),

		// Notifications.
		post("/operator/applications", byOperator(s.handleCreateApplication)).reads(objectBody).keyed(),
		get("/operator/applications/:app_id", byOperator(s.handleGetApplication)),
		put("/operator/applications/:app_id", byOperator(s.handleUpdateApplication)).reads(objectBody),
		get("/operator/applications/:app_id/deliveries", byOperator(s.handleListDeliveries)),
		get("/missed_feeds", byUser(s.handleMissedFeeds)),

		// OAuth 2 and test users. POST /users/test_user shares its position
		// with POST /users/:user_id/questions_blacklist.
		get("/authorization", open(s.handleAuthorizationPage)),
		post("/authorization", open(s.handleAuthorizationSubmit)).reads(htmlFormBody),
		post("/oauth/token", open(s.handleToken)).reads(paramsBody),
		post("/operator/authorizations", byOperator(s.handleOperatorAuthorize)).reads(objectBody).keyed(),
		post("/operator/applications/:app_id/secret", byOperator(s.handleRotateClientSecret)).keyed(),
		post("/users/:user_id", byUser(s.handlePostUser)).serves("/users/test_user").reads(objectBody).keyed(),

		// The clock.
		get("/operator/clock", byOperator(s.handleGetClock)),
		put("/operator/clock", byOperator(s.handlePutClock)).reads(objectBody),

		// What tests use to shape and inspect the server: fault rules, the
		// request journal and its verification, stub mappings, redelivery.
		post("/operator/faults", byOperator(s.handleCreateFault)).reads(objectBody).keyed(),
		get("/operator/faults", byOperator(s.handleListFaults)),
		del("/operator/faults", byOperator(s.handleDeleteFaults)),
		get("/operator/faults/:fault_id", byOperator(s.handleGetFault)),
		del("/operator/faults/:fault_id", byOperator(s.handleDeleteFault)),
		get("/operator/requests", byOperator(s.handleListRequests)),
		post("/operator/requests/count", byOperator(s.handleCountRequests)).reads(objectBody),
		post("/operator/requests/find", byOperator(s.handleFindRequests)).reads(objectBody),
		post("/operator/stubs", byOperator(s.handleCreateStub)).reads(objectBody).keyed(),
		get("/operator/stubs", byOperator(s.handleListStubs)),
		del("/operator/stubs", byOperator(s.handleDeleteStubs)),
		get("/operator/stubs/:stub_id", byOperator(s.handleGetStub)),
		del("/operator/stubs/:stub_id", byOperator(s.handleDeleteStub)),
		del("/operator/requests", byOperator(s.handleClearRequests)),
		// Recording the real API through the server (docs/recording.md),
		// WireMock's recording API; keyed, so that a retried stop or
		// snapshot whose answer was lost gets its mappings again.
		post("/operator/recordings/start", byOperator(s.handleStartRecording)).reads(objectBody).keyed(),
		get("/operator/recordings/status", byOperator(s.handleRecordingStatus)),
		post("/operator/recordings/stop", byOperator(s.handleStopRecording)).keyed(),
		post("/operator/recordings/snapshot", byOperator(s.handleSnapshot)).reads(optionalObjectBody).keyed(),
		post("/operator/applications/:app_id/deliveries/:delivery_id/redeliver", byOperator(s.handleRedeliver)),

		// The whole state: reset, snapshots, fixtures.
		post("/operator/reset", byOperator(s.handleOperatorReset)).takesGate(),
		post("/operator/snapshots", byOperator(s.handleOperatorCreateSnapshot)).takesGate().reads(optionalObjectBody),
		get("/operator/snapshots", byOperator(s.handleOperatorListSnapshots)).takesGate(),
		post("/operator/snapshots/:snapshot_id/restore", byOperator(s.handleOperatorRestoreSnapshot)).takesGate(),
		del("/operator/snapshots/:snapshot_id", byOperator(s.handleOperatorDeleteSnapshot)).takesGate(),
		put("/operator/fixtures", byOperator(s.handleOperatorLoadFixtures)).takesGate().reads(objectBody),

		// The console's lists.
		get("/operator/users", byOperator(s.handleOperatorListUsers)),
		get("/operator/users/:user_id/stores", byOperator(s.handleOperatorListStores)),
		get("/operator/items", byOperator(s.handleOperatorListItems)),
		get("/operator/applications", byOperator(s.handleOperatorListApplications)),

		// The operator console (httpapi/console) is not part of the API:
		// fault rules never break the page that is used to remove them, its
		// asset requests do not fill the journal it shows, and Routes stays
		// the API's.
		bare("/console", s.serveConsole),
		bare("/console/*asset", s.serveConsole),
		// Browsers ask for /favicon.ico beside every page they open; a 404
		// would be journaled once per page and bury the requests a test
		// wants to read.
		bare("/favicon.ico", serveFavicon),

		// Public reads: sites, categories, multigets, a seller's items.
		get("/sites", withToken(s.handleSites)),
		get("/sites/:site_id", withToken(s.handleSite)),
		get("/sites/:site_id/categories", withToken(s.handleSiteCategories)),
		get("/categories/:category_id", withToken(s.handleCategory)),
		get("/items", withToken(s.handleItemsMultiget)),
		get("/users", withToken(s.handleUsersMultiget)),
		get("/users/:user_id/items/search", byUser(s.handleSellerItems)).search(),
	},
		// After the sale: each area's routes are in its own file.
		s.messageRoutes(), s.claimRoutes(), s.feedbackRoutes())
}
