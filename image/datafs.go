package main

import (
	"crypto/sha256"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// writeDataFS makes the ext4 data partition with mke2fs -d (no root, no loop
// device): 4 KiB blocks, 256-byte inodes (nanosecond times, and room for a
// file's checksum record in the inode itself, see store/meta.go), a journal, and room reserved in the group
// descriptor table to grow online to 256 GiB at first boot. Its UUID, hash
// seed and times derive from SOURCE_DATE_EPOCH, so the bytes repeat.
func writeDataFS(o *options, out string) error {
	root := filepath.Join(o.work, "datafs")
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	os.Chtimes(root, o.epoch, o.epoch)
	sum := sha256.Sum256([]byte(fmt.Sprintf("bonesync-data %d", o.epoch.Unix())))
	uuid := fmt.Sprintf("%x-%x-%x-%x-%x", sum[0:4], sum[4:6], sum[6:8], sum[8:10], sum[10:16])
	epoch := strconv.FormatInt(o.epoch.Unix(), 10)
	env := []string{"SOURCE_DATE_EPOCH=" + epoch, "E2FSPROGS_FAKE_TIME=" + epoch, "MKE2FS_DEVICE_SECTSIZE=512"}
	_, err := sh(env, "mke2fs", "-q", "-F", "-t", "ext4", "-b", "4096", "-I", "256", "-L", "bonesync-data", "-U", uuid,
		"-E", "hash_seed="+uuid+",root_owner=0:0,resize=67108864", "-m", "1", "-d", root,
		out, strconv.Itoa(dataSectors/8)) // size in 4 KiB blocks
	return err
}
