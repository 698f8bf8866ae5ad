// Package repo materialises a repository at a commit for evaluation: the
// files, byte for byte what `git archive <commit>` gives, and a small .git
// that knows the commit, so that the git steps of a SWE-bench eval script
// (git status, git show, git diff <base>, git checkout <base> -- files,
// git apply, git clean) work in the workspace.
//
// # Where repositories come from
//
// A [Cache] looks for "owner/name" first in its local sources (see
// [WithLocalSources]): directories holding owner/name, owner/name.git,
// owner__name or owner__name.git repositories, bare or not. They are read
// in place and never written, so partial clones (--filter=blob:none) work
// as long as they hold the blobs of the commits asked for; nothing needs
// the network. Otherwise the repository is cloned once into a bare mirror
// under the cache directory (see [WithCacheDir], [WithRemote]) and fetched
// when a commit is missing. Clones and fetches take a per-repository lock,
// in the process and through a lock file, so concurrent checkouts and
// several processes can share one cache directory.
//
// # The workspace
//
// [Cache.Checkout] writes regular files with their exact bytes and 0644 or
// 0755, symlinks as symlinks (never followed while writing), submodules
// as empty directories, with no line-ending conversion or filters. Tree
// paths with "..", "/" or a .git component are refused ([ErrUnsafePath]).
//
// Dir/.git has HEAD detached at the commit, an index holding the stat data
// of the files written (git status is clean at once), and no objects of its
// own: objects/info/alternates names the source's objects directory. A
// container that runs git in the workspace must see that directory at the
// same path: bind-mount every [CheckoutResult.ObjectsDirs] entry read-only.
// With [CheckoutRequest.SelfContained], Dir/.git instead holds a pack of
// the commit's objects (and what `git show` needs of its parent), for
// Docker engines that cannot mount host paths. [CheckoutRequest.Owner]
// hands the workspace to the user a sandbox runs as.
//
// A partial-clone source has only the blobs it fetched: git commands in
// the workspace that need others (`git show` of the commit's own diff, if
// the parent's blobs were never fetched) fail there, as the workspace has
// no promisor remote to fetch them from. The eval script's other steps
// need only the commit's own tree.
//
// # Usage
//
//	cache, err := repo.New(
//		repo.WithLocalSources("/data/repos"), // owner__name.git clones
//		repo.WithLogger(logger),
//	)
//	if err != nil {
//		return err
//	}
//	res, err := cache.Checkout(ctx, repo.CheckoutRequest{
//		Repo:   "psf/requests",
//		Commit: "0192aac24123735b3eaf9b08df46429bb770c283",
//		Dir:    "/work/requests__requests-2317",
//	})
//	if err != nil {
//		return err
//	}
//	// Mount res.Dir read-write at /testbed and each of res.ObjectsDirs
//	// read-only at its own path.
//	fmt.Println(res.Files, "files from", res.Source)
package repo
