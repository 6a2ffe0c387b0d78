package paging_test

import (
	"testing"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/paging"
)

func TestCheck_LimitAndOffsetAreNonNegativeAndLimitIsCapped(t *testing.T) {
	for _, c := range []struct {
		offset, limit int
		msg           string
	}{
		{0, 0, ""},
		{0, paging.DefaultLimit, ""},
		{1 << 40, paging.MaxLimit, ""},
		{0, -1, "Invalid limit: -1. It must be a non-negative integer"},
		{0, paging.MaxLimit + 1, "Invalid limit: 1001. The maximum is 1000"},
		{-1, 10, "Invalid offset: -1. It must be a non-negative integer"},
		{-1, -1, "Invalid limit: -1. It must be a non-negative integer"}, // limit is named first
		{-1, 1001, "Invalid limit: 1001. The maximum is 1000"},
	} {
		err := paging.Check(c.offset, c.limit)
		if c.msg == "" {
			if err != nil {
				t.Errorf("offset %d limit %d: %v, want no error", c.offset, c.limit, err)
			}
			continue
		}
		if !errs.Is(err, errs.Invalid) || errs.As(err).Message != c.msg {
			t.Errorf("offset %d limit %d: %v, want Invalid %q", c.offset, c.limit, err, c.msg)
		}
	}
}
