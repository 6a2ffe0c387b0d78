package httpapi

import "strings"

// OwnRoutes returns the server's own routes (the operator's, the
// console's and the other bare ones, the operations'), read from the route
// table, each as its method and a path of it: parameters filled with 1 and
// a catch-all with app.js.
func OwnRoutes() []Route {
	var out []Route
	for _, rt := range (&Server{}).routeTable() {
		if rt.bare == nil && rt.who != theOperator && !rt.ops {
			continue
		}
		segs := strings.Split(rt.path, "/")
		for i, s := range segs {
			switch {
			case strings.HasPrefix(s, ":"):
				segs[i] = "1"
			case strings.HasPrefix(s, "*"):
				segs[i] = "app.js"
			}
		}
		out = append(out, Route{Method: rt.method, Path: strings.Join(segs, "/")})
	}
	return out
}
