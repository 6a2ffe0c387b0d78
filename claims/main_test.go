package claims_test

import (
	"testing"

	"github.com/marketplace/marketplace/internal/teststore"
)

// The tests run on the backend that MARKETPLACE_TEST_STORE names (see
// internal/teststore).
func TestMain(m *testing.M) { teststore.Main(m) }
