package files

import (
	"fmt"
	"strings"
	"testing"
)

// The iOS app names its parts 1, 2... 10, 11; Android 000001...: both are
// joined in the order of their numbers.
func TestChunkedPartsJoinInNumberOrder(t *testing.T) {
	h := newDAV(t, 0)
	for _, names := range [][]string{
		{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "11"},
		{"000001", "000002", "000010", "000011", "000003"},
	} {
		dir := "/remote.php/dav/uploads/u/transfer-" + names[0]
		must(t, h, 201, davRequest("MKCOL", dir, "", "Destination", "https://box/remote.php/dav/files/u/joined.txt"))
		var want strings.Builder
		for _, n := range names {
			must(t, h, 201, davRequest("PUT", dir+"/"+n, "<"+n+">", "OC-Total-Length", "999"))
		}
		for _, n := range []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11} {
			for _, name := range names {
				if strings.TrimLeft(name, "0") == fmt.Sprint(n) {
					want.WriteString("<" + name + ">")
				}
			}
		}
		must(t, h, 201, davRequest("MOVE", dir+"/.file", "", "Destination", "https://box/remote.php/dav/files/u/joined-"+names[0]+".txt",
			"OC-Total-Length", fmt.Sprint(want.Len())))
		if got := must(t, h, 200, davRequest("GET", "/remote.php/dav/files/u/joined-"+names[0]+".txt", "")); got != want.String() {
			t.Errorf("joined %q, want %q", got, want.String())
		}
	}
}
