//go:build !unix

package sandbox

// engineUser: without Unix sockets the engine's user is not known.
func engineUser(string) int { return -1 }

// pidMax: unknown.
func pidMax() int64 { return 0 }
