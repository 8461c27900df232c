package preview

// A JPEG decoder that decodes at reduced scale and hands the picture on a
// row at a time, so a 12-megapixel photo's preview is made in the memory
// of one row of blocks, not of the whole picture (image/jpeg decodes the
// whole picture at full size: 18 MB for 12 megapixels, more than the box
// has to spare). Each 8×8 block's coefficients are turned into n×n
// samples (n = 1, 2, 4 or 8) by an n-point inverse DCT of its n×n lowest
// frequencies, the reduced inverse DCT of ITU-T T.81's decoders (libjpeg's
// scale_denom); n = 1 is the block's DC term alone.
//
// Baseline and extended sequential Huffman JPEGs decode at any of the four
// scales, streaming when a scan holds every component (as cameras write
// them) and through whole planes otherwise. A progressive JPEG's
// coefficients come in several passes over the whole picture, so they are
// kept until the end, but only those the scale reads (the DC term at 1/8,
// four per block at 1/4) with a bit per coefficient saying which are not
// zero, which the refinement passes need; the passes of a component whose
// DC term is all that is kept are skipped unread. That keeps a 12-megapixel picture at 1/4 in
// about 5 MB: progressive JPEGs decode at 1/8 or 1/4 only. Arithmetic
// coding, lossless and 12-bit JPEGs, and CMYK, are refused.

import (
	"bufio"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"math/bits"
)

var errUnsupported = errors.New("unsupported JPEG")

func jpegError(format string, a ...any) error {
	return fmt.Errorf("JPEG: "+format, a...)
}

// maxPixels bounds the pictures decoded at all (a header can claim 65535
// by 65535).
const maxPixels = 100 << 20

// zigzag[k] is the natural (row-major) index of the k-th coefficient in
// zigzag order.
var zigzag = [64]uint8{
	0, 1, 8, 16, 9, 2, 3, 10, 17, 24, 32, 25, 18, 11, 4, 5,
	12, 19, 26, 33, 40, 48, 41, 34, 27, 20, 13, 6, 7, 14, 21, 28,
	35, 42, 49, 56, 57, 50, 43, 36, 29, 22, 15, 23, 30, 37, 44, 51,
	58, 59, 52, 45, 38, 31, 39, 46, 53, 60, 61, 54, 47, 55, 62, 63,
}

// rowSink takes a decoded picture a row at a time.
type rowSink interface {
	// begin says the size of the picture in eighths of a pixel (a JPEG
	// shrunk by 8 ends in part of a pixel), so the rows have (w8+7)/8
	// pixels and there are (h8+7)/8 of them, and their samples per pixel
	// (1: grey, 3: RGB, 4: RGBA premultiplied; with ycc, 3 of Y, Cb and
	// Cr, JFIF's).
	begin(w8, h8, channels int, ycc bool) error
	// row takes the next row (w×channels bytes, not kept).
	row(b []byte)
	// planes takes the next row of 3 samples a pixel as the rows of its
	// three planes (w bytes each, not kept).
	planes(a, b, c []byte)
}

type huffman struct {
	lookup  [1 << lookupBits]uint16 // (length << 8) | symbol for codes up to lookupBits long; 0: longer
	maxcode [17]int32               // per length, the largest code (-1: none)
	valptr  [17]int32
	mincode [17]int32
	vals    [256]byte
	ok      bool
}

const lookupBits = 9

// fastBits is the bits a fastTable entry is looked up by: a symbol whose
// code and value together take no more (most of a photo's coefficients)
// is decoded in one look-up.
const fastBits = 10

// fastTable is a Huffman table's codes whose code and value together take
// at most fastBits bits, by their first fastBits bits: the value << 8 |
// the run of zeros before it << 4 | the bits taken; 0 for the others. In
// an AC table, ZRL is a run of 15 and a zero, and EOB the bits alone: an
// entry below 16 as a number without sign (no value is 0, and a negative
// one's sign bit is set).
type fastTable [1 << fastBits]int32

// build fills f from h, built, a DC table's or (ac) an AC table's.
func (f *fastTable) build(h *huffman, ac bool) {
	*f = fastTable{}
	code, k := 0, 0
	for l := 1; l <= 16; l++ {
		n := int(h.maxcode[l] - h.mincode[l] + 1)
		if h.maxcode[l] < 0 {
			n = 0
		}
		for i := range n {
			rs := h.vals[k+i]
			r, s := int(rs>>4), int(rs&15)
			if !ac {
				r, s = 0, int(rs) // a DC symbol is its value's size, up to 16
			}
			if ac && s == 0 && r != 0 && r != 15 || l+s > fastBits {
				continue // (not a symbol T.81 has)
			}
			for vb := range 1 << s { // every value, then every bit after
				v := int32(vb)
				if s > 0 && vb < 1<<(s-1) {
					v += -1<<s + 1
				}
				first := (code+i)<<(fastBits-l) | vb<<(fastBits-l-s)
				for j := range 1 << (fastBits - l - s) {
					f[first+j] = v<<8 | int32(r)<<4 | int32(l+s)
				}
			}
		}
		code, k = (code+n)<<1, k+n
	}
}

type component struct {
	id       byte
	h, v     int
	tq       int
	td, ta   int
	pred     int32
	bw, bh   int      // blocks per line and column, padded to whole MCUs
	nx, ny   int      // samples per block across and down: subsampled, more
	kmax     int      // progressive: the last coefficient (zigzag) kept
	coefs    []int16  // progressive: kmax+1 coefficients a block
	nonzero  []uint64 // progressive: which of a block's coefficients are not zero
	eobrun   int
	plane    []byte // samples: one MCU row (streaming) or the whole component
	stride   int
	inScan   bool
	finished bool // sequential: every block decoded
	// sequential: for each coefficient (zigzag) that the scale uses, its
	// quantizer step << 8 | where it goes in the block (natural order); 0
	// for those outside the ny×nx read. The DC term's is its step << 8.
	slot [64]int32
	last uint // sequential: the last coefficient (zigzag) the scale uses
}

type jpegDecoder struct {
	r        *bufio.Reader
	sink     rowSink
	scaleFor func(w, h int, progressive bool) int

	width, height int
	progressive   bool
	comps         []component
	hmax, vmax    int
	mcusX, mcusY  int
	quant         [4][64]uint16 // in zigzag order
	qset          [4]bool
	dc, ac        [4]huffman
	dcFast        [4]fastTable
	acFast        [4]fastTable
	restart       int
	adobe         int // the Adobe marker's transform, -1 without one
	n             int // samples per block side
	streaming     bool
	frame         bool

	bits   uint // MSB first: a machine word, as wide as registers are
	nbits  uint
	win    []byte // fill's window on the reader's buffer (see sync)
	used   int    // the bytes of win fill has taken
	marker byte   // a marker met in the entropy-coded data, 0 if none
	fed    int    // zero bytes fed past the end of the data
	scans  int
	err    error

	row   []byte // one output row of three components
	begun bool   // the sink was told the picture's size and samples
}

// decodeJPEG decodes the JPEG r to sink, at the scale scaleFor picks from
// the full size (1, 2, 4 or 8 samples per block side; a progressive JPEG
// decodes at 1 whatever it picks).
func decodeJPEG(r io.Reader, scaleFor func(w, h int, progressive bool) int, sink rowSink) error {
	d := &jpegDecoder{r: bufio.NewReaderSize(r, 32<<10), sink: sink, scaleFor: scaleFor, adobe: -1}
	return d.decode()
}

func (d *jpegDecoder) readFull(b []byte) error {
	_, err := io.ReadFull(d.r, b)
	if err == io.EOF {
		err = io.ErrUnexpectedEOF
	}
	return err
}

func (d *jpegDecoder) u16() (int, error) {
	var b [2]byte
	if err := d.readFull(b[:]); err != nil {
		return 0, err
	}
	return int(b[0])<<8 | int(b[1]), nil
}

// nextMarker reads up to and including the next marker: the one the
// entropy-coded data ended on, or the next 0xFF xx with xx not 0 or fill.
func (d *jpegDecoder) nextMarker() (byte, error) {
	d.sync()
	if m := d.marker; m != 0 {
		d.marker = 0
		return m, nil
	}
	for {
		b, err := d.r.ReadByte()
		if err != nil {
			return 0, err
		}
		if b != 0xFF {
			continue // stray data: skipped, as decoders do
		}
		for b == 0xFF {
			if b, err = d.r.ReadByte(); err != nil {
				return 0, err
			}
		}
		if b != 0 {
			return b, nil
		}
	}
}

func (d *jpegDecoder) decode() error {
	var soi [2]byte
	if err := d.readFull(soi[:]); err != nil || soi[0] != 0xFF || soi[1] != 0xD8 {
		return jpegError("no start of image")
	}
	for {
		m, err := d.nextMarker()
		if err != nil {
			if d.frame && d.progressive {
				return d.finish() // a progressive JPEG cut short still has its DC
			}
			return jpegError("cut short: %v", err)
		}
		switch {
		case m == 0xD9: // EOI
			return d.finish()
		case m >= 0xD0 && m <= 0xD7, m == 0x01: // RSTn, TEM: no length
			continue
		}
		n, err := d.u16()
		if err != nil || n < 2 {
			return jpegError("bad segment length")
		}
		seg := n - 2
		switch m {
		case 0xC0, 0xC1, 0xC2:
			err = d.readFrame(seg, m == 0xC2)
		case 0xC3, 0xC5, 0xC6, 0xC7, 0xC9, 0xCA, 0xCB, 0xCD, 0xCE, 0xCF:
			return fmt.Errorf("%w: lossless, hierarchical or arithmetic-coded (SOF%d)", errUnsupported, m-0xC0)
		case 0xC4:
			err = d.readHuffman(seg)
		case 0xDB:
			err = d.readQuant(seg)
		case 0xDD:
			err = d.readRestart(seg)
		case 0xEE:
			err = d.readAdobe(seg)
		case 0xDA:
			err = d.readScan(seg)
		default: // APPn, COM and the rest
			_, err = d.r.Discard(seg)
		}
		if err != nil {
			return err
		}
	}
}

func (d *jpegDecoder) readFrame(n int, progressive bool) error {
	if d.frame {
		return jpegError("two frames")
	}
	var b [6]byte
	if n < 6 || d.readFull(b[:]) != nil {
		return jpegError("bad frame header")
	}
	if b[0] != 8 {
		return fmt.Errorf("%w: %d-bit samples", errUnsupported, b[0])
	}
	d.height, d.width = int(b[1])<<8|int(b[2]), int(b[3])<<8|int(b[4])
	nc := int(b[5])
	if d.width == 0 || d.height == 0 || d.width*d.height > maxPixels {
		return jpegError("picture of %d×%d", d.width, d.height)
	}
	if nc != 1 && nc != 3 || n != 6+3*nc {
		return fmt.Errorf("%w: %d components", errUnsupported, nc)
	}
	d.comps = make([]component, nc)
	for i := range d.comps {
		var c [3]byte
		if d.readFull(c[:]) != nil {
			return jpegError("bad frame header")
		}
		h, v := int(c[1]>>4), int(c[1]&15)
		if h < 1 || h > 4 || v < 1 || v > 4 || c[2] > 3 {
			return jpegError("bad sampling or table in the frame header")
		}
		d.comps[i] = component{id: c[0], h: h, v: v, tq: int(c[2])}
		d.hmax, d.vmax = max(d.hmax, h), max(d.vmax, v)
	}
	for _, c := range d.comps {
		if d.hmax%c.h != 0 || d.vmax%c.v != 0 {
			return fmt.Errorf("%w: sampling factors %d×%d against %d×%d", errUnsupported, c.h, c.v, d.hmax, d.vmax)
		}
	}
	if nc == 1 { // one component: its MCU is one block, whatever it says
		d.comps[0].h, d.comps[0].v, d.hmax, d.vmax = 1, 1, 1, 1
	}
	d.progressive, d.frame = progressive, true
	d.mcusX = (d.width + 8*d.hmax - 1) / (8 * d.hmax)
	d.mcusY = (d.height + 8*d.vmax - 1) / (8 * d.vmax)
	d.n = d.scaleFor(d.width, d.height, progressive)
	if d.n != 2 && d.n != 4 && d.n != 8 {
		d.n = 1
	}
	if progressive {
		d.n = min(d.n, 2)
		for d.n > 1 && d.progressiveBytes(d.n) > maxCoefBytes {
			d.n /= 2
		}
	}
	for i := range d.comps {
		c := &d.comps[i]
		c.bw, c.bh = d.mcusX*c.h, d.mcusY*c.v
		// A subsampled component's blocks give more samples, so that every
		// component comes out at the picture's scale, as far as 8 allows.
		c.nx, c.ny = min(8, d.n*d.hmax/c.h), min(8, d.n*d.vmax/c.v)
		if progressive {
			c.kmax = lastCoef(c.nx, c.ny)
			c.coefs = make([]int16, c.bw*c.bh*(c.kmax+1))
			if c.kmax > 0 {
				c.nonzero = make([]uint64, c.bw*c.bh)
			}
		}
	}
	return nil
}

// begin tells the sink the picture's size and samples, before the first
// scan: Y, Cb and Cr (JFIF), or R, G and B where the Adobe marker (which
// may come after the frame) says so or the components are named so.
func (d *jpegDecoder) begin() error {
	if d.begun {
		return nil
	}
	d.begun = true
	if len(d.comps) == 1 {
		return d.sink.begin(d.width*d.n, d.height*d.n, 1, false)
	}
	d.row = make([]byte, 3*((d.width*d.n+7)/8))
	rgb := d.adobe == 0 || d.comps[0].id == 'R' && d.comps[1].id == 'G' && d.comps[2].id == 'B'
	return d.sink.begin(d.width*d.n, d.height*d.n, 3, !rgb)
}

// maxCoefBytes bounds what a progressive JPEG's kept coefficients take.
const maxCoefBytes = 8 << 20

// lastCoef is the last coefficient, in zigzag order, that an nx×ny
// reduced inverse DCT reads.
func lastCoef(nx, ny int) int {
	k := 0
	for i, z := range zigzag {
		if int(z>>3) < ny && int(z&7) < nx {
			k = i
		}
	}
	return k
}

// progressiveBytes is what keeping the coefficients for scale n takes.
func (d *jpegDecoder) progressiveBytes(n int) int {
	total := 0
	for _, c := range d.comps {
		k := lastCoef(min(8, n*d.hmax/c.h), min(8, n*d.vmax/c.v))
		per := 2 * (k + 1)
		if k > 0 {
			per += 8
		}
		total += d.mcusX * c.h * d.mcusY * c.v * per
	}
	return total
}

func (d *jpegDecoder) readQuant(n int) error {
	for n > 0 {
		t, err := d.r.ReadByte()
		if err != nil {
			return jpegError("bad quantization table")
		}
		pq, tq := t>>4, int(t&15)
		size := 1 + 64*(1+int(pq))
		if pq > 1 || tq > 3 || n < size {
			return jpegError("bad quantization table")
		}
		var b [128]byte
		if d.readFull(b[:size-1]) != nil {
			return jpegError("bad quantization table")
		}
		for k := range 64 {
			if pq == 0 {
				d.quant[tq][k] = uint16(b[k])
			} else {
				d.quant[tq][k] = uint16(b[2*k])<<8 | uint16(b[2*k+1])
			}
		}
		d.qset[tq] = true
		n -= size
	}
	return nil
}

func (d *jpegDecoder) readHuffman(n int) error {
	for n > 0 {
		var head [17]byte
		if n < 17 || d.readFull(head[:]) != nil {
			return jpegError("bad Huffman table")
		}
		class, id := head[0]>>4, int(head[0]&15)
		if class > 1 || id > 3 {
			return jpegError("bad Huffman table")
		}
		total := 0
		for _, c := range head[1:] {
			total += int(c)
		}
		if total > 256 || n < 17+total {
			return jpegError("bad Huffman table")
		}
		h := &d.dc[id]
		if class == 1 {
			h = &d.ac[id]
		}
		*h = huffman{}
		if d.readFull(h.vals[:total]) != nil {
			return jpegError("bad Huffman table")
		}
		if err := h.build(head[1:]); err != nil {
			return err
		}
		if class == 1 {
			d.acFast[id].build(h, true)
		} else {
			d.dcFast[id].build(h, false)
		}
		n -= 17 + total
	}
	return nil
}

// build makes the decoding tables from the count of codes of each length
// (T.81 Annex C).
func (h *huffman) build(counts []byte) error {
	code, k := int32(0), int32(0)
	for l := 1; l <= 16; l++ {
		cnt := int32(counts[l-1])
		h.valptr[l], h.mincode[l], h.maxcode[l] = k, code, -1
		if cnt > 0 {
			h.maxcode[l] = code + cnt - 1
			if h.maxcode[l] >= 1<<l {
				return jpegError("bad Huffman table: too many codes of length %d", l)
			}
			if l <= lookupBits {
				for i := range cnt {
					c := code + i
					first := c << (lookupBits - l)
					for j := range int32(1) << (lookupBits - l) {
						h.lookup[first+j] = uint16(l)<<8 | uint16(h.vals[k+i])
					}
				}
			}
		}
		code, k = (code+cnt)<<1, k+cnt
	}
	h.ok = true
	return nil
}

func (d *jpegDecoder) readRestart(n int) error {
	if n != 2 {
		return jpegError("bad restart interval")
	}
	ri, err := d.u16()
	d.restart = ri
	return err
}

func (d *jpegDecoder) readAdobe(n int) error {
	if n < 12 {
		_, err := d.r.Discard(n)
		return err
	}
	var b [12]byte
	if err := d.readFull(b[:]); err != nil {
		return err
	}
	if string(b[:5]) == "Adobe" {
		d.adobe = int(b[11])
	}
	_, err := d.r.Discard(n - 12)
	return err
}

func (d *jpegDecoder) readScan(n int) error {
	if !d.frame {
		return jpegError("a scan before the frame")
	}
	ns, err := d.r.ReadByte()
	if err != nil || ns < 1 || int(ns) > len(d.comps) || n != 4+2*int(ns) {
		return jpegError("bad scan header")
	}
	var scan []*component
	for i := range d.comps {
		d.comps[i].inScan = false
	}
	for range ns {
		var b [2]byte
		if d.readFull(b[:]) != nil {
			return jpegError("bad scan header")
		}
		var c *component
		for i := range d.comps {
			if d.comps[i].id == b[0] && !d.comps[i].inScan {
				c = &d.comps[i]
			}
		}
		if c == nil || b[1]>>4 > 3 || b[1]&15 > 3 {
			return jpegError("bad scan header")
		}
		c.inScan, c.td, c.ta, c.pred = true, int(b[1]>>4), int(b[1]&15), 0
		scan = append(scan, c)
	}
	var b [3]byte
	if d.readFull(b[:]) != nil {
		return jpegError("bad scan header")
	}
	if err := d.begin(); err != nil {
		return err
	}
	ss, se, ah, al := int(b[0]), int(b[1]), int(b[2]>>4), uint(b[2]&15)
	d.bits, d.nbits, d.marker, d.fed = 0, 0, 0, 0
	if d.scans++; d.scans > 100 {
		return jpegError("more than 100 scans")
	}
	if d.progressive {
		switch {
		case ss == 0 && (se != 0 || al > 13):
			return jpegError("bad progressive DC scan")
		case ss == 0:
			return d.scanDC(scan, ah, al)
		case se < ss || se > 63 || len(scan) != 1 || al > 13:
			return jpegError("bad progressive AC scan")
		case scan[0].kmax == 0:
			// Only the DC term is kept: the data is passed over by
			// nextMarker. (With more kept, every AC scan is read, for its
			// bits of which coefficients are not zero: a later refinement
			// of a band that reaches the kept ones needs them all.)
			return nil
		case !d.ac[scan[0].ta].ok:
			return jpegError("a scan with tables never defined")
		}
		return d.scanAC(scan[0], ss, se, ah, al)
	}
	if ss != 0 || se != 63 || ah != 0 || al != 0 {
		return jpegError("bad sequential scan")
	}
	for _, c := range scan {
		if !d.qset[c.tq] || !d.dc[c.td].ok || !d.ac[c.ta].ok {
			return jpegError("a scan with tables never defined")
		}
	}
	return d.scanSequential(scan)
}

// wordBits is the bit buffer's width: 64 on a PC, 32 on the board, where
// a wider one would cost two registers for every shift.
const wordBits = bits.UintSize

// fill tops up the bit buffer to more than wordBits-8 bits; past the end
// of the entropy-coded data (a marker), it feeds zeros. The bytes come
// straight from the reader's buffer (win): a word of them at once where
// the word holds no 0xFF, one at a time up to one that is; a stuffed zero,
// a marker and the buffer's end take the slow path.
func (d *jpegDecoder) fill() {
	if used := d.used; used+wordBits/8 <= len(d.win) {
		var x uint
		if wordBits == 64 {
			x = uint(binary.BigEndian.Uint64(d.win[used:]))
		} else {
			x = uint(binary.BigEndian.Uint32(d.win[used:]))
		}
		const ones, highs = ^uint(0) / 255, ^uint(0) / 255 * 128
		if y := ^x; (y-ones)&^y&highs == 0 { // no byte of x is 0xFF (none of y is 0)
			n := (wordBits - d.nbits) / 8 // the whole bytes that fit
			const m = wordBits - 1        // (shifts in range: no code for wider ones)
			d.bits |= x >> ((wordBits - 8*n) & m) << ((wordBits - 8*n - d.nbits) & m)
			d.nbits += 8 * n
			d.used += int(n)
			return
		}
	}
	for {
		bits, nbits, used, win := d.bits, d.nbits, d.used, d.win
		for nbits <= wordBits-8 && used < len(win) && win[used] != 0xFF {
			bits |= uint(win[used]) << ((wordBits - 8 - nbits) & (wordBits - 1))
			nbits += 8
			used++
		}
		d.bits, d.nbits, d.used = bits, nbits, used
		if nbits > wordBits-8 {
			return
		}
		d.fillSlow()
	}
}

// sync gives the reader back the bytes fill took from its buffer; before
// anything else reads from it.
func (d *jpegDecoder) sync() {
	if d.win != nil {
		d.r.Discard(d.used)
		d.win, d.used = nil, 0
	}
}

// fillSlow adds one byte the slow way (a stuffed 0xFF 0x00, a marker, the
// end of the data), or refills the window.
func (d *jpegDecoder) fillSlow() {
	d.sync()
	var b byte
	if d.marker == 0 && d.err == nil {
		if next, err := d.r.Peek(1); err == nil && next[0] != 0xFF {
			d.win, _ = d.r.Peek(d.r.Buffered())
			return
		}
		c, err := d.r.ReadByte()
		switch {
		case err != nil:
			d.err = err
		case c != 0xFF:
			b = c
		default:
			for c == 0xFF {
				if c, err = d.r.ReadByte(); err != nil {
					d.err = err
					break
				}
			}
			if c == 0 {
				b = 0xFF
			} else if err == nil {
				d.marker = c
			}
		}
	}
	if d.marker != 0 || d.err != nil {
		d.fed++
	}
	d.bits |= uint(b) << (wordBits - 8 - d.nbits)
	d.nbits += 8
}

// exhausted is whether the decoding ran past the data by more than the
// bits a last code may look ahead: the data is cut short or damaged, and
// decoding on would only read zeros (the work of a whole picture for a
// header that claims one).
func (d *jpegDecoder) exhausted() bool { return d.fed > wordBits/4 }

// getBits reads n bits, at most 16.
func (d *jpegDecoder) getBits(n uint) int32 {
	if n == 0 {
		return 0
	}
	if d.nbits < n {
		d.fill()
	}
	v := int32(d.bits >> (wordBits - n))
	d.bits <<= n
	d.nbits -= n
	return v
}

// receiveExtend reads an s-bit value and extends its sign (T.81 F.2.2.1).
func (d *jpegDecoder) receiveExtend(s uint) int32 {
	if s > 16 {
		d.err = jpegError("bad coefficient size")
		return 0
	}
	v := d.getBits(s)
	if s > 0 && v < 1<<(s-1) {
		v += -1<<s + 1
	}
	return v
}

// huff reads a Huffman-coded symbol: most from the lookup table, the
// rest bit length by bit length.
func (d *jpegDecoder) huff(h *huffman) byte {
	if d.nbits < 16 {
		d.fill()
	}
	if e := h.lookup[d.bits>>(wordBits-lookupBits)]; e != 0 {
		l := uint(e >> 8)
		d.bits <<= l
		d.nbits -= l
		return byte(e)
	}
	return d.huffLong(h)
}

func (d *jpegDecoder) huffLong(h *huffman) byte {
	for l := lookupBits + 1; l <= 16; l++ {
		code := int32(d.bits >> (wordBits - l))
		if code <= h.maxcode[l] && code >= h.mincode[l] {
			d.bits <<= uint(l)
			d.nbits -= uint(l)
			return h.vals[h.valptr[l]+code-h.mincode[l]]
		}
	}
	if d.err == nil {
		d.err = jpegError("bad Huffman code")
	}
	return 0
}

// restartAt resets the decoder for the interval after a restart marker.
func (d *jpegDecoder) restartAt(scan []*component) {
	d.bits, d.nbits, d.fed = 0, 0, 0
	if d.marker >= 0xD0 && d.marker <= 0xD7 {
		d.marker = 0
	} else if d.marker == 0 {
		if m, err := d.nextMarker(); err != nil || m < 0xD0 || m > 0xD7 {
			d.marker, d.err = m, jpegError("a restart marker is missing")
		}
	}
	for _, c := range scan {
		c.pred, c.eobrun = 0, 0
	}
}

// mcuBlocks calls f for each block of the MCU at (mx, my) of scan, with its
// component and block coordinates; a scan of one component has a block
// per MCU, only the blocks of the picture.
func (d *jpegDecoder) forEachMCU(scan []*component, f func(c *component, bx, by int) bool) {
	mx, my := d.mcusX, d.mcusY
	if len(scan) == 1 {
		c := scan[0]
		mx = ((d.width*c.h+d.hmax-1)/d.hmax + 7) / 8
		my = ((d.height*c.v+d.vmax-1)/d.vmax + 7) / 8
	}
	count := 0
	for y := range my {
		for x := range mx {
			if d.restart > 0 && count > 0 && count%d.restart == 0 {
				d.restartAt(scan)
			}
			count++
			if len(scan) == 1 {
				if !f(scan[0], x, y) {
					return
				}
				continue
			}
			for _, c := range scan {
				for v := range c.v {
					for h := range c.h {
						if !f(c, x*c.h+h, y*c.v+v) {
							return
						}
					}
				}
			}
		}
		if d.err != nil {
			return
		}
		if len(scan) == len(d.comps) && d.streaming {
			d.emitRows(y*8*d.vmax*d.n/8, 8*d.vmax*d.n/8)
		}
	}
}

// scanDC decodes a progressive DC scan: the first (ah == 0) or a
// refinement of one more bit.
func (d *jpegDecoder) scanDC(scan []*component, ah int, al uint) error {
	for _, c := range scan {
		if ah == 0 && !d.dc[c.td].ok {
			return jpegError("a scan with tables never defined")
		}
	}
	d.forEachMCU(scan, func(c *component, bx, by int) bool {
		i := (by*c.bw + bx) * (c.kmax + 1)
		if i >= len(c.coefs) {
			return true
		}
		if ah == 0 {
			s := d.huff(&d.dc[c.td])
			c.pred += d.receiveExtend(uint(s))
			c.coefs[i] = int16(c.pred << al)
		} else if d.getBits(1) != 0 {
			c.coefs[i] |= 1 << al
		}
		return d.err == nil && !d.exhausted()
	})
	return d.scanEnd()
}

// scanAC decodes a progressive AC scan of one component, for the band of
// frequencies [ss, se]: the first pass (ah == 0) or a refinement of one
// more bit (T.81 G.1.2.2 and G.1.2.3). Coefficients past kmax are decoded
// and dropped, but which of them are not zero is kept: a refinement reads
// a correction bit for each of those.
func (d *jpegDecoder) scanAC(c *component, ss, se, ah int, al uint) error {
	c.eobrun = 0
	h := &d.ac[c.ta]
	d.forEachMCU([]*component{c}, func(c *component, bx, by int) bool {
		b := by*c.bw + bx
		if b >= len(c.nonzero) {
			return true
		}
		coefs := c.coefs[b*(c.kmax+1) : (b+1)*(c.kmax+1)]
		if ah == 0 {
			d.acFirst(c, h, coefs, &c.nonzero[b], ss, se, al)
		} else {
			d.acRefine(c, h, coefs, &c.nonzero[b], ss, se, al)
		}
		return d.err == nil && !d.exhausted()
	})
	return d.scanEnd()
}

// eobRun reads the length of a run of blocks with nothing more in the band
// (EOBr: 2^r of them, and r more bits).
func (d *jpegDecoder) eobRun(r int) int {
	n := 1 << r
	if r > 0 {
		n += int(d.getBits(uint(r)))
	}
	return n
}

func (d *jpegDecoder) acFirst(c *component, h *huffman, coefs []int16, nz *uint64, ss, se int, al uint) {
	if c.eobrun > 0 {
		c.eobrun--
		return
	}
	for k := ss; k <= se; k++ {
		rs := d.huff(h)
		r, s := int(rs>>4), uint(rs&15)
		if s == 0 {
			if r < 15 {
				c.eobrun = d.eobRun(r) - 1
				return
			}
			k += 15
			continue
		}
		k += r
		if k > 63 {
			d.err = jpegError("bad AC run")
			return
		}
		v := d.receiveExtend(s) << al
		*nz |= 1 << k
		if k <= c.kmax {
			coefs[k] = int16(v)
		}
	}
}

func (d *jpegDecoder) acRefine(c *component, h *huffman, coefs []int16, nz *uint64, ss, se int, al uint) {
	p1, m1 := int16(1)<<al, int16(-1)<<al
	// correct appends a bit to the coefficient k, known not to be zero.
	correct := func(k int) {
		if d.getBits(1) != 0 && k <= c.kmax && coefs[k]&p1 == 0 {
			if coefs[k] >= 0 {
				coefs[k] += p1
			} else {
				coefs[k] += m1
			}
		}
	}
	k := ss
	if c.eobrun == 0 {
		for ; k <= se; k++ {
			rs := d.huff(h)
			r, s := int(rs>>4), rs&15
			var v int16
			if s != 0 {
				if s != 1 {
					d.err = jpegError("bad AC refinement")
					return
				}
				v = m1
				if d.getBits(1) != 0 {
					v = p1
				}
			} else if r != 15 {
				c.eobrun = d.eobRun(r)
				break
			}
			// Past r coefficients still zero (correcting those that are
			// not), to the one that becomes v.
			for ; k <= se; k++ {
				if *nz&(1<<k) != 0 {
					correct(k)
					continue
				}
				if r == 0 {
					if v != 0 {
						*nz |= 1 << k
						if k <= c.kmax {
							coefs[k] = v
						}
					}
					break
				}
				r--
			}
			if d.err != nil {
				return
			}
		}
	}
	if c.eobrun > 0 {
		for ; k <= se; k++ {
			if *nz&(1<<k) != 0 {
				correct(k)
			}
		}
		c.eobrun--
	}
}

// scanEnd takes the end of a scan's data: an error, or what the data
// ended on.
func (d *jpegDecoder) scanEnd() error {
	if d.err != nil && !errors.Is(d.err, io.EOF) && !errors.Is(d.err, io.ErrUnexpectedEOF) {
		return d.err
	}
	if d.err != nil && !d.progressive {
		return jpegError("cut short: %v", d.err)
	}
	d.err = nil
	return nil
}

// scanSequential decodes a baseline or extended sequential scan, writing
// each block's n×n samples into its component's plane.
func (d *jpegDecoder) scanSequential(scan []*component) error {
	all := len(scan) == len(d.comps)
	if all && d.comps[0].plane == nil {
		d.streaming = true // one scan has everything: a row of MCUs at a time
	}
	for _, c := range scan {
		c.stride = c.bw * c.nx
		rows := c.v * c.ny
		if !d.streaming {
			rows = c.bh * c.ny
			if c.bw*c.bh*c.nx*c.ny > 16<<20 {
				return fmt.Errorf("%w: a %d×%d JPEG in separate scans, too large to hold", errUnsupported, d.width, d.height)
			}
		}
		if len(c.plane) < rows*c.stride {
			c.plane = make([]byte, rows*c.stride)
		}
		c.last = 0
		for k, z := range zigzag {
			c.slot[k] = 0
			if int(z>>3) < c.ny && int(z&7) < c.nx {
				c.slot[k] = int32(d.quant[c.tq][k])<<8 | int32(z)
				c.last = uint(k)
			}
		}
	}
	// coef is all zero but its DC term before each block: idct leaves it
	// so.
	var coef [64]int32
	if d.streaming && len(scan) == len(d.comps) {
		d.streamMCUs(scan, &coef) // (most pictures)
	} else {
		d.forEachMCU(scan, func(c *component, bx, by int) bool {
			ac := d.block(c, &coef)
			if d.err == nil && d.exhausted() {
				d.err = io.ErrUnexpectedEOF
			}
			if d.err != nil {
				return false
			}
			y := by
			if d.streaming {
				y = by % c.v
			}
			idct(&coef, c.nx, c.ny, ac, c.plane[y*c.ny*c.stride+bx*c.nx:], c.stride)
			return true
		})
	}
	if err := d.scanEnd(); err != nil {
		return err
	}
	for _, c := range scan {
		c.finished = true
	}
	return nil
}

// streamMCUs is forEachMCU for a scan of every component, streamed, with
// its blocks decoded in the loop rather than by a call of a function
// value for each: a row of MCUs into the planes, then handed on.
func (d *jpegDecoder) streamMCUs(scan []*component, coef *[64]int32) {
	rows := 8 * d.vmax * d.n / 8 // output rows an MCU row gives
	count := 0
	for my := range d.mcusY {
		for mx := range d.mcusX {
			if d.restart > 0 && count > 0 && count%d.restart == 0 {
				d.restartAt(scan)
			}
			count++
			for _, c := range scan {
				for v := range c.v {
					row := c.plane[v*c.ny*c.stride:]
					for h := range c.h {
						ac := d.block(c, coef)
						if d.err == nil && d.exhausted() {
							d.err = io.ErrUnexpectedEOF
						}
						if d.err != nil {
							return
						}
						idct(coef, c.nx, c.ny, ac, row[(mx*c.h+h)*c.nx:], c.stride)
					}
				}
			}
		}
		d.emitRows(my*rows, rows)
	}
}

// block decodes a sequential block into coef: its DC term, and the AC
// coefficients the scale uses (c.slot); it says which columns it put
// those in (idct's ac). The hottest loop of a preview: the inner loops
// take coefficients from acFast while the bits in hand last, on the bit
// buffer in locals and with no call, so that the compiler keeps their
// values in registers; a refill and the other coefficients (acSlow) come
// between their runs. The coefficients are not clamped: a damaged file's
// may make idct's sums wrap, which only makes its samples wrong (see
// idct).
func (d *jpegDecoder) block(c *component, coef *[64]int32) (ac uint32) {
	if d.nbits < 16 {
		d.fill()
	}
	if e := d.dcFast[c.td][d.bits>>(wordBits-fastBits)]; e != 0 {
		d.bits <<= uint(e) & 15
		d.nbits -= uint(e) & 15
		c.pred += e >> 8
	} else {
		c.pred += d.receiveExtend(uint(d.huff(&d.dc[c.td])))
	}
	coef[0] = clampCoef(c.pred * (c.slot[0] >> 8))
	fast, slot, last := &d.acFast[c.ta], &c.slot, c.last
	k := uint(1)
	for k < 64 {
		if d.nbits < 16 {
			d.fill()
		}
		bits, nbits := d.bits, d.nbits
		for nbits >= fastBits && k <= last {
			e := fast[bits>>(wordBits-fastBits)]
			if e == 0 {
				break
			}
			l := uint(e) & 15
			bits <<= l
			nbits -= l
			if uint32(e) < 1<<4 { // EOB (a value, negative too, is above)
				k = 64
				break
			}
			if k += uint(e>>4) & 15; k > 63 {
				k = badRun
				break
			}
			if sl := slot[k]; sl != 0 {
				coef[sl&63] = (e >> 8) * (sl >> 8)
				ac |= 1 << (sl & 7)
			}
			k++
		}
		// Past the last coefficient the scale uses (at 1/8, past the DC
		// term of most blocks), the symbols are only passed over.
		for nbits >= fastBits && k > last && k < 64 {
			e := fast[bits>>(wordBits-fastBits)]
			if e == 0 {
				break
			}
			l := uint(e) & 15
			bits <<= l
			nbits -= l
			if uint32(e) < 1<<4 { // EOB (a value, negative too, is above)
				k = 64
				break
			}
			if k += uint(e>>4)&15 + 1; k > 64 {
				k = badRun
			}
		}
		d.bits, d.nbits = bits, nbits
		if k >= 64 || nbits < fastBits {
			continue // done, or a refill first
		}
		e := d.acSlow(&d.ac[c.ta])
		if e == 0 {
			break // the end of the block
		}
		if k += uint(e>>4) & 15; k > 63 {
			k = badRun
			break
		}
		if sl := slot[k]; sl != 0 {
			coef[sl&63] = (e >> 8) * (sl >> 8)
			ac |= 1 << (sl & 7)
		}
		k++
	}
	if k == badRun {
		d.err = jpegError("bad AC run")
	}
	return ac
}

// badRun is block's k after a run past the block's end.
const badRun = 99

// acSlow decodes an AC symbol and its value the long way, as acFast has
// it: the value << 8 | the run of zeros before it << 4 (ZRL: a run of 15
// and a zero); 0 for the end of the block.
func (d *jpegDecoder) acSlow(h *huffman) int32 {
	rs := d.huff(h)
	r, s := int32(rs>>4), uint(rs&15)
	if s == 0 {
		if r != 15 {
			return 0
		}
		return 15 << 4
	}
	return d.receiveExtend(s)<<8 | r<<4
}

// finish hands on what streaming did not: the planes of a JPEG in
// separate scans, or a progressive JPEG's DC.
func (d *jpegDecoder) finish() error {
	if !d.frame {
		return jpegError("no frame")
	}
	if d.streaming {
		return nil
	}
	if err := d.begin(); err != nil {
		return err
	}
	for i := range d.comps {
		c := &d.comps[i]
		if d.progressive {
			d.planeFromCoefs(c)
		} else if !c.finished {
			return jpegError("a component never decoded")
		}
	}
	d.emitRows(0, (d.height*d.n+7)/8)
	return nil
}

// planeFromCoefs turns a progressive JPEG's kept coefficients into the
// component's samples, block by block, freeing them.
func (d *jpegDecoder) planeFromCoefs(c *component) {
	c.stride = c.bw * c.nx
	c.plane = make([]byte, c.bh*c.ny*c.stride)
	q := &d.quant[c.tq]
	var coef [64]int32
	per := c.kmax + 1
	for by := range c.bh {
		for bx := range c.bw {
			kept := c.coefs[(by*c.bw+bx)*per:][:per]
			clear(coef[:])
			ac := uint32(0)
			for k, v := range kept {
				z := zigzag[k]
				coef[z] = clampCoef(int32(v) * int32(q[k]))
				if k > 0 && v != 0 {
					ac |= 1 << (z & 7)
				}
			}
			idct(&coef, c.nx, c.ny, ac, c.plane[by*c.ny*c.stride+bx*c.nx:], c.stride)
		}
	}
	c.coefs, c.nonzero = nil, nil
}

// emitRows hands on output rows [y0, y0+n) from the planes (which hold
// them from row 0 when streaming a row of MCUs, from y0 otherwise): a
// grey picture's as they are, three components' interleaved.
func (d *jpegDecoder) emitRows(y0, n int) {
	h := (d.height*d.n + 7) / 8
	w := (d.width*d.n + 7) / 8
	for y := y0; y < y0+n && y < h; y++ {
		py := y
		if d.streaming {
			py = y - y0
		}
		if len(d.comps) == 1 {
			c := &d.comps[0]
			d.sink.row(c.plane[py*c.stride:][:w])
			continue
		}
		d.emit3(py, w)
	}
}

// emit3 hands on a row of three components' samples (Y, Cb and Cr, or R,
// G and B): as the planes' rows where each has a sample a pixel, else
// interleaved in d.row. A component with fewer
// samples than the picture (subsampled chroma beyond what its blocks
// could give) is stretched: by repeating its samples when streaming, and
// smoothly between them from whole planes (a progressive JPEG's DC terms,
// a sample per 16 pixels of chroma).
func (d *jpegDecoder) emit3(py, w int) {
	var rows [3][]byte
	var hs [3]int // output pixels per sample
	for i := range 3 {
		c := &d.comps[i]
		hs[i] = d.hmax * d.n / (c.h * c.nx)
		vs := d.vmax * d.n / (c.v * c.ny)
		if !d.streaming && (hs[i] > 1 || vs > 1) {
			d.interleaveSmooth(py, w)
			d.sink.row(d.row)
			return
		}
		rows[i] = c.plane[(py/vs)*c.stride:]
	}
	out := d.row[:3*w]
	a, b, c := rows[0], rows[1], rows[2]
	switch hs {
	case [3]int{1, 1, 1}: // every scale but the full one of a subsampled picture
		d.sink.planes(a[:w], b[:w], c[:w])
		return
	case [3]int{1, 2, 2}: // 4:2:0 and 4:2:2 at full scale
		for x := range w {
			out[3*x], out[3*x+1], out[3*x+2] = a[x], b[x>>1], c[x>>1]
		}
	default:
		for x := range w {
			out[3*x], out[3*x+1], out[3*x+2] = a[x/hs[0]], b[x/hs[1]], c[x/hs[2]]
		}
	}
	d.sink.row(out)
}

// interleaveSmooth is emit3's interleaving from whole planes, each
// sample between the two nearest down and across, by distance (in units
// of 1/(2·hs) and 1/(2·vs) of a sample).
func (d *jpegDecoder) interleaveSmooth(py, w int) {
	var at [3]func(x int) byte
	for i := range 3 {
		c := &d.comps[i]
		hs := d.hmax * d.n / (c.h * c.nx)
		vs := d.vmax * d.n / (c.v * c.ny)
		if hs == 1 && vs == 1 {
			row := c.plane[py*c.stride:]
			at[i] = func(x int) byte { return row[x] }
			continue
		}
		rows := len(c.plane) / c.stride
		y0, ty := lerpPos(py, vs, rows)
		r0, r1 := c.plane[y0*c.stride:], c.plane[min(y0+1, rows-1)*c.stride:]
		at[i] = func(x int) byte {
			x0, tx := lerpPos(x, hs, c.stride)
			x1 := min(x0+1, c.stride-1)
			top := int32(r0[x0])*(2*int32(hs)-tx) + int32(r0[x1])*tx
			bot := int32(r1[x0])*(2*int32(hs)-tx) + int32(r1[x1])*tx
			den := 4 * int32(hs) * int32(vs)
			return byte((top*(2*int32(vs)-ty) + bot*ty + den/2) / den)
		}
	}
	for x := range w {
		d.row[3*x], d.row[3*x+1], d.row[3*x+2] = at[0](x), at[1](x), at[2](x)
	}
}

// lerpPos places output pixel p on a component with s output pixels per
// sample and n samples: the sample before its centre, and how far past
// that sample's centre it is, in units of 1/(2s) of a sample.
func lerpPos(p, s, n int) (int, int32) {
	f := 2*p + 1 - s // the position ×2s, from the first sample's centre
	if f < 0 {
		return 0, 0
	}
	i := f / (2 * s)
	if i >= n-1 {
		return n - 1, 0
	}
	return i, int32(f % (2 * s))
}

// clamp8 is v bounded to a byte: one comparison for the v in range (most),
// as a number without sign; those out of it are 0 if negative, else 255.
func clamp8(v int32) byte {
	if uint32(v) > 255 {
		return byte(^(v >> 31))
	}
	return byte(v)
}
