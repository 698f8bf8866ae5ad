package imagebuild_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/swebox/swebox/swebench/imagebuild"
)

// TestArchitectureByRelease: under v4 rules the planner builds x86_64
// images (linux/x86_64) and asks the host nothing; under v5 rules a task
// image is built for linux/amd64 and named x86_64 on every host, an arm64
// host included, as 5.0.2's ImageSpec default is (no caller sets another);
// asked for arm64 it is linux/arm64/v8 named arm64. The engine is asked
// for the platform the spec says.
func TestArchitectureByRelease(t *testing.T) {
	v4 := specsFor(t, row("psf/requests", "2.4", "psf__requests-1"))[0]
	assert.Equal(t, "linux/x86_64", v4.Platform)
	assert.Equal(t, "sweb.eval.x86_64.psf__requests-1:latest", v4.Instance.Name)
	assert.Contains(t, v4.Base.Dockerfile, "FROM --platform=linux/x86_64 ")

	type testCase struct {
		host, want                 string
		arch, platform, namePrefix string
	}
	for _, tc := range []testCase{
		{host: "amd64", arch: "amd64", platform: "linux/amd64", namePrefix: "sweb.eval.x86_64."},
		{host: "arm64", arch: "amd64", platform: "linux/amd64", namePrefix: "sweb.eval.x86_64."},
		{host: "arm64", want: "arm64", arch: "arm64", platform: "linux/arm64/v8", namePrefix: "sweb.eval.arm64."},
		{host: "amd64", want: "aarch64", arch: "arm64", platform: "linux/arm64/v8", namePrefix: "sweb.eval.arm64."},
		{host: "arm64", want: "x86_64", arch: "amd64", platform: "linux/amd64", namePrefix: "sweb.eval.x86_64."},
	} {
		t.Run(tc.host+" "+tc.want, func(t *testing.T) {
			arch, err := imagebuild.TaskArch(tc.host, tc.want)
			require.NoError(t, err)
			assert.Equal(t, tc.arch, arch)
			dir := t.TempDir()
			require.NoError(t, os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte("FROM base\r\nCOPY x /x\r\n"), 0o644))
			require.NoError(t, os.WriteFile(filepath.Join(dir, "x"), []byte("x"), 0o644))
			img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: "Org__Repo-1", Dockerfile: "FROM base\nCOPY x /x\n", Arch: arch, ContextDir: dir})
			require.NoError(t, err)
			assert.Equal(t, tc.platform, img.Platform)
			assert.Equal(t, tc.namePrefix+"org__repo-1:latest", img.Name)
			eng := &fakeEngine{images: map[string]bool{}, fail: map[string]bool{}, ctxs: map[string][]string{}}
			logs := t.TempDir()
			res, err := imagebuild.BuildTasks(context.Background(), eng, imagebuild.TaskBuildRequest{Images: []imagebuild.TaskImage{img}, Dir: logs})
			require.NoError(t, err)
			require.NoError(t, res.Instances[img.InstanceID].Err)
			assert.Equal(t, tc.platform, eng.platforms[img.Name], "the engine builds for the spec's platform")
			assert.Equal(t, "Dockerfile", eng.dockerfiles[img.Name], "the task's own Dockerfile (CRLF read as LF) is the one built")
			assert.ElementsMatch(t, []string{"Dockerfile", "x"}, eng.ctxs[img.Name], "the context is the task directory as it is")
			written, err := os.ReadFile(filepath.Join(logs, img.Dir, "Dockerfile"))
			require.NoError(t, err)
			assert.Equal(t, img.Dockerfile, string(written))
		})
	}
	_, err := imagebuild.TaskArch("arm64", "riscv64")
	assert.ErrorContains(t, err, `unknown architecture "riscv64"`)
}

// BuildTasks keeps existing images, rebuilds all with ForceRebuild, and a
// failed build is that instance's *BuildError naming its log.
func TestBuildTasks(t *testing.T) {
	dir := t.TempDir()
	var imgs []imagebuild.TaskImage
	for _, id := range []string{"a__b-1", "a__b-2", "a__b-3"} {
		img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: id, Dockerfile: "FROM x\n"})
		require.NoError(t, err)
		imgs = append(imgs, img)
	}
	eng := &fakeEngine{images: map[string]bool{imgs[0].Name: true}, fail: map[string]bool{imgs[2].Name: true}, ctxs: map[string][]string{}}
	res, err := imagebuild.BuildTasks(context.Background(), eng, imagebuild.TaskBuildRequest{Images: imgs, Dir: dir, MaxWorkers: 2})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{imgs[1].Name, imgs[2].Name}, eng.builds, "the existing image is kept")
	assert.Equal(t, []string{".swebox.Dockerfile"}, eng.ctxs[imgs[1].Name], "no context directory: the Dockerfile alone")
	assert.NoError(t, res.Instances["a__b-1"].Err)
	var be *imagebuild.BuildError
	require.True(t, errors.As(res.Instances["a__b-3"].Err, &be))
	assert.True(t, errors.Is(be, imagebuild.ErrImageBuildFailed))
	assert.Equal(t, filepath.Join(dir, imgs[2].Dir, imagebuild.BuildLog), be.Log)
	log, err := os.ReadFile(be.Log)
	require.NoError(t, err)
	assert.Contains(t, string(log), "with platform linux/amd64")

	eng.builds = nil
	_, err = imagebuild.BuildTasks(context.Background(), eng, imagebuild.TaskBuildRequest{Images: imgs, Dir: dir, ForceRebuild: true})
	require.NoError(t, err)
	assert.ElementsMatch(t, []string{imgs[0].Name, imgs[1].Name, imgs[2].Name}, eng.removed)
	assert.Len(t, eng.builds, 3, "every image built again")

	ctxDir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(ctxDir, ".dockerignore"), []byte("*\n"), 0o644))
	img, err := imagebuild.NewTaskImage(imagebuild.TaskImageRequest{InstanceID: "a__b-4", Dockerfile: "FROM x\n", ContextDir: ctxDir})
	require.NoError(t, err)
	res, err = imagebuild.BuildTasks(context.Background(), eng, imagebuild.TaskBuildRequest{Images: []imagebuild.TaskImage{img}, Dir: dir})
	require.NoError(t, err)
	assert.ErrorIs(t, res.Instances["a__b-4"].Err, imagebuild.ErrDockerignore)
}
