package edge

import "strings"

// MaxPathLen is the longest URL path the edge maps to a file; longer ones are not found.
const MaxPathLen = 2048

// ResolvePath maps a request's decoded URL path (r.URL.Path) to a key of files, a
// deployment's map of path → SHA-256: "/" and "/dir/" to "index.html" and
// "dir/index.html"; "/about" to "about", then "about.html", then "about/index.html".
// It returns the key and its hash, or ok false.
//
// It only ever returns a key of files, and rejects rather than cleans anything a file
// system would interpret: "." and ".." segments (so "%2e%2e" too, once decoded), empty
// segments ("//"), backslashes, NUL and other control characters, and paths longer than
// MaxPathLen. Keys are relative paths ("index.html", "assets/app.js"), as clients send them.
func ResolvePath(urlPath string, files map[string]string) (name, hash string, ok bool) {
	if len(urlPath) > MaxPathLen || !strings.HasPrefix(urlPath, "/") {
		return "", "", false
	}
	rel := urlPath[1:]
	dir := rel == "" || rel[len(rel)-1] == '/'
	if rel != "" {
		rel = strings.TrimSuffix(rel, "/")
		if !cleanRel(rel) { // "//" leaves "": an empty segment too
			return "", "", false
		}
	}
	switch {
	case rel == "":
		return find(files, "index.html", "")
	case dir:
		return find(files, rel, "/index.html")
	}
	if name, hash, ok = find(files, rel, ""); ok {
		return name, hash, ok
	}
	if name, hash, ok = find(files, rel, ".html"); ok {
		return name, hash, ok
	}
	return find(files, rel, "/index.html")
}

// find looks a+b up in files, building the key on the stack: a map lookup of
// string(bytes) does not allocate, so only a hit on a built key costs a string.
func find(files map[string]string, a, b string) (name, hash string, ok bool) {
	if b == "" {
		hash, ok = files[a]
		if !ok {
			a = ""
		}
		return a, hash, ok
	}
	var buf [256]byte
	key := append(append(buf[:0], a...), b...)
	if hash, ok = files[string(key)]; ok {
		return string(key), hash, true
	}
	return "", "", false
}

// cleanRel reports whether rel, a slash-separated path with no leading or trailing slash,
// names a file without any segment a file system would reinterpret.
func cleanRel(rel string) bool {
	if rel == "" {
		return false
	}
	for seg := range strings.SplitSeq(rel, "/") {
		if seg == "" || seg == "." || seg == ".." {
			return false
		}
	}
	for i := 0; i < len(rel); i++ {
		if c := rel[i]; c < 0x20 || c == 0x7f || c == '\\' {
			return false
		}
	}
	return true
}
