package mcpadapter

import (
	"encoding/json"

	"github.com/notebridge/notebridge/pkg/core/domainerr"
	"github.com/notebridge/notebridge/pkg/internal/jsonscan"
)

// tooDeep reports a message that nests deeper than encoding/json (and
// jsonscan) decode, jsonscan.MaxNesting levels, which mcp-go would answer
// as text that is not JSON at all. A message within that bound reaches the
// executor, which refuses arguments deeper than its own limit with the
// same code. Only a message JSON decoding refused is measured.
func tooDeep(msg []byte) (*domainerr.Error, bool) {
	if json.Valid(msg) {
		return nil, false
	}
	depth := 0
	for i := 0; i < len(msg); i++ {
		switch msg[i] {
		case '"':
			end, _ := jsonscan.StringEnd(msg, i)
			i = end - 1
		case '{', '[':
			if depth++; depth > jsonscan.MaxNesting {
				return domainerr.New(domainerr.NestingTooDeep, "the message nests deeper than %d levels", jsonscan.MaxNesting), true
			}
		case '}', ']':
			depth--
		}
	}
	return nil, false
}
