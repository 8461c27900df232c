// Package filetype is what a file is by its name, the same on the board
// as on a PC (a listing never opens the files it lists to sniff them):
// its content type, and whether it gets a preview. The protocols (files,
// shares, webui) and the previews all ask it, so none asks another.
package filetype

import (
	"mime"
	"path"
	"strings"
)

// types are the content types of the files a household keeps, by
// extension: the box has no /etc/mime.types (Go's own table knows a
// dozen), and the apps' photos and media views find pictures and videos
// by their type.
var types = map[string]string{
	".jpg": "image/jpeg", ".jpeg": "image/jpeg", ".jpe": "image/jpeg", ".png": "image/png", ".gif": "image/gif",
	".webp": "image/webp", ".heic": "image/heic", ".heif": "image/heif", ".avif": "image/avif", ".bmp": "image/bmp",
	".tif": "image/tiff", ".tiff": "image/tiff", ".svg": "image/svg+xml", ".dng": "image/x-adobe-dng",
	".cr2": "image/x-canon-cr2", ".nef": "image/x-nikon-nef", ".arw": "image/x-sony-arw", ".ico": "image/x-icon",
	".mp4": "video/mp4", ".m4v": "video/x-m4v", ".mov": "video/quicktime", ".3gp": "video/3gpp", ".mkv": "video/x-matroska",
	".webm": "video/webm", ".avi": "video/x-msvideo", ".mts": "video/mp2t", ".mpg": "video/mpeg", ".mpeg": "video/mpeg",
	".mp3": "audio/mpeg", ".m4a": "audio/mp4", ".aac": "audio/aac", ".ogg": "audio/ogg", ".opus": "audio/ogg",
	".flac": "audio/flac", ".wav": "audio/wav",
	".txt": "text/plain", ".md": "text/markdown", ".csv": "text/csv", ".html": "text/html", ".htm": "text/html",
	".css": "text/css", ".js": "text/javascript", ".json": "application/json", ".xml": "application/xml",
	".ics": "text/calendar", ".vcf": "text/vcard", ".pdf": "application/pdf", ".epub": "application/epub+zip",
	".doc": "application/msword", ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
	".xls": "application/vnd.ms-excel", ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
	".ppt": "application/vnd.ms-powerpoint", ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
	".odt": "application/vnd.oasis.opendocument.text", ".ods": "application/vnd.oasis.opendocument.spreadsheet",
	".odp": "application/vnd.oasis.opendocument.presentation", ".zip": "application/zip", ".gz": "application/gzip",
	".tar": "application/x-tar", ".7z": "application/x-7z-compressed", ".apk": "application/vnd.android.package-archive",
}

// Of is a file's content type by its name's extension.
func Of(name string) string {
	ext := strings.ToLower(path.Ext(name))
	if t, ok := types[ext]; ok {
		return t
	}
	if t := mime.TypeByExtension(ext); t != "" {
		return t
	}
	return "application/octet-stream"
}

// Previewable reports whether a file named name is of a kind that gets a
// preview (package preview makes them: JPEG, PNG, GIF, WebP).
func Previewable(name string) bool {
	switch strings.ToLower(path.Ext(name)) {
	case ".jpg", ".jpeg", ".jpe", ".png", ".gif", ".webp":
		return true
	}
	return false
}
