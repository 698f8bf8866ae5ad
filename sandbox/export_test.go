package sandbox

import "errors"

// DockerAPI is the Docker backend's engine client interface, for tests that
// wrap the real engine to inject faults: embed it and override the calls to
// fail.
type DockerAPI = dockerAPI

// WithDockerAPI makes the client's Docker backend use api instead of
// dialling an engine.
func WithDockerAPI(api DockerAPI) Option {
	return func(c *config) error {
		if api == nil {
			return errors.New("WithDockerAPI: nil api")
		}
		c.docker.api = api
		return nil
	}
}

// EngineOf returns the Docker engine client of c's backend, to wrap.
func EngineOf(c *Client) DockerAPI { return c.b.(*dockerBackend).api }

// AgentBase is the directory that holds the exec agents' socket directories.
var AgentBase = agentBase
