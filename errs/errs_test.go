package errs_test

import (
	"errors"
	"fmt"
	"testing"

	"github.com/marketplace/marketplace/errs"
)

func TestKindOf_WrappedDomainErrorKeepsItsKind(t *testing.T) {
	e := errs.NotFoundf("Store not found: %s", "12")
	wrapped := fmt.Errorf("publish: %w", e)
	if errs.KindOf(wrapped) != errs.NotFound || !errs.Is(wrapped, errs.NotFound) {
		t.Fatalf("kind of wrapped = %v", errs.KindOf(wrapped))
	}
	if got := errs.As(wrapped); got != e || got.Message != "Store not found: 12" || got.Code != "not_found" {
		t.Fatalf("As = %+v", got)
	}
}

func TestKindOf_PlainErrorIsInternal(t *testing.T) {
	if errs.KindOf(errors.New("disk on fire")) != errs.Internal || errs.As(errors.New("x")) != nil {
		t.Fatal("a plain error must count as internal")
	}
	if errs.Is(nil, errs.Internal) {
		t.Fatal("nil is no error")
	}
}

func TestWithCode_KeepsTheExactMessage(t *testing.T) {
	// Spec messages contain braces that must not be taken as format verbs.
	e := errs.WithCode(errs.Invalid, "invalid_post_body", "Invalid JSON. Valid attributes are: {0}. 100%")
	if e.Message != "Invalid JSON. Valid attributes are: {0}. 100%" || e.Code != "invalid_post_body" || e.Kind != errs.Invalid {
		t.Fatalf("%+v", e)
	}
}

func TestDefaultCodes(t *testing.T) {
	want := map[errs.Kind]string{errs.Internal: "internal_error", errs.Invalid: "bad_request", errs.Unauthorized: "unauthorized",
		errs.Forbidden: "forbidden", errs.NotFound: "not_found", errs.Conflict: "conflict",
		errs.InsufficientStorage: "insufficient_storage", errs.Unavailable: "service_unavailable"}
	for k, code := range want {
		if k.DefaultCode() != code {
			t.Errorf("%v: %s, want %s", k, k.DefaultCode(), code)
		}
	}
}

func TestInternalf_KeepsTheCauseForLogsOnly(t *testing.T) {
	cause := errors.New("badger: io error")
	e := errs.Internalf(cause, "read user %d", 7)
	if !errors.Is(e, cause) || e.Message != "read user 7" {
		t.Fatalf("%+v", e)
	}
	e2 := errs.Invalidf("bad").WithCauses(errs.Cause{Code: "x", Message: "y"})
	if len(e2.Causes) != 1 {
		t.Fatal("causes lost")
	}
}

// TestKinds_AreAppendOnly pins the value of every kind: a kind is only ever
// added at the end, so a value kept by an embedder never changes meaning.
func TestKinds_AreAppendOnly(t *testing.T) {
	for want, k := range []errs.Kind{errs.Internal, errs.Invalid, errs.Unauthorized, errs.Forbidden,
		errs.NotFound, errs.Conflict, errs.InsufficientStorage, errs.Unavailable} {
		if int(k) != want {
			t.Errorf("%v = %d, want %d", k, int(k), want)
		}
	}
}
