package repo

import "errors"

var (
	// ErrRepoNotFound: the repository is in no local source and could not
	// be cloned from the remote (or the remote is disabled).
	ErrRepoNotFound = errors.New("repository not found")
	// ErrCommitNotFound: the repository was found but does not contain the
	// commit, even after a fetch.
	ErrCommitNotFound = errors.New("commit not found")
	// ErrObjectMissing: a tree or blob of the commit is absent, typically
	// from a partial clone that never fetched it.
	ErrObjectMissing = errors.New("object missing")
	// ErrDirNotEmpty: the checkout destination exists and is not empty.
	ErrDirNotEmpty = errors.New("destination not empty")
	// ErrUnsafePath: the tree holds a path that is absolute, climbs with
	// "..", or names a .git component.
	ErrUnsafePath = errors.New("unsafe path in tree")
	// ErrBadRequest: the request is malformed (repository name, commit).
	ErrBadRequest = errors.New("bad checkout request")
)
