package textcheck_test

import (
	"testing"

	"github.com/matryer/is"

	"github.com/marketplace/marketplace/errs"
	"github.com/marketplace/marketplace/internal/textcheck"
)

func refusal(t *testing.T, err error) (message, code, detail string) {
	t.Helper()
	e := errs.As(err)
	if e == nil || e.Kind != errs.Invalid || len(e.Causes) != 1 {
		t.Fatalf("got %v, want an Invalid error with one cause", err)
	}
	return e.Message, e.Causes[0].Code, e.Causes[0].Message
}

func TestLine_ControlCharactersAreRefusedWithTheirPlace(t *testing.T) {
	for _, c := range []struct {
		s, detail string
	}{
		{"a\x00b", "U+0000 at character 2"},
		{"\x07", "U+0007 at character 1"},
		{"ab\nc", "U+000A at character 3"},
		{"tab\there", "U+0009 at character 4"},
		{"cr\r", "U+000D at character 3"},
		{"del\x7f", "U+007F at character 4"},
		{"ñ\u0085", "U+0085 at character 2"}, // C1 (NEL), after a two-byte character
		{"\u009b31m", "U+009B at character 1"},
		{"a\u2028b", "U+2028 at character 2"},
		{"a\u2029b", "U+2029 at character 2"},
	} {
		t.Run(c.detail, func(t *testing.T) {
			is := is.New(t)
			msg, code, detail := refusal(t, textcheck.Line("title", c.s))
			is.Equal(msg, "The field [title] must not contain control characters")
			is.Equal(code, textcheck.CodeControl)
			is.Equal(detail, c.detail)
		})
	}
}

func TestLines_LineFeedAndTabAreAllowedOtherControlsAreNot(t *testing.T) {
	is := is.New(t)
	is.NoErr(textcheck.Lines("text", "Hola,\n\tsí, lo tengo.\n"))
	msg, code, detail := refusal(t, textcheck.Lines("text", "line\r\nnext"))
	is.Equal(msg, "The field [text] must not contain control characters")
	is.Equal(code, textcheck.CodeControl)
	is.Equal(detail, "U+000D at character 5")
	_, _, detail = refusal(t, textcheck.Lines("text", "bell\x07"))
	is.Equal(detail, "U+0007 at character 5")
}

func TestLine_BidirectionalOverridesAndIsolatesAreRefused(t *testing.T) {
	for _, r := range []rune{'\u202a', '\u202b', '\u202c', '\u202d', '\u202e', '\u2066', '\u2067', '\u2068', '\u2069'} {
		t.Run(string(r), func(t *testing.T) {
			is := is.New(t)
			for _, check := range []func(string, string) error{textcheck.Line, textcheck.Lines} {
				msg, code, _ := refusal(t, check("name", "precio "+string(r)+"0001"))
				is.Equal(msg, "The field [name] must not contain bidirectional control characters")
				is.Equal(code, textcheck.CodeBidi)
			}
		})
	}
	is := is.New(t)
	_, _, detail := refusal(t, textcheck.Line("name", "ab\u202ecd"))
	is.Equal(detail, "U+202E at character 3")
	// The marks are written in right-to-left text and reorder nothing.
	is.NoErr(textcheck.Line("name", "שלום\u200f abc"))
}

func TestLine_TextOfOnlyInvisibleCharactersIsRefused(t *testing.T) {
	for _, s := range []string{
		"\u200b", "\u200c", "\u200d", "\u2060", "\ufeff", "\u00ad", "\u180e", "\u3164", "\u115f", "\u2800",
		"\ufe0f", " \u200b ", "\u200b\u200b\u200b", "\u00a0\u200b", "\u200e",
	} {
		t.Run(s, func(t *testing.T) {
			is := is.New(t)
			for _, check := range []func(string, string) error{textcheck.Line, textcheck.Lines} {
				msg, code, detail := refusal(t, check("nickname", s))
				is.Equal(msg, "The field [nickname] must have visible characters")
				is.Equal(code, textcheck.CodeInvisibleOnly)
				is.Equal(detail, "Every character is a space or an invisible character")
			}
		})
	}
}

func TestLine_InvisibleCharactersBesideVisibleOnesAreKept(t *testing.T) {
	is := is.New(t)
	for _, s := range []string{
		"Mate de calabaza", "ñandú", "日本語", "🙂", "👩\u200d💻",
		"a\u200bb", "\ufeffHola", "e\u0301", "",
		"   ", // spaces alone are the field's own rule (required, or trimmed)
	} {
		is.NoErr(textcheck.Line("title", s)) // allowed
	}
}
