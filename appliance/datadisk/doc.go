// Package datadisk is the data disk: a USB disk that holds the users'
// files, calendars and contacts in place of the card. It finds the disk by
// its ext4 label or UUID (find.go), formats a new one (mkfs.go, the box
// having no mke2fs), and moves the store onto it, checking every file by
// its digest before the box switches over (move.go).
package datadisk
