package calendars

import (
	"bytes"
	"errors"
	"fmt"
)

// An object's shape is bounded before it is parsed, by one pass over its
// bytes that allocates nothing. The parsers build a tree of every
// component, property and parameter, and cost far more than the bytes:
// an 800 KB body of 40,000 nested components took 72 MB, a flat one of
// 80,000 properties 59 MB for four at once, 60,000 parameters on one line
// 52 MB, and go-ical copies a parameter's value once per character (a
// value of 1 MB would copy half a terabyte). What a phone's calendar or
// address book holds is far inside these:
//   - an event with its alarms and a time zone nests three deep;
//   - a long recurring series with its changed instances is a few hundred
//     components of ten to twenty properties each: 10,000 properties,
//     which go-ical parses in 2.7 MB (about 270 bytes a property,
//     TestParseCost), leave room for it;
//   - a property carries a handful of parameters (TZID, VALUE, ROLE,
//     PARTSTAT, CN, X-APPLE-...), each with one value or a short list, of
//     at most a few hundred bytes (an address in X-APPLE-STRUCTURED-LOCATION).
const (
	maxDepth       = 8
	maxComponents  = 1000
	maxProperties  = 10000
	maxParams      = 100  // parameter values on one property (a list counts each)
	maxParamLength = 1024 // bytes of one parameter value
	// maxParamCopies bounds what go-ical's copying of parameter values
	// allocates over an object (a value of n bytes copies n²/2, in size
	// classes: counted n²): garbage at once, but time; 100 values of
	// Apple's longest (X-ADDRESS, ~300 bytes) count 9 MB.
	maxParamCopies = 16 << 20
)

// errShape is wrapped by the refusals of checkShape.
var errShape = errors.New("object too complex")

// shape is what an object's body holds, as checkShape counted it.
type shape struct {
	bytes, properties, params, components int64
	copies                                int64 // go-ical's copying of parameter values
}

// lineScan is the state of checkShape within one content line.
type lineScan struct {
	name       [5]byte // the name's first bytes but spaces and tabs: BEGIN or END
	nameLen    int     // the name's bytes but spaces and tabs (past 5: neither)
	inParams   bool    // past the name, before the value
	inValue    bool
	quoted     bool
	params     int
	paramBytes int
	copies     int64 // Σ n² over the line's parameter values
	empty      bool
}

// checkShape counts an iCalendar or vCard body's content lines, their
// parameters, its components and how deep they nest, reading the lines as
// the decoders do: unfolded first (a line's continuation starts with a
// space or a tab), the name up to the first ';' or ':', in any case
// (BEGIN;X=1:VEVENT is a BEGIN), parameters up to the first ':' outside
// quotes. It refuses, wrapping errShape, the first limit the body passes.
func checkShape(body []byte) (shape, error) {
	sh := shape{bytes: int64(len(body))}
	depth := 0
	l := lineScan{empty: true}
	for i := 0; i <= len(body); i++ {
		if i < len(body) && body[i] == '\r' && i+1 < len(body) && body[i+1] == '\n' {
			continue
		}
		if i < len(body) && body[i] == '\n' && i+1 < len(body) && (body[i+1] == ' ' || body[i+1] == '\t') {
			i++ // a fold: the line goes on
			continue
		}
		if i < len(body) && body[i] != '\n' {
			if err := l.add(body[i]); err != nil {
				return sh, err
			}
			continue
		}
		// The end of a content line.
		if !l.empty {
			sh.properties++
			sh.params += int64(l.params)
			sh.copies += l.copies + int64(l.paramBytes*l.paramBytes)
			switch l.keyword() {
			case "BEGIN":
				sh.components++
				if depth++; depth > maxDepth {
					return sh, fmt.Errorf("%w: components nest more than %d deep", errShape, maxDepth)
				}
			case "END":
				depth--
			}
		}
		switch {
		case sh.components > maxComponents:
			return sh, fmt.Errorf("%w: more than %d components in one object", errShape, maxComponents)
		case sh.properties > maxProperties:
			return sh, fmt.Errorf("%w: more than %d properties (content lines) in one object", errShape, maxProperties)
		case sh.copies > maxParamCopies:
			return sh, fmt.Errorf("%w: parameter values too long in all (%d bytes of copies to parse them, past %d)", errShape, sh.copies, maxParamCopies)
		}
		l = lineScan{empty: true}
	}
	return sh, nil
}

// add takes one byte of an unfolded content line.
func (l *lineScan) add(c byte) error {
	l.empty = false
	switch {
	case l.inValue:
		return nil
	case !l.inParams:
		switch c {
		case ';':
			l.inParams = true
			return l.param()
		case ':':
			l.inValue = true
		case ' ', '\t':
		default:
			if l.nameLen < len(l.name) {
				l.name[l.nameLen] = c
			}
			l.nameLen++
		}
		return nil
	case c == '"':
		l.quoted = !l.quoted
	case l.quoted:
	case c == ':':
		l.inValue = true
		return nil
	case c == ';' || c == ',':
		return l.param()
	}
	if l.paramBytes++; l.paramBytes > maxParamLength {
		return fmt.Errorf("%w: a parameter value longer than %d bytes", errShape, maxParamLength)
	}
	return nil
}

// param counts a parameter, or another value of one.
func (l *lineScan) param() error {
	l.copies += int64(l.paramBytes * l.paramBytes)
	l.paramBytes = 0
	if l.params++; l.params > maxParams {
		return fmt.Errorf("%w: more than %d parameters on one property", errShape, maxParams)
	}
	return nil
}

// keyword is the line's name if it is BEGIN or END in any case, spaces
// and tabs anywhere in it ignored (more than any decoder ignores: a line
// that might be a BEGIN counts as one), else "".
func (l *lineScan) keyword() string {
	if l.nameLen > len(l.name) {
		return ""
	}
	name := l.name[:l.nameLen]
	switch {
	case bytes.EqualFold(name, []byte("BEGIN")):
		return "BEGIN"
	case bytes.EqualFold(name, []byte("END")):
		return "END"
	}
	return ""
}
