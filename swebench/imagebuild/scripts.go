package imagebuild

import (
	"context"
	"fmt"
	"strings"

	"github.com/swebox/swebox/swebench/dataset"
)

const envHeredoc = "EOF_59812759871"

// heredoc writes text to path with upstream's quoted heredoc.
func heredoc(text, path string) string {
	return "cat <<'" + envHeredoc + "' > " + path + "\n" + text + "\n" + envHeredoc
}

// envCommit is the commit upstream reads dependency files at:
// environment_setup_commit, or base_commit for rows without one.
func envCommit(inst dataset.Instance) string {
	if inst.EnvironmentSetupCommit != "" {
		return inst.EnvironmentSetupCommit
	}
	return inst.BaseCommit
}

// envScriptPy is make_env_script_list_py.
func (p *Planner) envScriptPy(ctx context.Context, inst dataset.Instance, bs buildSpec) ([]string, error) {
	yml, ok, err := cachedEnvironmentYML(inst.InstanceID)
	if err != nil {
		return nil, err
	}
	if ok {
		return []string{
			"source /opt/miniconda3/bin/activate",
			heredoc(yml, "/root/environment.yml"),
			"conda env create -f /root/environment.yml",
			"conda activate " + envName,
		}, nil
	}
	needPython := func() error {
		if bs.python == "" {
			return fmt.Errorf("%s %s: the official spec has no python version (upstream raises KeyError)", inst.Repo, inst.Version)
		}
		return nil
	}
	cmds := []string{"source /opt/miniconda3/bin/activate"}
	commit := envCommit(inst)
	switch bs.packages {
	case "requirements.txt":
		if err := needPython(); err != nil {
			return nil, err
		}
		cmds = append(cmds, "conda create -n "+envName+" python="+bs.python+" -y")
		reqs, err := p.once("reqs\x00"+inst.Repo+"\x00"+commit, func() (string, error) {
			return requirementsByCommit(ctx, p.files, inst.Repo, commit)
		})
		if err != nil {
			return nil, err
		}
		const reqsPath = "$HOME/requirements.txt"
		cmds = append(cmds,
			heredoc(cleanRequirements(reqs), reqsPath),
			"conda activate "+envName+" && python -m pip install -r "+reqsPath,
			"rm "+reqsPath)
	case "environment.yml":
		yml, err := p.once("yml\x00"+inst.Repo+"\x00"+commit, func() (string, error) {
			return environmentYMLByCommit(ctx, p.files, inst.Repo, commit, envName)
		})
		if err != nil {
			return nil, err
		}
		const ymlPath = "environment.yml"
		cmds = append(cmds, heredoc(cleanEnvironmentYML(yml), ymlPath))
		if err := needPython(); err != nil {
			return nil, err
		}
		if bs.noUseEnv {
			cmds = append(cmds,
				"conda create -c conda-forge -n "+envName+" python="+bs.python+" -y",
				"conda env update -f "+ymlPath)
		} else {
			cmds = append(cmds,
				"conda env create --file "+ymlPath,
				"conda activate "+envName+" && conda install python="+bs.python+" -y")
		}
		cmds = append(cmds, "rm "+ymlPath)
	default:
		if err := needPython(); err != nil {
			return nil, err
		}
		cmds = append(cmds, "conda create -n "+envName+" python="+bs.python+" "+bs.packages+" -y")
	}
	cmds = append(cmds, "conda activate "+envName)
	if bs.pipPackages != nil {
		cmds = append(cmds, "python -m pip install "+strings.Join(bs.pipPackages, " "))
	}
	return cmds, nil
}

// repoScriptPy is make_repo_script_list_py.
func repoScriptPy(inst dataset.Instance, bs buildSpec) []string {
	branch := ""
	if b := branchV410[inst.Repo][inst.BaseCommit]; b != "" {
		branch = "--branch " + b
	}
	cmds := []string{
		"git clone -o origin " + branch + " --single-branch https://github.com/" + inst.Repo + " " + repoDirectory,
		"chmod -R 777 " + repoDirectory,
		"cd " + repoDirectory,
		"git reset --hard " + inst.BaseCommit,
		"git remote remove origin",
		"TARGET_TIMESTAMP=$(git show -s --format=%ci " + inst.BaseCommit + ")",
		`git tag -l | while read tag; do TAG_COMMIT=$(git rev-list -n 1 "$tag"); TAG_TIME=$(git show -s --format=%ci "$TAG_COMMIT"); if [[ "$TAG_TIME" > "$TARGET_TIMESTAMP" ]]; then git tag -d "$tag"; fi; done`,
		"git reflog expire --expire=now --all",
		"git gc --prune=now --aggressive",
		`AFTER_TIMESTAMP=$(date -d "$TARGET_TIMESTAMP + 1 second" '+%Y-%m-%d %H:%M:%S')`,
		`COMMIT_COUNT=$(git log --oneline --all --since="$AFTER_TIMESTAMP" | wc -l)`,
		`[ "$COMMIT_COUNT" -eq 0 ] || exit 1`,
		"source /opt/miniconda3/bin/activate",
		"conda activate " + envName,
		`echo "Current environment: $CONDA_DEFAULT_ENV"`,
	}
	cmds = append(cmds, bs.preInstall...)
	cmds = append(cmds, bs.install...)
	return append(cmds,
		"git config --global user.email setup@swebench.config",
		"git config --global user.name SWE-bench",
		"git commit --allow-empty -am SWE-bench")
}

// repoScriptCommon is make_repo_script_list_common.
func repoScriptCommon(inst dataset.Instance, bs buildSpec) []string {
	cmds := []string{
		"git clone -o origin https://github.com/" + inst.Repo + " " + repoDirectory,
		"chmod -R 777 " + repoDirectory,
		"cd " + repoDirectory,
		"git reset --hard " + inst.BaseCommit,
		"git remote remove origin",
	}
	cmds = append(cmds, bs.preInstall...)
	cmds = append(cmds, bs.install...)
	return append(cmds, bs.build...)
}

// envScriptCommon is make_env_script_list_common.
func envScriptCommon(bs buildSpec) []string {
	if bs.aptPkgs == nil {
		return []string{}
	}
	return []string{"apt-get update", "apt-get install -y " + strings.Join(bs.aptPkgs, " ")}
}
