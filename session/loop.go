package session

import (
	"bytes"
	"encoding/json"
	"strings"

	"github.com/agentls/agentls/clients"
)

// Loop detection thresholds, as in Gemini CLI.
const (
	// callLoop is how many times in a row the same call (name and arguments) counts as
	// a loop.
	callLoop = 5
	// textLoop is how many times one sentence-sized chunk may appear in one response
	// before it counts as a loop, and minChunk the size a chunk needs to count.
	textLoop = 10
	minChunk = 50
)

// loopDetector spots a model repeating itself: the same tool call over and over across
// the turns of one prompt, or the same sentence over and over in one response.
type loopDetector struct {
	lastCall string
	repeats  int

	pending strings.Builder
	counts  map[string]int
	inFence bool
}

// call records a function call and reports whether it is the callLoop-th identical
// call in a row.
func (d *loopDetector) call(fc clients.FunctionCall) bool {
	key := fc.Name + "\x00" + canonical(fc.Args)
	if key == d.lastCall {
		d.repeats++
	} else {
		d.lastCall, d.repeats = key, 1
	}
	return d.repeats >= callLoop
}

// canonical returns args with object keys sorted and insignificant space removed, so
// that equal arguments compare equal however the model spelt them.
func canonical(args json.RawMessage) string {
	var v any
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.UseNumber()
	if len(args) == 0 || dec.Decode(&v) != nil {
		return string(args)
	}
	b, err := json.Marshal(v) // maps marshal with sorted keys
	if err != nil {
		return string(args)
	}
	return string(b)
}

// response starts counting text for a new model response.
func (d *loopDetector) response() {
	d.pending.Reset()
	d.counts = map[string]int{}
	d.inFence = false
}

// text records a piece of the response's answer text and reports whether some chunk
// of it has now appeared textLoop times. Text is cut into chunks at line ends and after
// sentence-ending punctuation followed by a space; chunks inside code fences are not
// counted, since code repeats lines legitimately.
func (d *loopDetector) text(s string) bool {
	if d.counts == nil {
		d.response()
	}
	d.pending.WriteString(s)
	buf := d.pending.String()
	start := 0
	for i := 0; i < len(buf); i++ {
		end := -1
		switch buf[i] {
		case '\n':
			end = i + 1
		case '.', '!', '?':
			if i+1 < len(buf) && (buf[i+1] == ' ' || buf[i+1] == '\n') {
				end = i + 1
			}
		}
		if end < 0 {
			continue
		}
		chunk := strings.TrimSpace(buf[start:end])
		start = end
		if strings.HasPrefix(chunk, "```") {
			d.inFence = !d.inFence
			continue
		}
		if d.inFence || len(chunk) < minChunk {
			continue
		}
		d.counts[chunk]++
		if d.counts[chunk] >= textLoop {
			return true
		}
	}
	d.pending.Reset()
	d.pending.WriteString(buf[start:])
	return false
}
