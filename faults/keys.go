package faults

import "github.com/marketplace/marketplace/internal/keycodec"

// Key layout of faults. Every key starts with "flt", so that a reset that
// removes every key but the reference data removes the rules too.
//
//	flt/rule/<rule_id>             -> Rule (JSON), with the times it has left
//	flt/rate/<rule_id>/<subject>   -> window (JSON): a rate limit's current minute for one user or application
//
// Rule ids come from the store's sequence RuleSequence, so that rules made
// at once on several servers never share an id.

// RuleSequence names the sequence that numbers fault rules.
const RuleSequence = "fault_rules"

func rulePrefix() []byte         { return keycodec.New("flt/rule") }
func ruleKey(id int64) []byte    { return keycodec.Key(rulePrefix()).Int(id) }
func ratePrefix(id int64) []byte { return keycodec.New("flt/rate").Int(id) }
func rateKey(id int64, subject string) []byte {
	return keycodec.Key(ratePrefix(id)).Str(subject)
}
