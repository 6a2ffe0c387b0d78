package httpapi_test

import (
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"strings"
	"testing"
)

// writeTargets are the write routes with the ids and token that get a
// request past the router and authentication to the body decoder.
func (w *robustWorld) writeTargets() []robustRequest {
	op, seller, plain, buyer := testOperatorToken, w.tagged.Token, w.plain.Token, w.buyr.Token
	return []robustRequest{
		{method: "POST", target: "/items", headers: bearer(plain)},
		{method: "POST", target: "/items/multiwarehouse", headers: bearer(seller)},
		{method: "PUT", target: "/items/" + w.plainItm, headers: bearer(plain)},
		{method: "PUT", target: "/user-products/" + w.userProduct + "/stock/type/seller_warehouse", headers: bearer(seller, "x-version", "0")},
		{method: "POST", target: "/questions", headers: bearer(buyer)},
		{method: "POST", target: "/answers", headers: bearer(plain)},
		{method: "POST", target: "/my/questions/hidden", headers: bearer(plain)},
		{method: "POST", target: fmt.Sprintf("/users/%d/questions_blacklist", w.plain.ID), headers: bearer(plain)},
		{method: "PUT", target: fmt.Sprintf("/operator/questions/%d", w.question), headers: bearer(op)},
		{method: "POST", target: "/operator/users", headers: bearer(op)},
		{method: "PUT", target: fmt.Sprintf("/operator/users/%d/tags", w.plain.ID), headers: bearer(op)},
		{method: "POST", target: fmt.Sprintf("/operator/users/%d/stores", w.tagged.ID), headers: bearer(op)},
		{method: "PUT", target: "/operator/reference", headers: bearer(op)},
		{method: "POST", target: "/operator/applications", headers: bearer(op)},
		{method: "PUT", target: fmt.Sprintf("/operator/applications/%d", w.appID), headers: bearer(op)},
		{method: "PUT", target: "/operator/clock", headers: bearer(op)},
	}
}

func bearer(token string, kv ...string) map[string]string {
	h := map[string]string{"Authorization": "Bearer " + token, "Content-Type": "application/json"}
	for i := 0; i+1 < len(kv); i += 2 {
		h[kv[i]] = kv[i+1]
	}
	return h
}

// routeFor returns the route of allRoutes a target was built from.
func routeFor(method, target string) route {
	segs := strings.Split(strings.Split(target, "?")[0], "/")
	for _, rt := range allRoutes {
		ps := strings.Split(rt.path, "/")
		if rt.method != method || len(ps) != len(segs) {
			continue
		}
		ok := true
		for i := range ps {
			if !strings.HasPrefix(ps[i], ":") && ps[i] != segs[i] {
				ok = false
				break
			}
		}
		if ok {
			return rt
		}
	}
	return route{method: method, path: target}
}

// FuzzWriteBodies sends arbitrary bodies to every write route: the JSON
// decoders and the rules behind them answer a clear 4xx or a success, never a
// 500, and keep the error shape.
func FuzzWriteBodies(f *testing.F) {
	w := newRobustWorld(f)
	targets := w.writeTargets()
	for i, tg := range targets {
		if tpl := w.template(routeFor(tg.method, tg.target)); tpl != nil {
			b, _ := json.Marshal(tpl)
			f.Add(uint8(i), b)
		}
		for _, b := range []string{"", "{}", "[]", "null", `{"price":"1e400"}`, `{"quantity":-1}`,
			`{"locations":[{"store_id":null,"quantity":1e400}]}`, `{"question_ids":[0,-1,9223372036854775808]}`,
			`{"records":[{"kind":"currency","data":null}]}`, `{"records":[{"kind":"fee_rule","data":{}}]}`,
			`{"now":"0000-01-01T00:00:00Z"}`, `{"tags":[null]}`, `{"user_id":"1"}`, `{"location":[]}`} {
			f.Add(uint8(i), []byte(b))
		}
	}
	f.Fuzz(func(t *testing.T, idx uint8, body []byte) {
		req := targets[int(idx)%len(targets)]
		req.body = body
		if err := checkAnswer(w.serve(req), w.log); err != nil {
			t.Fatalf("%s %s %q: %v", req.method, req.target, body, err)
		}
	})
}

// FuzzQueries sends arbitrary query strings, well-formed or not, to every
// route that reads one.
func FuzzQueries(f *testing.F) {
	w := newRobustWorld(f)
	ids := strings.NewReplacer(":user_id", strconv.FormatInt(w.tagged.ID, 10), ":site_id", "MLA",
		":question_id", "search", ":listing_type_id", "gold_special", ":country_id", "AR", ":domain_id", "MLA-SNEAKERS",
		":app_id", strconv.FormatInt(w.appID, 10))
	var targets []string
	for _, rt := range allRoutes {
		if rt.method == "GET" && len(rt.query) > 0 {
			targets = append(targets, ids.Replace(rt.path))
		}
	}
	for i := range targets {
		for _, q := range []string{"", "limit=1000&offset=0", "limit=1001", "offset=-1", "limit=%zz", "limit=1&limit=2",
			"api_version=4&sort_fields=date_created&sort_types=DESC", "sort_fields=x,y&sort_types=ASC", "seller_id=0",
			"totalDivisions=0&division=5", "totalDivisions=-3&division=-1", "price=1e400&quantity=-1", "from=ARS&to=USD",
			"zip_code_from=1000&zip_code_to=0999", "app_id=" + strconv.FormatInt(w.appID, 10) + "&topic=questions",
			"q=%C3%B1and%C3%BA&sort=price_desc", "tags=,,stock_location,", "offset=9223372036854775807"} {
			f.Add(uint8(i), q)
		}
	}
	f.Fuzz(func(t *testing.T, idx uint8, query string) {
		target := targets[int(idx)%len(targets)]
		req := robustRequest{method: "GET", target: target + "?" + query, headers: bearer(w.tagged.Token)}
		if _, err := url.ParseQuery(query); err == nil {
			// Also over the access_token parameter, a second way in.
			req.headers = map[string]string{}
			req.target += "&access_token=" + url.QueryEscape(w.tagged.Token)
		}
		if err := checkAnswer(w.serve(req), w.log); err != nil {
			t.Fatalf("GET %s: %v", req.target, err)
		}
	})
}

// FuzzPathParams sends arbitrary path parameters to every route that has
// one.
func FuzzPathParams(f *testing.F) {
	w := newRobustWorld(f)
	var routes []route
	for _, rt := range allRoutes {
		if strings.Contains(rt.path, ":") {
			routes = append(routes, rt)
		}
	}
	for i := range routes {
		for _, p := range []string{"", "0", "-1", "search", "me", "9223372036854775808", "ñandú", "%", "1e3", w.multiItem, w.userProduct} {
			f.Add(uint8(i), p)
		}
	}
	f.Fuzz(func(t *testing.T, idx uint8, param string) {
		rt := routes[int(idx)%len(routes)]
		segs := strings.Split(rt.path, "/")
		for i, s := range segs {
			if strings.HasPrefix(s, ":") {
				segs[i] = url.PathEscape(param)
			}
		}
		tok := w.tagged.Token
		if strings.HasPrefix(rt.path, "/operator/") {
			tok = testOperatorToken
		}
		req := robustRequest{method: rt.method, target: strings.Join(segs, "/"), headers: bearer(tok, "x-version", "0")}
		if err := checkAnswer(w.serve(req), w.log); err != nil {
			t.Fatalf("%s %s: %v", req.method, req.target, err)
		}
	})
}
