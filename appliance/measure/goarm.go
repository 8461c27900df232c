package measure

import "runtime/debug"

// goarm returns "v7" (etc.) for a 32-bit ARM build, from the build settings.
func goarm() string {
	if bi, ok := debug.ReadBuildInfo(); ok {
		for _, s := range bi.Settings {
			if s.Key == "GOARM" && s.Value != "" {
				return "v" + s.Value
			}
		}
	}
	return ""
}
