package faults

import (
	"strings"

	"github.com/marketplace/marketplace/errs"
)

// CheckRoute checks that route is a route template that rules may name:
// a path starting with "/", without a query, outside /operator (the
// operator's routes are never faulted, so that a test can always remove
// its faults). Errors: Invalid.
func CheckRoute(route string) error {
	switch {
	case !strings.HasPrefix(route, "/"):
		return errs.Invalidf("Invalid route: %s. It must be a route template such as /questions/{question_id}", route)
	case strings.ContainsAny(route, "?#"):
		return errs.Invalidf("Invalid route: %s. It must be a route template, without a query", route)
	case route == "/operator" || strings.HasPrefix(route, "/operator/"):
		return errs.Invalidf("Invalid route: %s. Operator routes are never faulted", route)
	}
	return nil
}

// TemplateKey returns route with the names of its parameters dropped
// ({question_id} and {id} both become {}), so that a template names a route
// whatever it calls its parameters (the spec's {seller_id} is the server's
// {user_id}).
func TemplateKey(route string) string { return templateKey(route) }

func templateKey(route string) string {
	if !strings.Contains(route, "{") {
		return route
	}
	var b strings.Builder
	for i := 0; i < len(route); i++ {
		c := route[i]
		if c == '{' {
			if j := strings.IndexByte(route[i:], '}'); j > 0 {
				b.WriteString("{}")
				i += j
				continue
			}
		}
		b.WriteByte(c)
	}
	return b.String()
}
