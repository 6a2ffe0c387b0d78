package notify_test

import (
	"context"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace"
	"github.com/marketplace/marketplace/clock"
	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/teststore"
	"github.com/marketplace/marketplace/notify"
	"github.com/marketplace/marketplace/storage/badger"
)

// strictEnv is an engine that refuses private and loopback callbacks, the
// server's default.
func strictEnv(t *testing.T) *env {
	t.Helper()
	clk := clock.NewManual(start)
	m, err := marketplace.New(teststore.New(t), marketplace.Options{Clock: clk})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = m.Close() })
	return &env{t: t, ctx: context.Background(), m: m, clock: clk}
}

func TestCreateApplication_ReturnsIDAndSecretAndIsReadBack(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	seller := e.mustUser()
	app, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: " My app ", OwnerUserID: seller,
		CallbackURL: "http://127.0.0.1:9000/notifications", Topics: []string{"questions", "questions"}})
	is.NoErr(err)
	is.True(app.ID > 0)
	is.Equal(app.Name, "My app")
	is.Equal(app.Topics, []string{"questions"}) // duplicates removed
	is.Equal(len(app.Secret), 64)
	is.Equal(len(app.ClientSecret), 64) // the client secret, shown once
	got, err := e.m.Notify.Application(e.ctx, app.ID)
	is.NoErr(err)
	is.Equal(got.ClientSecret, "") // never read back
	got.ClientSecret = app.ClientSecret
	is.Equal(got, app)
	other := e.mustApp(seller, "http://127.0.0.1:9000/")
	is.True(other.ID != app.ID)
	is.True(other.Secret != app.Secret) // each application its own secret
}

func TestCreateApplication_InvalidInputIsRefusedAndChangesNothing(t *testing.T) {
	e := newEnv(t, notify.Options{})
	seller := e.mustUser()
	ok := notify.NewApplication{Name: "app", OwnerUserID: seller, CallbackURL: "http://127.0.0.1:9000/", Topics: []string{"questions"}}
	cases := []struct {
		name    string
		edit    func(*notify.NewApplication)
		message string
	}{
		{"NoName", func(a *notify.NewApplication) { a.Name = "  " }, "The fields [name] are required for requested call"},
		{"LongName", func(a *notify.NewApplication) { a.Name = strings.Repeat("x", 101) }, "The field [name] must be at most 100 characters"},
		{"NoOwner", func(a *notify.NewApplication) { a.OwnerUserID = 0 }, "The fields [owner_user_id] are required for requested call"},
		{"NegativeOwner", func(a *notify.NewApplication) { a.OwnerUserID = -5 }, "Invalid owner_user_id: -5. It must be a positive integer"},
		{"ControlCharacterInName", func(a *notify.NewApplication) { a.Name = "app\x00" }, "The field [name] must not contain control characters"},
		{"PortTooHigh", func(a *notify.NewApplication) { a.CallbackURL = "http://127.0.0.1:99999/" }, "Invalid callback_url: http://127.0.0.1:99999/. The port must be between 1 and 65535"},
		{"PortZero", func(a *notify.NewApplication) { a.CallbackURL = "http://127.0.0.1:0/" }, "Invalid callback_url: http://127.0.0.1:0/. The port must be between 1 and 65535"},
		{"UnknownOwner", func(a *notify.NewApplication) { a.OwnerUserID = 999 }, "Invalid owner_user_id: user 999 does not exist"},
		{"UnknownTopic", func(a *notify.NewApplication) { a.Topics = []string{"orders"} }, `Invalid topic: "orders". Valid topics are: questions, orders_v2, shipments, items, stock-location, messages, post_purchase, orders_feedback`},
		{"NoCallback", func(a *notify.NewApplication) { a.CallbackURL = "" }, "The fields [callback_url] are required for requested call"},
		{"FTP", func(a *notify.NewApplication) { a.CallbackURL = "ftp://127.0.0.1/x" }, "Invalid callback_url: ftp://127.0.0.1/x. It must be an absolute http or https URL"},
		{"Relative", func(a *notify.NewApplication) { a.CallbackURL = "/hook" }, "Invalid callback_url: /hook. It must be an absolute http or https URL"},
		{"TooLong", func(a *notify.NewApplication) { a.CallbackURL = "http://127.0.0.1/" + strings.Repeat("a", 2048) }, "Invalid callback_url: it must be at most 2048 characters"},
		{"Credentials", func(a *notify.NewApplication) { a.CallbackURL = "http://u:p@127.0.0.1/" }, "Invalid callback_url: http://u:p@127.0.0.1/. It must not carry user credentials"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			in := ok
			c.edit(&in)
			_, err := e.m.Notify.CreateApplication(e.ctx, in)
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.Equal(errs.As(err).Message, c.message)
		})
	}
	is := is.New(t)
	app := e.mustApp(seller, "http://127.0.0.1:9000/")
	is.Equal(app.ID, int64(1000001)) // no failed call took an id
}

func TestCallbackURL_LinkLocalAndMetadataAreAlwaysRefused(t *testing.T) {
	e := newEnv(t, notify.Options{}) // private callbacks allowed
	seller := e.mustUser()
	for _, u := range []string{
		"http://169.254.169.254/latest/meta-data/",
		"http://169.254.1.1/",
		"http://[fe80::1]/",
		"http://[::ffff:169.254.169.254]/",
		"http://100.100.100.200/",
		"http://[fd00:ec2::254]/",
		"http://metadata.google.internal/computeMetadata/v1/",
		"http://0.0.0.0:8080/",
		"http://224.0.0.1/",
		"http://[64:ff9b::a9fe:a9fe]/", // NAT64 of 169.254.169.254
		"http://[64:ff9b:1::a9fe:a9fe]/",
		"http://[::a9fe:a9fe]/",        // IPv4-compatible
		"http://[2002:a9fe:a9fe::1]/",  // 6to4
		"http://[64:ff9b::6464:64c8]/", // NAT64 of 100.100.100.200
	} {
		t.Run(u, func(t *testing.T) {
			is := is.New(t)
			_, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: seller, CallbackURL: u})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.True(strings.HasPrefix(errs.As(err).Message, "Callback URL not allowed: "))
		})
	}
}

// TestCallbackURL_SpecialPurposeRangesAreAlwaysRefused: the IANA
// special-purpose ranges that are neither private nor loopback reach no
// real receiver, with or without -allow-private-callbacks.
func TestCallbackURL_SpecialPurposeRangesAreAlwaysRefused(t *testing.T) {
	strict := strictEnv(t)
	loose := newEnv(t, notify.Options{})
	s1, s2 := strict.mustUser(), loose.mustUser()
	for _, u := range []string{
		"http://198.18.0.1/",             // benchmarking
		"http://198.19.255.254/",         // benchmarking, upper half
		"http://240.0.0.1/",              // reserved
		"http://192.0.0.8/",              // IETF protocol assignments
		"http://192.0.2.10/",             // TEST-NET-1
		"http://198.51.100.7/",           // TEST-NET-2
		"http://203.0.113.5/",            // TEST-NET-3
		"http://[2001:db8::1]/",          // IPv6 documentation
		"http://[2001:0:4136:e378::1]/",  // Teredo
		"http://[64:ff9b::c000:20a]/",    // NAT64 of 192.0.2.10
		"http://[2002:cb00:7105::1]/",    // 6to4 of 203.0.113.5
		"http://[::ffff:198.18.0.1]/",    // IPv4-mapped benchmarking
		"http://[3fff::1]/",              // IPv6 documentation (RFC 9637)
		"http://[2620:4f:8000::1]/",      // AS112
		"http://[2001:2::1]/",            // IPv6 benchmarking
		"http://[100::1]/",               // discard-only, outside global unicast
		"http://192.88.99.1/",            // 6to4 relay anycast
		"http://192.31.196.1/",           // AS112-v4
		"http://[2001:10::1]/",           // ORCHID
		"http://[2001:20::1]/",           // ORCHIDv2
		"http://192.175.48.1/",           // AS112 direct delegation
		"http://192.52.193.1/",           // AMT
		"http://[5f00::1]/",              // SRv6 SIDs
		"http://[2001:4:112::1]/",        // AS112-v6
		"http://[2001:1::1]/",            // port control protocol anycast
		"http://[2001:3::1]/",            // AMT
		"http://[ff02::1]/",              // multicast
		"http://[::ffff:240.0.0.1]/",     // IPv4-mapped reserved
		"http://[64:ff9b:1::c633:6407]/", // local NAT64 of 198.51.100.7
	} {
		t.Run(u, func(t *testing.T) {
			is := is.New(t)
			_, err := strict.m.Notify.CreateApplication(strict.ctx, notify.NewApplication{Name: "a", OwnerUserID: s1, CallbackURL: u})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.True(strings.HasPrefix(errs.As(err).Message, "Callback URL not allowed: "))
			_, err = loose.m.Notify.CreateApplication(loose.ctx, notify.NewApplication{Name: "a", OwnerUserID: s2, CallbackURL: u})
			is.Equal(errs.KindOf(err), errs.Invalid) // refused with the option too
		})
	}
}

func TestCallbackURL_PrivateAndLoopbackNeedTheOption(t *testing.T) {
	strict := strictEnv(t)
	loose := newEnv(t, notify.Options{})
	s1, s2 := strict.mustUser(), loose.mustUser()
	for _, u := range []string{
		"http://127.0.0.1:8080/hook",
		"http://localhost:8080/hook",
		"http://[::1]/hook",
		"http://10.1.2.3/",
		"https://172.16.0.1/",
		"http://192.168.1.10/",
		"http://100.64.0.1/",
		"http://[fd12::1]/",
		"http://[fec0::1]/",           // site-local
		"http://[64:ff9b::7f00:1]/",   // NAT64 of 127.0.0.1
		"http://[::ffff:10.0.0.1]/",   // IPv4-mapped
		"http://[2002:c0a8:0101::1]/", // 6to4 of 192.168.1.1
	} {
		t.Run(u, func(t *testing.T) {
			is := is.New(t)
			_, err := strict.m.Notify.CreateApplication(strict.ctx, notify.NewApplication{Name: "a", OwnerUserID: s1, CallbackURL: u})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.True(strings.Contains(errs.As(err).Message, "allowed only with -allow-private-callbacks"))
			_, err = loose.m.Notify.CreateApplication(loose.ctx, notify.NewApplication{Name: "a", OwnerUserID: s2, CallbackURL: u})
			is.NoErr(err) // allowed with the option
		})
	}
	is := is.New(t)
	_, err := strict.m.Notify.CreateApplication(strict.ctx, notify.NewApplication{Name: "a", OwnerUserID: s1, CallbackURL: "https://8.8.8.8/hook"})
	is.NoErr(err) // a public address is fine
	for _, u := range []string{"http://[2001:4860:4860::8888]/", "http://[64:ff9b::808:808]/"} {
		_, err = strict.m.Notify.CreateApplication(strict.ctx, notify.NewApplication{Name: "a", OwnerUserID: s1, CallbackURL: u})
		is.NoErr(err) // public IPv6, and the NAT64 form of a public IPv4
	}
}

func TestCallbackURL_UpdateIsCheckedLikeCreation(t *testing.T) {
	is := is.New(t)
	e := strictEnv(t)
	seller := e.mustUser()
	app, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: seller, CallbackURL: "https://8.8.8.8/hook"})
	is.NoErr(err)
	bad := "http://127.0.0.1/"
	_, err = e.m.Notify.UpdateApplication(e.ctx, app.ID, notify.ApplicationUpdate{CallbackURL: &bad})
	is.Equal(errs.KindOf(err), errs.Invalid)
	got, err := e.m.Notify.Application(e.ctx, app.ID)
	is.NoErr(err)
	is.Equal(got.CallbackURL, "https://8.8.8.8/hook") // unchanged
	topics := []string{}
	got, err = e.m.Notify.UpdateApplication(e.ctx, app.ID, notify.ApplicationUpdate{Topics: &topics})
	is.NoErr(err)
	is.Equal(got.Topics, []string{})
	is.Equal(got.CallbackURL, "https://8.8.8.8/hook")
	_, err = e.m.Notify.UpdateApplication(e.ctx, app.ID+1, notify.ApplicationUpdate{Topics: &topics})
	is.Equal(errs.KindOf(err), errs.NotFound)
}

// TestCallbackURL_RefusedAddressIsCheckedAgainAtDelivery stores an
// application whose host now points to loopback (as if its DNS answer had
// changed since registration): the dial check refuses it.
func TestCallbackURL_RefusedAddressIsCheckedAgainAtDelivery(t *testing.T) {
	is := is.New(t)
	e := strictEnv(t)
	rcv := newReceiver(t, always(http.StatusOK))
	seller := e.mustUser()
	app := notify.Application{ID: 77, Name: "a", OwnerUserID: seller, CallbackURL: rcv.URL, Topics: []string{"questions"}, Secret: "s"}
	is.NoErr(notify.PutApplication(e.ctx, e.m.Store(), app))
	e.emit(seller, "/questions/1")
	e.process()
	is.Equal(len(rcv.got()), 0) // never reached
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(len(attempts), 1)
	is.Equal(attempts[0].Response.HTTPCode, 0)
	is.True(strings.Contains(attempts[0].Response.Error, "refused: a loopback address"))
}

// TestCallbackURL_NameThatDoesNotResolveIsAcceptedAndItsPOSTsFail: a host
// may be published after its application is registered, and the server may
// run without DNS; the dial check still guards every POST.
func TestCallbackURL_NameThatDoesNotResolveIsAcceptedAndItsPOSTsFail(t *testing.T) {
	is := is.New(t)
	e := strictEnv(t)
	seller := e.mustUser()
	// .invalid never resolves (RFC 6761).
	app, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: seller,
		CallbackURL: "https://receiver.invalid/hook", Topics: []string{"questions"}})
	is.NoErr(err)
	is.Equal(app.CallbackURL, "https://receiver.invalid/hook")
	e.emit(seller, "/questions/1")
	e.process()
	attempts, _, err := e.m.Notify.Attempts(e.ctx, app.ID, 0, 10)
	is.NoErr(err)
	is.Equal(len(attempts), 1)
	is.Equal(attempts[0].Response.HTTPCode, 0) // no answer: a failed attempt
	is.Equal(attempts[0].Outcome, notify.OutcomeRetry)
	is.True(attempts[0].Response.Error != "")
}

func TestCallbackURL_NumericHostsThatAreNotCanonicalAddressesAreRefused(t *testing.T) {
	e := newEnv(t, notify.Options{}) // even with private callbacks allowed
	seller := e.mustUser()
	for _, h := range []string{"2130706433", "0177.0.0.1", "127.1", "0x7f.1", "0x7f000001", "10.0.0.010", "a.b.1"} {
		t.Run(h, func(t *testing.T) {
			is := is.New(t)
			u := "http://" + h + "/hook"
			_, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: seller, CallbackURL: u})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.Equal(errs.As(err).Message, "Invalid callback_url: "+u+". The host "+h+" is not a valid address")
		})
	}
	is := is.New(t)
	_, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: seller, CallbackURL: "http://receiver1.localhost/"})
	is.NoErr(err) // digits inside a name are fine
}

func TestCreateApplication_IDsStartAt1000001AndComeFromTheSequence(t *testing.T) {
	is := is.New(t)
	e := newEnv(t, notify.Options{})
	seller := e.mustUser()
	first, second := e.mustApp(seller, "http://127.0.0.1:9000/"), e.mustApp(seller, "http://127.0.0.1:9000/")
	is.Equal(first.ID, int64(1000001))
	is.Equal(second.ID, int64(1000002))
	_, err := e.m.Store().Sequence(notify.ApplicationSequence)
	is.NoErr(err)
}

// TestCreateApplication_ConcurrentRegistrationsDoNotConflict registers
// applications from many goroutines on Badger: no key is written by every
// registration, so no transaction is run again.
func TestCreateApplication_ConcurrentRegistrationsDoNotConflict(t *testing.T) {
	is := is.New(t)
	st, err := badger.Open(t.TempDir(), badger.Options{})
	is.NoErr(err)
	t.Cleanup(func() { _ = st.Close() })
	m, err := marketplace.New(st, marketplace.Options{Clock: clock.NewManual(start),
		Notifications: notify.Options{AllowPrivateCallbacks: true}})
	is.NoErr(err)
	e := &env{t: t, ctx: context.Background(), m: m}
	seller := e.mustUser()
	before := st.Conflicts()
	const n = 64
	ids := make(chan int64, n)
	var wg sync.WaitGroup
	for i := 0; i < n; i++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			app, err := m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "app", OwnerUserID: seller,
				CallbackURL: "http://127.0.0.1:9000/", Topics: []string{notify.TopicQuestions}})
			if err != nil {
				t.Error(err)
				return
			}
			ids <- app.ID
		}()
	}
	wg.Wait()
	close(ids)
	seen := map[int64]bool{}
	for id := range ids {
		is.True(!seen[id]) // every id once
		seen[id] = true
	}
	is.Equal(len(seen), n)
	is.Equal(st.Conflicts()-before, uint64(0)) // no registration ran twice
}

// callbackShapeRefusals are callback URLs refused at registration for the
// characters they are written with, whatever address they would reach.
var callbackShapeRefusals = []struct{ name, url, message string }{
	{"PercentEncodedTabInHost", "http://127.0.0.1%2509:18199/",
		"Invalid callback_url: http://127.0.0.1%2509:18199/. The host must not contain percent-encoded characters"},
	{"PercentEncodedLetterInHost", "http://ex%C3%B1ample.com/hook",
		"Invalid callback_url: http://ex%C3%B1ample.com/hook. The host must not contain percent-encoded characters"},
	{"IPv6Zone", "http://[fe80::1%25eth0]:8080/",
		"Invalid callback_url: http://[fe80::1%25eth0]:8080/. The host must not contain percent-encoded characters"},
	{"NULInHost", "http://127.0.0.1\x00.example.com/", "Invalid callback_url: it must not contain control or formatting characters"},
	{"TabInPath", "http://127.0.0.1:9000/a\tb", "Invalid callback_url: it must not contain control or formatting characters"},
	{"DELInPath", "http://127.0.0.1:9000/\x7f", "Invalid callback_url: it must not contain control or formatting characters"},
	{"C1InHost", "http://exa\u0085mple.com/", "Invalid callback_url: it must not contain control or formatting characters"},
	{"ZeroWidthSpaceInHost", "http://exa\u200bmple.com/", "Invalid callback_url: it must not contain control or formatting characters"},
	{"BidiOverrideInPath", "http://127.0.0.1:9000/\u202ekoob", "Invalid callback_url: it must not contain control or formatting characters"},
	{"SymbolInHost", "http://exa!mple.com/", "Invalid callback_url: http://exa!mple.com/. The host exa!mple.com is not a valid address"},
	{"NoBreakSpaceInHost", "http://exa\u00a0mple.com/", "Invalid callback_url: http://exa\u00a0mple.com/. The host exa\u00a0mple.com is not a valid address"},
}

func TestCallbackURL_HostWithPercentEncodingOrControlCharactersIsRefusedAtCreation(t *testing.T) {
	e := newEnv(t, notify.Options{}) // private callbacks allowed: only the shape is at fault
	seller := e.mustUser()
	for _, c := range callbackShapeRefusals {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: "a", OwnerUserID: seller, CallbackURL: c.url})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.Equal(errs.As(err).Message, c.message)
		})
	}
	is := is.New(t)
	app := e.mustApp(seller, "http://exñample.localhost:9000/hook?a=%20b")
	is.Equal(app.ID, int64(1000001))                                             // no refused call took an id
	is.Equal(app.CallbackURL, "http://ex%C3%B1ample.localhost:9000/hook?a=%20b") // a name written in Unicode is taken
}

func TestCallbackURL_HostWithPercentEncodingOrControlCharactersIsRefusedAtUpdate(t *testing.T) {
	e := newEnv(t, notify.Options{})
	seller := e.mustUser()
	app := e.mustApp(seller, "http://127.0.0.1:9000/")
	for _, c := range callbackShapeRefusals {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			u := c.url
			_, err := e.m.Notify.UpdateApplication(e.ctx, app.ID, notify.ApplicationUpdate{CallbackURL: &u})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.Equal(errs.As(err).Message, c.message)
			got, err := e.m.Notify.Application(e.ctx, app.ID)
			is.NoErr(err)
			is.Equal(got.CallbackURL, "http://127.0.0.1:9000/") // unchanged
		})
	}
}

func TestCreateApplication_NameWithControlBidiOrOnlyInvisibleCharactersIsRefused(t *testing.T) {
	e := newEnv(t, notify.Options{})
	seller := e.mustUser()
	for _, c := range []struct{ name, value, message, code string }{
		{"ControlCharacter", "app\x1b", "The field [name] must not contain control characters", "text.control_character"},
		{"LineFeed", "my\napp", "The field [name] must not contain control characters", "text.control_character"},
		{"C1Control", "app\u0090", "The field [name] must not contain control characters", "text.control_character"},
		{"BidiOverride", "app\u202d", "The field [name] must not contain bidirectional control characters", "text.bidi_control"},
		{"BidiIsolate", "\u2066app", "The field [name] must not contain bidirectional control characters", "text.bidi_control"},
		{"OnlyInvisible", "\u200b\ufeff", "The field [name] must have visible characters", "text.invisible_only"},
	} {
		t.Run(c.name, func(t *testing.T) {
			is := is.New(t)
			_, err := e.m.Notify.CreateApplication(e.ctx, notify.NewApplication{Name: c.value, OwnerUserID: seller,
				CallbackURL: "http://127.0.0.1:9000/", Topics: []string{"questions"}})
			is.Equal(errs.KindOf(err), errs.Invalid)
			is.Equal(errs.As(err).Message, c.message)
			is.Equal(len(errs.As(err).Causes), 1)
			is.Equal(errs.As(err).Causes[0].Code, c.code)
		})
	}
	is := is.New(t)
	is.Equal(e.mustApp(seller, "http://127.0.0.1:9000/").ID, int64(1000001)) // no refused call took an id
}

// TestCallbackURL_AHostInOtherUnicodeFormsIsCheckedAsTheAddressItMeans:
// the HTTP client maps a host written in Unicode before it dials
// (IDNA's UTS #46 mapping: full-width and mathematical digits and letters
// become ASCII), so registration maps it the same way and applies the
// dial-time address policy to the result, with the same answers as for
// the host written in ASCII; a host the mapping refuses (punycode of such
// characters, digits of other scripts) is no valid address.
func TestCallbackURL_AHostInOtherUnicodeFormsIsCheckedAsTheAddressItMeans(t *testing.T) {
	strict := strictEnv(t)
	loose := newEnv(t, notify.Options{})
	s1, s2 := strict.mustUser(), loose.mustUser()
	const needsOption = " (allowed only with -allow-private-callbacks)"
	for _, c := range []struct{ url, strict, loose string }{
		{"http://１２７.０.０.１:19751/", "Callback URL not allowed: 127.0.0.1 is a loopback address" + needsOption, ""}, // full-width
		{"http://𝟏𝟐𝟕.𝟎.𝟎.𝟏/", "Callback URL not allowed: 127.0.0.1 is a loopback address" + needsOption, ""},       // mathematical bold
		{"http://1２7.0.0.1/", "Callback URL not allowed: 127.0.0.1 is a loopback address" + needsOption, ""},
		{"http://１０.０.０.５/", "Callback URL not allowed: 10.0.0.5 is a private address" + needsOption, ""},
		{"http://１９２.１６８.１.１/hook", "Callback URL not allowed: 192.168.1.1 is a private address" + needsOption, ""},
		{"http://ｌｏｃａｌｈｏｓｔ:9000/", "Callback URL not allowed: localhost is a loopback address" + needsOption, ""},
		{"http://ａｐｐ.ＬＯＣＡＬＨＯＳＴ/", "Callback URL not allowed: app.localhost is a loopback address" + needsOption, ""},
		{"http://１６９.２５４.１６９.２５４/", "Callback URL not allowed: 169.254.169.254 is a link-local address",
			"Callback URL not allowed: 169.254.169.254 is a link-local address"},
		{"http://ｍｅｔａｄａｔａ.google.internal/", "Callback URL not allowed: metadata.google.internal is a cloud metadata address",
			"Callback URL not allowed: metadata.google.internal is a cloud metadata address"},
		{"http://０.０.０.０/", "Callback URL not allowed: 0.0.0.0 is an unspecified address",
			"Callback URL not allowed: 0.0.0.0 is an unspecified address"},
		{"http://１２７.1/", "Invalid callback_url: http://１２７.1/. The host 127.1 is not a valid address",
			"Invalid callback_url: http://１２７.1/. The host 127.1 is not a valid address"},
		{"http://０ｘ７ｆ.1/", "Invalid callback_url: http://０ｘ７ｆ.1/. The host 0x7f.1 is not a valid address",
			"Invalid callback_url: http://０ｘ７ｆ.1/. The host 0x7f.1 is not a valid address"},
		{"http://xn--8g7ccp.0.0.1/", "Invalid callback_url: http://xn--8g7ccp.0.0.1/. The host xn--8g7ccp.0.0.1 is not a valid address", // punycode of "１２７"
			"Invalid callback_url: http://xn--8g7ccp.0.0.1/. The host xn--8g7ccp.0.0.1 is not a valid address"},
		{"http://١٢٧.٠.٠.١/", "Invalid callback_url: http://١٢٧.٠.٠.١/. The host ١٢٧.٠.٠.١ is not a valid address", // Arabic-Indic digits
			"Invalid callback_url: http://١٢٧.٠.٠.١/. The host ١٢٧.٠.٠.١ is not a valid address"},
		{"https://８.８.８.８/hook", "", ""}, // public
	} {
		t.Run(c.url, func(t *testing.T) {
			for _, e := range []struct {
				env     *env
				seller  int64
				message string
			}{{strict, s1, c.strict}, {loose, s2, c.loose}} {
				is := is.New(t)
				_, err := e.env.m.Notify.CreateApplication(e.env.ctx, notify.NewApplication{Name: "a", OwnerUserID: e.seller, CallbackURL: c.url})
				if e.message == "" {
					is.NoErr(err)
					continue
				}
				is.Equal(errs.KindOf(err), errs.Invalid)
				is.Equal(errs.As(err).Message, e.message)
			}
		})
	}
	is := is.New(t)
	app, err := strict.m.Notify.CreateApplication(strict.ctx, notify.NewApplication{Name: "a", OwnerUserID: s1, CallbackURL: "https://8.8.8.8/hook"})
	is.NoErr(err)
	bad := "http://１２７.０.０.１:19751/"
	_, err = strict.m.Notify.UpdateApplication(strict.ctx, app.ID, notify.ApplicationUpdate{CallbackURL: &bad})
	is.Equal(errs.KindOf(err), errs.Invalid) // an update too
}
