package responsetime

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of the response time figures. Every key starts with "qrt": the
// prefix dates from when the figures lived in the questions package, and
// stays so that existing stores keep their figures.
//
//	qrt/seller/<seller_id>   -> ResponseTime (JSON), figures of the latest refresh
//	qrt/last                 -> refreshRecord (JSON), when the latest refresh ran

func responseTimeKey(sellerID int64) []byte {
	return keycodec.New("qrt/seller").Int(sellerID)
}

func responseTimePrefix() []byte { return keycodec.New("qrt/seller") }

// responseTimeSeller reads the seller id back from a responseTimeKey.
func responseTimeSeller(key []byte) (int64, error) {
	r := keycodec.Read(key)
	r.Str()
	id := r.Int()
	return id, r.Err()
}

func responseTimeLastKey() []byte { return keycodec.New("qrt/last") }
