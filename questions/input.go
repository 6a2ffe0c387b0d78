package questions

import (
	"bytes"
	"encoding/json"
	"slices"
	"strconv"
	"strings"

	"github.com/marketplace/marketplace/errs"
)

// Error codes and messages the spec gives.
const (
	CodeInvalidQuestion = "invalid_question"
	MsgInvalidQuestion  = "The question is invalid."
	CodeInvalidPostBody = "invalid_post_body"
	// MsgInvalidPostBody is the spec's message; {0} is filled with the list
	// of valid attributes, such as [question_id, text].
	MsgInvalidPostBody = "Invalid JSON. Valid attributes are: {0}."
)

// AnswerAttributes are the attributes an answer body must carry, all of
// them and nothing else.
var AnswerAttributes = []string{"question_id", "text"}

// AskAttributes are the attributes a question body must carry.
var AskAttributes = []string{"item_id", "text"}

func invalidPostBody(valid []string) error {
	list := "[" + strings.Join(valid, ", ") + "]"
	return errs.WithCode(errs.Invalid, CodeInvalidPostBody, strings.Replace(MsgInvalidPostBody, "{0}", list, 1))
}

func errInvalidQuestion() error {
	return errs.WithCode(errs.Invalid, CodeInvalidQuestion, MsgInvalidQuestion)
}

// checkAttributes reports invalid_post_body unless fields holds exactly the
// valid attributes.
func checkAttributes(fields map[string]json.RawMessage, valid []string) error {
	if len(fields) != len(valid) {
		return invalidPostBody(valid)
	}
	for k := range fields {
		if !slices.Contains(valid, k) {
			return invalidPostBody(valid)
		}
	}
	return nil
}

func stringField(raw json.RawMessage, name string) (string, error) {
	var s string
	if err := json.Unmarshal(raw, &s); err != nil {
		return "", errs.Invalidf("Invalid JSON: the field [%s] must be of type string", name)
	}
	return s, nil
}

// ParseAnswer reads an answer body given as its attributes (the HTTP layer
// decodes the JSON object). Unknown or missing attributes are
// invalid_post_body; a question_id that is not a positive integer is
// invalid_question. Errors: Invalid.
func ParseAnswer(fields map[string]json.RawMessage) (AnswerInput, error) {
	if err := checkAttributes(fields, AnswerAttributes); err != nil {
		return AnswerInput{}, err
	}
	id, err := ParseID(string(bytes.TrimSpace(fields["question_id"])))
	if err != nil {
		return AnswerInput{}, err
	}
	text, err := stringField(fields["text"], "text")
	if err != nil {
		return AnswerInput{}, err
	}
	return AnswerInput{QuestionID: id, Text: text}, nil
}

// ParseAsk reads a question body given as its attributes, with the same
// strictness as ParseAnswer. Errors: Invalid.
func ParseAsk(fields map[string]json.RawMessage) (AskInput, error) {
	if err := checkAttributes(fields, AskAttributes); err != nil {
		return AskInput{}, err
	}
	text, err := stringField(fields["text"], "text")
	if err != nil {
		return AskInput{}, err
	}
	item, err := stringField(fields["item_id"], "item_id")
	if err != nil {
		return AskInput{}, err
	}
	return AskInput{Text: text, ItemID: item}, nil
}

// ParseID reads a question id: a positive integer, else invalid_question.
// Errors: Invalid.
func ParseID(raw string) (int64, error) {
	id, err := strconv.ParseInt(raw, 10, 64)
	if err != nil || id <= 0 {
		return 0, errInvalidQuestion()
	}
	return id, nil
}
