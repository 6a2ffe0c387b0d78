package idempotency

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of idempotency. Every key starts with "idm", outside the
// namespaces a reset keeps, so a reset removes the records with the state
// they describe, and a snapshot copies them with it.
//
//	idm/rec/<scope>/<key>                -> record (JSON): the request's fingerprint, nonce, time and answer
//	idm/exp/<time><scope>/<key>          -> empty: the records in the order they expire, for the sweep
//
// <scope> is "op" for the operator, or "user" with the user id and the
// application id of the caller's token (0 for a token the operator issued).
// <time> is the record's time in Unix nanoseconds; the rest of an exp key is
// the record key's own tail, so the sweep finds the record without decoding.

func recPrefix() []byte { return keycodec.New("idm/rec") }
func expPrefix() []byte { return keycodec.New("idm/exp") }

// scopeKey appends c's scope and the key to k.
func scopeKey(k keycodec.Key, c Caller, key string) keycodec.Key {
	if c.Operator {
		k = k.Str("op")
	} else {
		k = k.Str("user").Int(c.User).Int(c.App)
	}
	return k.Str(key)
}

func recKey(c Caller, key string) []byte { return scopeKey(keycodec.Key(recPrefix()), c, key) }

// expKey is the expiry index entry of the record at rec, made at nanos.
func expKey(rec []byte, nanos int64) []byte {
	k := keycodec.Key(expPrefix()).Int(nanos)
	return append(k, rec[len(recPrefix()):]...)
}

// recOfExp returns the record key and the time of the expiry entry exp.
func recOfExp(exp []byte) (rec []byte, nanos int64, ok bool) {
	p := expPrefix()
	if len(exp) < len(p)+8 {
		return nil, 0, false
	}
	r := keycodec.Read(exp[len(p):])
	nanos = r.Int()
	if r.Err() != nil {
		return nil, 0, false
	}
	return append(recPrefix(), r.Rest()...), nanos, true
}
