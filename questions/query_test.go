package questions_test

import (
	"net/url"
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/questions"
)

func TestParseSearch_SellerAndItemTakeTheirAliases(t *testing.T) {
	is := is.New(t)
	q, err := questions.ParseSearch(url.Values{"seller": {"7"}, "item_id": {"MLA1"}}, 7)
	is.NoErr(err)
	is.Equal(q.SellerID, int64(7)) // seller is seller_id's alias
	is.Equal(q.ItemID, "MLA1")     // item_id is item's alias
	q, err = questions.ParseSearch(url.Values{"seller_id": {"7"}, "seller": {"8"}, "item": {"MLA1"}, "item_id": {"MLA2"}}, 7)
	is.NoErr(err)
	is.Equal(q.SellerID, int64(7)) // seller_id wins over its alias
	is.Equal(q.ItemID, "MLA1")     // item wins over its alias
}

func TestParseSearch_AnonymousSearchOfASellerIsUnauthorized(t *testing.T) {
	is := is.New(t)
	for _, params := range []url.Values{{"seller_id": {"7"}}, {"seller": {"7"}}} {
		_, err := questions.ParseSearch(params, 0)
		e := errs.As(err)
		is.True(e != nil && e.Kind == errs.Unauthorized)                                // lacks the token, not the right
		is.Equal(e.Message, "Missing access token: send Authorization: Bearer <token>") // the message of a missing token
	}
	_, err := questions.ParseSearch(url.Values{"item": {"MLA1"}}, 0)
	is.NoErr(err) // an item's questions are public
}

func TestParseSearch_IDsMustBePositiveIntegers(t *testing.T) {
	is := is.New(t)
	_, err := questions.ParseSearch(url.Values{"from": {"0"}}, 1)
	is.Equal(errs.As(err).Message, "Invalid from: 0. It must be a positive integer")
	_, err = questions.ParseSearch(url.Values{"seller_id": {"x"}}, 0)
	is.Equal(errs.As(err).Message, "Invalid seller_id: x. It must be a positive integer") // read before the token is asked for
}
