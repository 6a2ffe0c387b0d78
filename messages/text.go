package messages

import (
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/marketplace/marketplace/internal/textcheck"
)

// Messages of the text rules.
const (
	msgTextRequired    = "The field 'text' is required"
	msgUnsupported     = "The text has character/s that is/are not supported."
	msgTooLongTemplate = "The message content is too long, max characters allowed are %d"
)

// checkText applies the text rules of a message: not empty, at most max
// characters, each of ISO-8859-1 (its printable characters, line feed and
// tab) or an emoji. A link is written <a href="url">label</a>, which those
// characters hold. Errors: Invalid.
func checkText(text string, max int) error {
	if strings.TrimSpace(text) == "" {
		return invalid(msgTextRequired)
	}
	if !utf8.ValidString(text) {
		return invalid(msgUnsupported)
	}
	if utf8.RuneCountInString(text) > max {
		return invalid(fmt.Sprintf(msgTooLongTemplate, max))
	}
	if !supported(text) {
		return invalid(msgUnsupported)
	}
	// What is left: a text of invisible characters alone (a joiner, a
	// variation selector), which looks empty to its reader.
	if textcheck.Lines("text", text) != nil {
		return invalid(msgUnsupported)
	}
	return nil
}

// supported says whether every character of text is one a message may
// hold.
func supported(text string) bool {
	for _, r := range text {
		if !supportedRune(r) {
			return false
		}
	}
	return true
}

// emojiRanges are the code points of emoji and of what builds their
// sequences (joiners, variation selectors, keycaps, skin tones, tags).
// The public API names "a documented emoji list" without giving it; these
// are the Unicode blocks emoji come from.
var emojiRanges = [][2]rune{
	{0x200D, 0x200D},   // zero width joiner
	{0x203C, 0x203C},   // ‼
	{0x2049, 0x2049},   // ⁉
	{0x20E3, 0x20E3},   // combining enclosing keycap
	{0x2122, 0x2122},   // ™
	{0x2139, 0x2139},   // ℹ
	{0x2194, 0x21AA},   // arrows
	{0x231A, 0x23FF},   // watch, hourglass, media controls
	{0x24C2, 0x24C2},   // Ⓜ
	{0x25AA, 0x25FE},   // geometric shapes
	{0x2600, 0x27BF},   // miscellaneous symbols, dingbats
	{0x2934, 0x2935},   // arrows
	{0x2B05, 0x2B55},   // arrows, stars, circles
	{0x3030, 0x3030},   // wavy dash
	{0x303D, 0x303D},   // part alternation mark
	{0x3297, 0x3299},   // circled ideographs
	{0xFE0E, 0xFE0F},   // variation selectors
	{0x1F000, 0x1FAFF}, // mahjong to symbols and pictographs extended-A
	{0xE0020, 0xE007F}, // tags (subdivision flags)
}

func supportedRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return true
	case r >= 0x20 && r <= 0x7E, r >= 0xA0 && r <= 0xFF:
		return true
	}
	for _, rg := range emojiRanges {
		if r >= rg[0] && r <= rg[1] {
			return true
		}
	}
	return false
}

// ModerationHook is the word that makes the moderation reject a message
// (reason OUT_OF_PLACE_LANGUAGE): a test's way to see what a moderated
// message does. The operator moderates any message by its route too.
const ModerationHook = "MODERATE_ME"

// shorteners are the link shorteners whose links are moderated (spec
// 3.11: Bitly, Bl.ink, Polr, Rebrandly, T2M, TinyURL, Zapier's URL
// Shortener, Yourls), by the hosts their links use.
var shorteners = regexp.MustCompile(`(?i)(?:^|[^a-z0-9.\-])(?:[a-z0-9\-]+\.)*` +
	`(?:bit\.ly|bitly\.com|j\.mp|bl\.ink|polr\.me|rebrand\.ly|rb\.gy|t2m\.io|t2mio\.com|tinyurl\.com|zpr\.io|yourls\.org)` +
	`(?:[/:?#"'<>\s]|$)`)

// moderate is the moderation's verdict on text: "" when it is clean, else
// the reason it is rejected.
func moderate(text string) string {
	switch {
	case strings.Contains(text, ModerationHook):
		return "OUT_OF_PLACE_LANGUAGE"
	case shorteners.MatchString(text):
		return "LINK_SHORT_URL"
	}
	return ""
}
