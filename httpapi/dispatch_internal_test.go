package httpapi

import (
	"net/http"
	"strings"
	"testing"

	"github.com/julienschmidt/httprouter"
)

func TestDispatch_AStaticSegmentWinsOverAParameterAndParametersKeepTheirRoutesNames(t *testing.T) {
	var d dispatcher
	hit := ""
	add := func(path string) {
		segs := strings.Split(strings.Trim(path, "/"), "/")
		m := mounted{segments: segs, h: func(http.ResponseWriter, *http.Request, httprouter.Params) { hit = path }}
		for _, s := range segs {
			if !strings.HasPrefix(s, ":") {
				m.statics++
			}
		}
		d.routes = append(d.routes, m)
	}
	add("/messages/:message_id")
	add("/messages/unread")
	add("/messages/packs/:pack_id/sellers/:seller_id")
	add("/messages/unread/packs/:pack_id/sellers/:seller_id")

	for _, c := range []struct{ path, route, params string }{
		{"/messages/unread", "/messages/unread", ""},
		{"/messages/abc", "/messages/:message_id", "message_id=abc"},
		{"/messages/packs/7/sellers/9", "/messages/packs/:pack_id/sellers/:seller_id", "pack_id=7 seller_id=9"},
		{"/messages/unread/packs/7/sellers/9", "/messages/unread/packs/:pack_id/sellers/:seller_id", "pack_id=7 seller_id=9"},
	} {
		h, p := d.match(c.path)
		if h == nil {
			t.Errorf("%s: no route", c.path)
			continue
		}
		hit = ""
		h(nil, nil, p)
		var got []string
		for _, kv := range p {
			got = append(got, kv.Key+"="+kv.Value)
		}
		if hit != c.route || strings.Join(got, " ") != c.params {
			t.Errorf("%s: served by %s with %v, want %s with %s", c.path, hit, got, c.route, c.params)
		}
	}
	for _, path := range []string{"/messages", "/messages/packs/7/sellers", "/messages//", "/messages/packs/7/buyers/9", "/messages/a/b/c/d/e/f"} {
		if h, _ := d.match(path); h != nil {
			t.Errorf("%s: matched a route", path)
		}
	}
}
