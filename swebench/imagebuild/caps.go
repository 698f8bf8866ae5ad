package imagebuild

// CapAdd is the capabilities v4.1.0's harness adds to the container of a
// row of repo at version (the spec's docker_specs run_args cap_add:
// SYS_ADMIN for Chart.js, whose browser tests need Chrome's sandbox), or
// nil. It needs no planner: it reads the table alone.
func CapAdd(repo, version string) []string {
	bs, ok := specsV410[repo][version]
	if !ok {
		return nil
	}
	return bs.capAdd()
}

func (bs buildSpec) capAdd() []string {
	var caps []string
	if ra, ok := bs.dockerSpecs.lookup("run_args"); ok {
		if d, ok := ra.(pyDict); ok {
			if list, ok := d.lookup("cap_add"); ok {
				for _, c := range list.([]any) {
					caps = append(caps, c.(string))
				}
			}
		}
	}
	return caps
}
