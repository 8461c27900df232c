// Command s3server is the S3-compatible server the copy tests send to:
// rclone's own "serve s3" (the same engine the box links), built with
// only the local backend. It takes rclone's command line:
//
//	s3server serve s3 --addr 127.0.0.1:PORT --auth-key KEY,SECRET DIR
//
// It is a test's real server, not part of the box.
package main

import (
	_ "github.com/rclone/rclone/backend/local"
	"github.com/rclone/rclone/cmd"
	_ "github.com/rclone/rclone/cmd/serve/s3"
)

func main() { cmd.Main() }
