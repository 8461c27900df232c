package filetype

import "testing"

func TestPreviewable(t *testing.T) {
	for name, want := range map[string]bool{"a.JPG": true, "b.jpeg": true, "c.png": true, "d.gif": true, "e.webp": true,
		"f.heic": false, "g.mp4": false, "h": false, "i.txt": false} {
		if Previewable(name) != want {
			t.Errorf("Previewable(%q) = %v", name, !want)
		}
	}
}

func TestOf(t *testing.T) {
	for name, want := range map[string]string{"a.JPG": "image/jpeg", "b.heic": "image/heic", "c.docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
		"d": "application/octet-stream", "e.unknown-ext": "application/octet-stream"} {
		if got := Of(name); got != want {
			t.Errorf("Of(%q) = %q, want %q", name, got, want)
		}
	}
}
