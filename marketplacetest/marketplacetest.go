// Package marketplacetest starts the marketplace inside a Go test, as a
// real HTTP server on a loopback address, with the accounts a test needs
// already there:
//
//	srv := marketplacetest.NewServer(t)
//	req, _ := http.NewRequest("GET", srv.URL+"/users/me", nil)
//	req.Header.Set("Authorization", "Bearer "+srv.Seller.Token)
//
// The server runs on the memory store and a manual clock (srv.Clock), with
// its background work (notification delivery, scheduled refreshes) running,
// and stops when the test ends. srv.Marketplace is the engine itself, for
// what a test prefers to do in Go.
//
// The public API has no route that makes a sale: a test makes one with the
// helpers PlaceOrder, PayOrder, MoveShipment and CancelOrder, which fail
// the test when the marketplace refuses:
//
//	order := srv.PlaceOrder(t, sales.NewOrder{ItemID: itemID, Quantity: 2})
//	srv.MoveShipment(t, *order.Shipping.ID, "shipped")
package marketplacetest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/accounts"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/fixtures"
	"github.com/marketplace/marketplace/httpapi"
	"github.com/marketplace/marketplace/journal"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/sales"
	"github.com/marketplace/marketplace/storage/memory"
	"github.com/marketplace/marketplace/stubs"
)

// DefaultStart is the clock's time when no WithStart is given: a
// Wednesday, 12:00 in Buenos Aires.
var DefaultStart = time.Date(2026, 3, 4, 15, 0, 0, 0, time.UTC)

// Server is a running marketplace.
type Server struct {
	// URL is the server's base address, http://127.0.0.1:port, without a
	// trailing slash.
	URL string
	// Marketplace is the engine behind the server.
	Marketplace *marketplace.Marketplace
	// Clock is the engine's clock: it moves only when the test moves it
	// (Advance, Set), and every rule that depends on time follows it.
	Clock *clock.Manual
	// Seller is a seller of MLA with the warehouse_management tag and two
	// stock-location stores; Buyer a buyer of MLA. Their tokens are the
	// demo accounts' fixed ones (marketplace.DemoSellerToken and
	// DemoBuyerToken).
	Seller User
	Buyer  User
	// OperatorToken authorizes the /operator routes; Operator is a client
	// that sends it.
	OperatorToken string
	Operator      *Client
	// Fixtures holds the ids of the records that WithFixtures declared, by
	// name.
	Fixtures fixtures.Result

	initial   int64
	start     time.Time
	journal   *journal.Journal
	stop      func() error
	closeOnce sync.Once
	closeErr  error
}

// User is an account of the server with its access token.
type User struct {
	accounts.User
	Token  string
	Stores []accounts.Store
}

type config struct {
	start           time.Time
	docs            []fixtures.Document
	files           []string
	stubs           []string
	privateCallback bool
	// check is told of every answer that breaks the OpenAPI document.
	check func(problem string)
}

// Option configures NewServer.
type Option func(*config)

// WithStart sets the clock's starting time.
func WithStart(t time.Time) Option { return func(c *config) { c.start = t } }

// WithFixtures loads a fixtures document once the seller and the buyer
// exist; several are loaded in order.
func WithFixtures(d fixtures.Document) Option {
	return func(c *config) { c.docs = append(c.docs, d) }
}

// WithFixturesFile loads the fixtures document in a JSON file, the format
// of marketplaced -fixtures.
func WithFixturesFile(path string) Option {
	return func(c *config) { c.files = append(c.files, path) }
}

// WithStubs loads the stub mappings of a file, or of every .json file of
// a folder in name order, as marketplaced -stubs does: a folder that
// marketplaced -record wrote plays the real API's answers back
// (docs/recording.md). They are part of the state Reset restores.
func WithStubs(path string) Option {
	return func(c *config) { c.stubs = append(c.stubs, path) }
}

// WithPrivateCallbacks says whether notification callbacks may reach
// loopback and private addresses: on by default, since the receivers of a
// test are most often an httptest.Server.
func WithPrivateCallbacks(allow bool) Option {
	return func(c *config) { c.privateCallback = allow }
}

// NewServer starts a server for the test t and stops it when the test
// ends. It fails the test when the server cannot start or a fixture is
// refused.
//
// Every answer of the server is checked against the API's OpenAPI document
// (GET /openapi.json): one that breaks it fails t with the route, the
// status and what does not match.
func NewServer(t testing.TB, opts ...Option) *Server {
	t.Helper()
	opts = append(opts, func(c *config) { c.check = func(problem string) { t.Error(problem) } })
	s, err := Start(opts...)
	if err != nil {
		t.Fatalf("marketplacetest: %v", err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("marketplacetest: %v", err)
		}
	})
	return s
}

// Start starts a server that the caller stops with Close: for a TestMain
// that shares one server between tests, or a program. NewServer is the
// usual way in a test.
func Start(opts ...Option) (*Server, error) {
	c := config{start: DefaultStart, privateCallback: true}
	for _, o := range opts {
		o(&c)
	}
	for _, path := range c.files {
		b, err := os.ReadFile(path)
		if err != nil {
			return nil, fmt.Errorf("fixtures: %w", err)
		}
		d, err := fixtures.Parse(b)
		if err != nil {
			return nil, fmt.Errorf("fixtures %s: %w", path, err)
		}
		c.docs = append(c.docs, d)
	}
	clk := clock.NewManual(c.start)
	m, err := marketplace.New(memory.New(), marketplace.Options{
		Clock:         clk,
		Notifications: notify.Options{AllowPrivateCallbacks: c.privateCallback},
	})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	demo, err := m.EnsureDemo(ctx)
	if err != nil {
		return nil, errors.Join(fmt.Errorf("accounts: %w", err), m.Close())
	}
	s := &Server{
		Marketplace:   m,
		Clock:         clk,
		Seller:        User{User: demo.Seller, Token: demo.SellerToken, Stores: demo.Stores},
		Buyer:         User{User: demo.Buyer, Token: demo.BuyerToken},
		OperatorToken: "marketplacetest-operator-" + randomHex(),
	}
	for i, d := range c.docs {
		res, err := m.LoadFixtures(ctx, d)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("fixtures %d: %w", i+1, err), m.Close())
		}
		s.Fixtures = merge(s.Fixtures, res)
	}
	for _, path := range c.stubs {
		if err := loadStubs(ctx, m, path); err != nil {
			return nil, errors.Join(err, m.Close())
		}
	}
	snap, err := m.CreateSnapshot(ctx, InitialSnapshot)
	if err != nil {
		return nil, errors.Join(err, m.Close())
	}
	s.initial = snap.ID
	s.start = c.start

	// A test kit's journal keeps bodies and headers, for CountRequests
	// and FindRequests.
	s.journal = journal.NewWithBodies(journal.DefaultSize, journal.Bodies{})
	ts := httptest.NewServer(httpapi.New(m, httpapi.Config{OperatorToken: s.OperatorToken, CheckResponse: c.check, Journal: s.journal}))
	s.URL = ts.URL
	s.Operator = s.Client(s.OperatorToken)
	bg, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() { done <- m.Start(bg) }()
	s.stop = func() error {
		ts.Close()
		cancel()
		err := <-done
		if errors.Is(err, context.Canceled) {
			err = nil
		}
		return errors.Join(err, m.Close())
	}
	return s, nil
}

// loadStubs loads the mappings of path: a file, or every .json file of a
// folder, in name order.
func loadStubs(ctx context.Context, m *marketplace.Marketplace, path string) error {
	files := []string{path}
	if st, err := os.Stat(path); err != nil {
		return fmt.Errorf("stubs: %w", err)
	} else if st.IsDir() {
		if files, err = filepath.Glob(filepath.Join(path, "*.json")); err != nil {
			return fmt.Errorf("stubs: %w", err)
		}
		slices.Sort(files)
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("stubs: %w", err)
		}
		if _, err := m.Stubs.Load(ctx, b); err != nil {
			return fmt.Errorf("stubs %s: %w", f, err)
		}
	}
	return nil
}

// InitialSnapshot is the name of the snapshot of the state that Start
// made, which Reset restores.
const InitialSnapshot = "marketplacetest initial state"

// Close stops the server: the HTTP listener, then the background work,
// then the engine.
func (s *Server) Close() error {
	s.closeOnce.Do(func() { s.closeErr = s.stop() })
	return s.closeErr
}

// Reset puts the server back in the state Start left it in: the seller,
// the buyer and the fixtures, with the same ids, and nothing else. The
// clock stays where it is; ResetClock also brings it back to the start.
func (s *Server) Reset() error {
	return s.Marketplace.RestoreSnapshot(context.Background(), s.initial)
}

func merge(a, b fixtures.Result) fixtures.Result {
	if a.Users == nil {
		return b
	}
	for k, v := range b.Users {
		a.Users[k] = v
	}
	for k, v := range b.Stores {
		a.Stores[k] = v
	}
	for k, v := range b.Items {
		a.Items[k] = v
	}
	for k, v := range b.Questions {
		a.Questions[k] = v
	}
	for k, v := range b.Orders {
		a.Orders[k] = v
	}
	for k, v := range b.Applications {
		a.Applications[k] = v
	}
	return a
}

// PlaceOrder makes a sale through the engine (srv.Marketplace.Sales), as a
// buyer buying on the website would: in.BuyerID buys in.Quantity units of
// in.ItemID, paid unless in.Status says payment_required. A zero BuyerID
// is srv.Buyer. The seller's applications hear of it (orders_v2,
// shipments, items, stock-location) as of any sale. It fails t when the
// sale is refused.
func (s *Server) PlaceOrder(t testing.TB, in sales.NewOrder) sales.Order {
	t.Helper()
	if in.BuyerID == 0 {
		in.BuyerID = s.Buyer.ID
	}
	o, err := s.Marketplace.Sales.PlaceOrder(context.Background(), in)
	if err != nil {
		t.Fatalf("marketplacetest: place order of %d units of item %s: %v", in.Quantity, in.ItemID, err)
	}
	return o
}

// PayOrder records the approved payment of a payment_required order: its
// units leave stock and its shipment is ready to ship. It fails t when the
// payment is refused.
func (s *Server) PayOrder(t testing.TB, orderID int64) sales.Order {
	t.Helper()
	o, err := s.Marketplace.Sales.Pay(context.Background(), orderID, sales.PaymentInput{Status: "approved"})
	if err != nil {
		t.Fatalf("marketplacetest: pay order %d: %v", orderID, err)
	}
	return o
}

// MoveShipment moves a shipment one step along its flow (pending, handling,
// ready_to_ship, shipped, then delivered or not_delivered; cancelled before
// it ships), with an optional substatus of the new status. It fails t when
// the move is refused.
func (s *Server) MoveShipment(t testing.TB, shipmentID int64, status string, substatus ...string) sales.Shipment {
	t.Helper()
	move := sales.ShipmentMove{Status: status}
	if len(substatus) > 0 {
		move.Substatus = substatus[0]
	}
	sh, err := s.Marketplace.Sales.MoveShipment(context.Background(), shipmentID, move)
	if err != nil {
		t.Fatalf("marketplacetest: move shipment %d to %s: %v", shipmentID, status, err)
	}
	return sh
}

// CancelOrder cancels an order: the units of a paid one go back to the
// store they left, its payment is refunded, and its shipment is cancelled
// unless it has shipped. It fails t when the order is already cancelled or
// does not exist.
func (s *Server) CancelOrder(t testing.TB, orderID int64) sales.Order {
	t.Helper()
	o, err := s.Marketplace.Sales.Cancel(context.Background(), orderID)
	if err != nil {
		t.Fatalf("marketplacetest: cancel order %d: %v", orderID, err)
	}
	return o
}

func randomHex() string {
	b := make([]byte, 12)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}

// Client sends requests to the server with one access token.
type Client struct {
	URL   string
	Token string
	HTTP  *http.Client
}

// Client returns a client that sends token ("" sends none).
func (s *Server) Client(token string) *Client {
	return &Client{URL: s.URL, Token: token, HTTP: http.DefaultClient}
}

// Response is an answer read whole.
type Response struct {
	Status int
	Header http.Header
	Body   []byte
}

// Decode decodes the body as JSON into v.
func (r *Response) Decode(v any) error { return json.Unmarshal(r.Body, v) }

// Do sends method path (with its query) and body: nil sends none, a string
// or []byte is sent as it is, anything else as JSON. DoWith also sends
// headers.
func (c *Client) Do(ctx context.Context, method, path string, body any) (*Response, error) {
	return c.DoWith(ctx, method, path, body, nil)
}

// jsonOf is v as JSON: a string or bytes as they are, anything else
// encoded.
func jsonOf(t testing.TB, v any) []byte {
	t.Helper()
	switch x := v.(type) {
	case string:
		return []byte(x)
	case []byte:
		return x
	}
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatalf("encode %T: %v", v, err)
	}
	return b
}

// Stub adds a stub mapping in WireMock's JSON format (a string, bytes, or a
// value encoded as JSON) and returns its id; a mapping the server refuses
// fails the test:
//
//	srv.Stub(t, `{"request": {"method": "GET", "urlPath": "/claims/search"},
//		"response": {"status": 200, "jsonBody": {"data": []}}}`)
func (s *Server) Stub(t testing.TB, mapping any) string {
	t.Helper()
	m, err := s.Marketplace.Stubs.Create(context.Background(), jsonOf(t, mapping))
	if err != nil {
		t.Fatalf("stub: %v", err)
	}
	return m.ID
}

// pattern reads a request pattern in WireMock's format, failing t when it
// is not one.
func pattern(t testing.TB, p any) *stubs.Pattern {
	t.Helper()
	pt, err := stubs.ParsePattern(jsonOf(t, p))
	if err != nil {
		t.Fatalf("request pattern: %v", err)
	}
	return pt
}

// CountRequests returns how many of the requests the server answered (the
// last journal.DefaultSize) match the request pattern, in WireMock's format
// (a stub's "request"):
//
//	n := srv.CountRequests(t, `{"method": "POST", "urlPath": "/answers",
//		"bodyPatterns": [{"matchesJsonPath": "$.text"}]}`)
func (s *Server) CountRequests(t testing.TB, requestPattern any) int {
	t.Helper()
	p := pattern(t, requestPattern)
	return s.journal.Count(p)
}

// FindRequests returns the requests the server answered that match the
// request pattern, newest first, with their headers and bodies (tokens and
// secrets redacted).
func (s *Server) FindRequests(t testing.TB, requestPattern any) []journal.Entry {
	t.Helper()
	p := pattern(t, requestPattern)
	return s.journal.Find(p)
}
