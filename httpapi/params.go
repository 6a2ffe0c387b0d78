package httpapi

import (
	"net/http"
	"strconv"

	"github.com/julienschmidt/httprouter"

	"github.com/marketplace/marketplace/errs"
)

// positive reads raw as a positive decimal integer, the shape of every
// numeric id of the API.
func positive(raw string) (int64, bool) {
	n, err := strconv.ParseInt(raw, 10, 64)
	return n, err == nil && n > 0
}

// positiveInt reads raw, the value of the parameter name, as a positive
// integer. Errors: Invalid.
func positiveInt(name, raw string) (int64, error) {
	n, ok := positive(raw)
	if !ok {
		return 0, errs.Invalidf("Invalid %s: %s. It must be a positive integer", name, raw)
	}
	return n, nil
}

// int64Param reads a positive integer path parameter. Errors: Invalid.
func int64Param(p httprouter.Params, name string) (int64, error) {
	return positiveInt(name, p.ByName(name))
}

// requiredIDQuery reads a positive integer query parameter that must be
// there. Errors: Invalid.
func requiredIDQuery(r *http.Request, name string) (int64, error) {
	raw := r.URL.Query().Get(name)
	if raw == "" {
		return 0, errs.Invalidf("The parameter [%s] is required", name)
	}
	return positiveInt(name, raw)
}
