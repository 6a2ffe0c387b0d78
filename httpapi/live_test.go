package httpapi_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/marketplace/marketplace/marketplacetest"
)

// liveServer is the marketplace as an outside client meets it: the
// marketplacetest server on a loopback listener, with its answers read into
// this package's response. Tests that go through a real HTTP client (an
// OAuth library, a browser, the network stack's headers) use it; the rest
// call the handler in process through testServer.
type liveServer struct {
	*marketplacetest.Server
	t testing.TB
}

func newLiveServer(t testing.TB) *liveServer {
	t.Helper()
	return &liveServer{Server: marketplacetest.NewServer(t), t: t}
}

// do sends a request over HTTP; body may be nil, a string (sent as is) or a
// value encoded as JSON; token "" sends none.
func (ls *liveServer) do(method, path, token string, body any) response {
	ls.t.Helper()
	r, err := ls.Client(token).Do(context.Background(), method, path, body)
	if err != nil {
		ls.t.Fatalf("%s %s: %v", method, path, err)
	}
	res := response{Status: r.Status, Header: r.Header, Raw: r.Body}
	if len(res.Raw) > 0 {
		if err := json.Unmarshal(res.Raw, &res.Body); err != nil {
			ls.t.Fatalf("%s %s: answer is not JSON: %v: %s", method, path, err, res.Raw)
		}
	}
	return res
}

func (ls *liveServer) tb() testing.TB { return ls.t }

func (ls *liveServer) operator(method, path string, body any) response {
	ls.t.Helper()
	return ls.do(method, path, ls.OperatorToken, body)
}

func (ls *liveServer) mustUser(site string, tags ...string) user {
	ls.t.Helper()
	return createUser(ls, site, tags...)
}

func (ls *liveServer) mustOAuthApp(owner int64, redirect string) oauthApp {
	ls.t.Helper()
	return createOAuthApp(ls, owner, redirect)
}

func (ls *liveServer) mustCode(app oauthApp, userID int64, redirect string, extra map[string]any) string {
	ls.t.Helper()
	return createCode(ls, app, userID, redirect, extra)
}

func (ls *liveServer) mustFault(rule map[string]any) map[string]any {
	ls.t.Helper()
	return createFault(ls, rule)
}
