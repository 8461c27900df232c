package update

// The mark a verified `emmc flash` leaves on the card (bonesync_moved in
// boot.env): the card's boot script then boots nothing, and distro boot
// goes on to the eMMC. The eMMC's own copy never carries it.

// SetMoved writes the mark into boot.env, or clears it (the console's
// `emmc card-boot`), in place, keeping the slot and any trial as they are.
func (c *Card) SetMoved(moved bool) error {
	unlock, err := c.io.lock()
	if err != nil {
		return err
	}
	defer unlock()
	bs, err := c.bootState()
	if err != nil {
		return err
	}
	if bs.Moved == moved {
		return nil
	}
	bs.Moved = moved
	b, err := bs.env().Bytes()
	if err != nil {
		return err
	}
	return c.write(StateFile, b)
}

// BootEnvCopy is what a raw copy of the boot partition must hold in place
// of boot.env, and where: the same state without the mark (so that the
// copy boots even when the card was marked already, by a flash before),
// and the offset of boot.env's sector from the partition's start.
func (c *Card) BootEnvCopy() (at int64, env []byte, err error) {
	bs, err := c.bootState()
	if err != nil {
		return 0, nil, err
	}
	bs.Moved = false
	if env, err = bs.env().Bytes(); err != nil {
		return 0, nil, err
	}
	at, err = c.io.offset(StateFile)
	return at, env, err
}
