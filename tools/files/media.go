package files

import (
	"path/filepath"
	"strings"
)

// mediaByExt maps the extensions of the non-text files handed to the model as inline
// data (images, audio, PDF) to their MIME types. SVG is not here: it is text.
var mediaByExt = map[string]string{
	".png":  "image/png",
	".jpg":  "image/jpeg",
	".jpeg": "image/jpeg",
	".gif":  "image/gif",
	".webp": "image/webp",
	".bmp":  "image/bmp",
	".pdf":  "application/pdf",
	".mp3":  "audio/mpeg",
	".wav":  "audio/wav",
	".aiff": "audio/aiff",
	".aif":  "audio/aiff",
	".aac":  "audio/aac",
	".ogg":  "audio/ogg",
	".flac": "audio/flac",
}

// mediaExt returns the MIME type that path's extension promises, or "".
func mediaExt(path string) string {
	return mediaByExt[strings.ToLower(filepath.Ext(path))]
}

// sniffMedia returns the MIME type of data when its leading bytes are those of an image,
// audio or PDF format the model accepts, else "". It trusts content over file names:
// a PNG saved as logo.jpg is image/png.
func sniffMedia(data []byte) string {
	has := func(off int, magic string) bool {
		return len(data) >= off+len(magic) && string(data[off:off+len(magic)]) == magic
	}
	switch {
	case has(0, "\x89PNG\r\n\x1a\n"):
		return "image/png"
	case has(0, "\xFF\xD8\xFF"):
		return "image/jpeg"
	case has(0, "GIF87a"), has(0, "GIF89a"):
		return "image/gif"
	case has(0, "RIFF") && has(8, "WEBP"):
		return "image/webp"
	case has(0, "RIFF") && has(8, "WAVE"):
		return "audio/wav"
	case has(0, "BM") && len(data) >= 26:
		return "image/bmp"
	case has(0, "%PDF-"):
		return "application/pdf"
	case has(0, "FORM") && (has(8, "AIFF") || has(8, "AIFC")):
		return "audio/aiff"
	case has(0, "OggS"):
		return "audio/ogg"
	case has(0, "fLaC"):
		return "audio/flac"
	case has(0, "ID3"):
		return "audio/mpeg"
	case len(data) >= 7 && data[0] == 0xFF && data[1]&0xF6 == 0xF0 && (data[2]>>2)&0xF < 13:
		// An ADTS frame header: sync bits, MPEG layer 0, a valid sampling rate.
		return "audio/aac"
	case isMPEGAudioFrame(data):
		return "audio/mpeg" // MP3 without ID3 tags
	}
	return ""
}

// isMPEGAudioFrame reports whether data starts with a plausible MPEG audio frame
// header: the sync bits, layer II or III, and bitrate and sampling-rate fields that are
// not the reserved values. The checks keep UTF-16 byte-order marks (FF FE, which would
// be layer I) and stray bytes from passing for audio.
func isMPEGAudioFrame(data []byte) bool {
	if len(data) < 4 || data[0] != 0xFF || data[1]&0xE0 != 0xE0 {
		return false
	}
	version, layer := (data[1]>>3)&3, (data[1]>>1)&3
	bitrate, rate := data[2]>>4, (data[2]>>2)&3
	return version != 1 && (layer == 1 || layer == 2) && bitrate != 0 && bitrate != 0xF && rate != 3
}

// mediaKind names the family of a media MIME type for messages.
func mediaKind(mime string) string {
	switch {
	case strings.HasPrefix(mime, "image/"):
		return "image"
	case strings.HasPrefix(mime, "audio/"):
		return "audio"
	case mime == "application/pdf":
		return "PDF"
	}
	return "binary"
}
