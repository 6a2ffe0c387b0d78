package questions

import (
	"slices"
	"testing"

	"pgregory.net/rapid"
)

// TestSumTallySlot_CountsWhatTheDecodedTallyHolds: a search sums one slot
// of some classes in the encoded tally without decoding it; for any tally
// built by add, every slot and set of classes, the sum and the classes held
// are those of the decoded value.
func TestSumTallySlot_CountsWhatTheDecodedTallyHolds(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := tallyValue{}
		for range rapid.IntRange(0, 60).Draw(t, "changes") {
			class := rapid.ByteRange(0, 20).Draw(t, "class")
			id := rapid.Int64Range(1, 1<<40).Draw(t, "id")
			delta := int64(1)
			if _, ok := v[class]; ok && rapid.Bool().Draw(t, "remove") {
				delta = -1
			}
			v.add(class, id, delta)
		}
		encoded := v.encode()
		classes := rapid.SliceOfDistinct(rapid.ByteRange(0, 20), func(b byte) byte { return b }).Draw(t, "classes")
		slot := rapid.IntRange(0, tallySlots-1).Draw(t, "slot")

		held := make([]bool, len(classes))
		got, ok := sumTallySlot(encoded, classes, slot, held)
		if !ok {
			t.Fatalf("sumTallySlot refused the encoding of %v", v)
		}
		var want int64
		for i, c := range classes {
			slots, present := v[c]
			if present {
				want += slots[slot]
			}
			if held[i] != present {
				t.Fatalf("class %d: held %v, the tally holds it: %v", c, held[i], present)
			}
		}
		if got != want {
			t.Fatalf("slot %d of %v: %d, want %d", slot, classes, got, want)
		}
	})
}

// TestSumTallySlot_RefusesATruncatedTally: a value cut inside a class's
// slots is corrupt, not a smaller count.
func TestSumTallySlot_RefusesATruncatedTally(t *testing.T) {
	v := tallyValue{}
	v.add(3, 1000, 1)
	v.add(5, 1001, 1)
	encoded := v.encode()
	firstClass := len(tallyValue{3: v[3]}.encode())
	for cut := 1; cut < len(encoded); cut++ {
		if cut == firstClass { // a whole tally of one class
			continue
		}
		if _, ok := sumTallySlot(encoded[:cut], []byte{3, 5}, 0, make([]bool, 2)); ok {
			t.Fatalf("a tally cut at byte %d of %d was read", cut, len(encoded))
		}
	}
}

// TestTallyEncode_WritesTheClassesInIncreasingOrderAndReadsBack: the
// stored form lists each class once, in increasing order (migrations write
// the same bytes), and reads back as the value it was made from.
func TestTallyEncode_WritesTheClassesInIncreasingOrderAndReadsBack(t *testing.T) {
	rapid.Check(t, func(t *rapid.T) {
		v := tallyValue{}
		for range rapid.IntRange(0, 40).Draw(t, "changes") {
			v.add(rapid.Byte().Draw(t, "class"), rapid.Int64Range(1, 1<<40).Draw(t, "id"), 1)
		}
		b := v.encode()
		got, err := decodeTally(b)
		if err != nil {
			t.Fatal(err)
		}
		if len(got) != len(v) {
			t.Fatalf("%d classes read back, want %d", len(got), len(v))
		}
		last := -1
		for len(b) > 0 {
			if int(b[0]) <= last {
				t.Fatalf("class %d after %d", b[0], last)
			}
			last = int(b[0])
			slots := got[b[0]]
			if !slices.Equal(slots, v[b[0]]) {
				t.Fatalf("class %d: %v, want %v", b[0], slots, v[b[0]])
			}
			b = b[1:]
			for range tallySlots {
				b = b[varintLen(b):]
			}
		}
	})
}
