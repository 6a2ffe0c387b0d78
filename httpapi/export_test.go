package httpapi

import (
	"context"
	"time"
)

// BodyRoutes returns the routes that read their body as JSON, each with
// what it reads ("object", "optional object" or "params", OAuth 2
// parameters form-encoded or as an object), from the route table. A route
// that serves a static name (POST /users/test_user through POST
// /users/:user_id) is given by that name, where its body is read.
func (s *Server) BodyRoutes() map[Route]string {
	out := map[Route]string{}
	for _, rt := range s.routeTable() {
		path := rt.path
		if len(rt.statics) > 0 {
			path = rt.statics[0]
		}
		switch rt.body {
		case objectBody:
			out[Route{rt.method, path}] = "object"
		case optionalObjectBody:
			out[Route{rt.method, path}] = "optional object"
		case paramsBody:
			out[Route{rt.method, path}] = "params"
		case noBody, htmlFormBody:
		}
	}
	return out
}

// SetSleep replaces the wait between the pieces of a trickled answer.
func (s *Server) SetSleep(f func(context.Context, time.Duration) error) { s.sleep = f }
