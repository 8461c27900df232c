package calendars

import (
	"bytes"
	"fmt"

	"github.com/emersion/go-ical"
	"github.com/emersion/go-vcard"
)

// The iCalendar and vCard decoders panic on some malformed input (go-ical
// indexes past the end of "0;0=", found by FuzzObject): every body from
// the network or a restore is decoded through these, which turn a panic
// into an error about the input.

// decodeCalendar decodes one iCalendar object.
func decodeCalendar(b []byte) (*ical.Calendar, error) {
	return nextCalendar(ical.NewDecoder(bytes.NewReader(b)))
}

// nextCalendar is dec.Decode, a panic made an error.
func nextCalendar(dec *ical.Decoder) (cal *ical.Calendar, err error) {
	defer func() {
		if p := recover(); p != nil {
			cal, err = nil, fmt.Errorf("not iCalendar (the decoder failed: %v)", p)
		}
	}()
	return dec.Decode()
}

// decodeCard decodes one vCard.
func decodeCard(b []byte) (vcard.Card, error) {
	return nextCard(vcard.NewDecoder(bytes.NewReader(b)))
}

// nextCard is dec.Decode, a panic made an error.
func nextCard(dec *vcard.Decoder) (card vcard.Card, err error) {
	defer func() {
		if p := recover(); p != nil {
			card, err = nil, fmt.Errorf("not a vCard (the decoder failed: %v)", p)
		}
	}()
	return dec.Decode()
}
