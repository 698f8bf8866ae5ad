package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/swebox/swebox/sandbox"
	"github.com/swebox/swebox/swebench"
	"github.com/swebox/swebox/swebench/dataset"
	"github.com/swebox/swebox/swebench/family"
	"github.com/swebox/swebox/swebench/repo"
)

// splitRowDockerfiles separates the rows that carry their own Dockerfile
// (SWE-PolyBench's), whose image eval images build builds from it, from
// the others, built as upstream's tables say.
func splitRowDockerfiles(all []dataset.Instance) (rows, others []dataset.Instance) {
	for _, inst := range all {
		if _, ok := family.PolyBenchDockerfile(inst); ok {
			rows = append(rows, inst)
		} else {
			others = append(others, inst)
		}
	}
	return rows, others
}

// rowLogDir is where the builds of rows' own Dockerfiles leave their files.
func rowLogDir(o imagesOptions) string {
	return filepath.Join(o.dir, "logs", "build_images", "rows")
}

// writeRowDockerfiles is --dry_run for rows that carry their own
// Dockerfile: it is written to <dir>/logs/build_images/rows/<id>/Dockerfile.
func writeRowDockerfiles(o imagesOptions, rows []dataset.Instance, stdout, stderr io.Writer) error {
	for _, inst := range rows {
		df, _ := family.PolyBenchDockerfile(inst)
		safe, err := dataset.SafePathComponent(dataset.KindInstanceID, inst.InstanceID)
		if err != nil {
			return err
		}
		dir := filepath.Join(rowLogDir(o), safe)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(dir, "Dockerfile"), []byte(df), 0o644); err != nil {
			return err
		}
		fmt.Fprintln(stdout, dir)
	}
	if len(rows) > 0 {
		fmt.Fprintf(stderr, "wrote the Dockerfiles of %d rows that carry their own (dry run, nothing built)\n", len(rows))
	}
	return nil
}

// buildRowImages builds the images of rows that carry their own
// Dockerfile over a checkout of their repository (--repos first, then
// GitHub), named as eval names them (the family's namespace,
// --instance_image_tag) and as the family's harness does, printing
// "<id>\t<image>" or "<id>\timage_build_failed\t<error>" per row.
func buildRowImages(ctx context.Context, c *sandbox.Client, o imagesOptions, rows []dataset.Instance, stdout, stderr io.Writer) error {
	if len(rows) == 0 {
		return nil
	}
	opts := []repo.Option{}
	if len(o.repos) > 0 {
		opts = append(opts, repo.WithLocalSources(o.repos...))
	}
	repos, err := repo.New(opts...)
	if err != nil {
		return err
	}
	res, err := swebench.BuildRowImages(ctx, c, swebench.RowImageRequest{
		Instances: rows, Repos: repos, Tag: o.instanceTag, LogDir: rowLogDir(o),
		Progress: func(e swebench.RowImageEvent) {
			if e.Err != nil {
				fmt.Fprintf(stderr, "%-9s %s: FAILED after %s: %v\n", "row", e.InstanceID, e.Duration.Round(100*time.Millisecond), e.Err)
				return
			}
			fmt.Fprintf(stderr, "%-9s %s: built in %s (%s)\n", "row", strings.Join(e.Images, ", "), e.Duration.Round(100*time.Millisecond), e.InstanceID)
		},
	})
	failed := 0
	for _, inst := range rows {
		if imgs, ok := res.Images[inst.InstanceID]; ok {
			fmt.Fprintf(stdout, "%s\t%s\n", inst.InstanceID, imgs[0])
		} else if e := res.Errs[inst.InstanceID]; e != nil {
			failed++
			fmt.Fprintf(stdout, "%s\timage_build_failed\t%v\n", inst.InstanceID, e)
		}
	}
	if err != nil {
		return err
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d rows' own Dockerfiles did not build (see above)", failed, len(rows))
	}
	return nil
}
