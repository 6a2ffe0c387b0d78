package httpapi

import (
	"context"
	"net/http"
	"strconv"
	"unicode/utf8"

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

// maxPathID bounds an id in a path. Every id the API hands out or accepts
// is far shorter (geo ids have at most 64 bytes, catalog domain names 120,
// stub ids are UUIDs), so a longer one names nothing; answering it before
// the handler runs keeps ids of kilobytes away from the store's keys and
// out of the answer, which would otherwise quote them whole.
const maxPathID = 256

// lookedUpParams are the path parameters whose value a route reads as the
// key of a record: an id longer than maxPathID is a 404, the answer to a
// record that does not exist. The other parameters are numbers, which
// their handlers refuse with a 400 once longer than any int64, before
// reading anything; a parameter missing here is still answered by its
// route, only later.
var lookedUpParams = []string{
	"item_id", "user_product_id", "site_id", "listing_type_id", "category_id", "domain_id", "product_id",
	"country_id", "state_id", "city_id", "currency_id", "zip_code", "stub_id",
}

// checkPathIDs answers a path whose looked-up id is longer than maxPathID.
// Errors: NotFound.
func checkPathIDs(p httprouter.Params) error {
	for _, name := range lookedUpParams {
		if v := p.ByName(name); len(v) > maxPathID {
			return errs.NotFoundf("Resource not found: the %s has %d bytes, and no id has more than %d", name, len(v), maxPathID)
		}
	}
	return nil
}

// boundedIDs runs checkPathIDs before e's handler, once the caller is
// authorized: an anonymous request to a user's route is still a 401.
func boundedIDs(e endpoint) endpoint {
	if h := e.h; h != nil {
		e.h = func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
			if err := checkPathIDs(p); err != nil {
				return err
			}
			return h(w, r, p)
		}
	}
	if ah := e.ah; ah != nil {
		e.ah = func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
			if err := checkPathIDs(p); err != nil {
				return err
			}
			return ah(w, r, p, caller)
		}
	}
	return e
}

// maxLoggedPath bounds what the request log line keeps of a path: a path
// of 60 KB must not write 60 KB of log per request.
const maxLoggedPath = 256

// loggedPath keeps the first maxLoggedPath bytes of path, cut at a rune's
// start, and says how many bytes it left out. It is given the path already
// redacted, so that a token cut in two is never half kept.
func loggedPath(path string) string {
	if len(path) <= maxLoggedPath {
		return path
	}
	n := maxLoggedPath
	for n > 0 && !utf8.RuneStart(path[n]) {
		n--
	}
	return path[:n] + "...(" + strconv.Itoa(len(path)-n) + " more bytes)"
}

// readByID answers a read of the resource whose id is the path's param
// with what read returns for the caller: 200.
func readByID[T any](s *Server, param string, read func(ctx context.Context, caller, id int64) (T, error)) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := int64Param(p, param)
		if err != nil {
			return err
		}
		v, err := read(r.Context(), caller, id)
		if err != nil {
			return err
		}
		s.writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// writeByID answers a change, with the JSON body In, of the resource whose
// id is the path's param: 200 with what write returns.
func writeByID[In, Out any](s *Server, param string, write func(ctx context.Context, caller, id int64, in In) (Out, error)) authedFunc {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params, caller int64) error {
		id, err := int64Param(p, param)
		if err != nil {
			return err
		}
		var in In
		if err := decode(r, &in); err != nil {
			return err
		}
		v, err := write(r.Context(), caller, id, in)
		if err != nil {
			return err
		}
		s.writeJSON(w, http.StatusOK, v)
		return nil
	}
}

// operatorWriteByID is writeByID for an operator's route, which acts for
// no caller.
func operatorWriteByID[In, Out any](s *Server, param string, write func(ctx context.Context, id int64, in In) (Out, error)) func(http.ResponseWriter, *http.Request, httprouter.Params) error {
	return func(w http.ResponseWriter, r *http.Request, p httprouter.Params) error {
		return writeByID(s, param, func(ctx context.Context, _, id int64, in In) (Out, error) { return write(ctx, id, in) })(w, r, p, 0)
	}
}
