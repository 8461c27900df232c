module github.com/bonesync/bonesync

go 1.26.8

require (
	golang.org/x/crypto v0.59.0 // indirect
	golang.org/x/sys v0.50.0 // indirect
)
