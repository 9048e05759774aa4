package main

import (
	"encoding/json"
	"io"

	"github.com/notebridge/notebridge/pkg/core/registry"
	"github.com/notebridge/notebridge/pkg/transport/mcpadapter"
)

type capabilities struct {
	Name             string          `json:"name"`
	Version          string          `json:"version"`
	ReadOnly         bool            `json:"read_only"`
	Transports       []transportInfo `json:"transports"`
	ProtocolVersions []string        `json:"protocol_versions"`
	Operations       []operationInfo `json:"operations"`
}

type transportInfo struct {
	Name    string `json:"name"`
	Command string `json:"command"`
	Listen  string `json:"default_listen,omitempty"`
	Path    string `json:"path,omitempty"`
	Auth    string `json:"auth"`
}

type operationInfo struct {
	Name     string               `json:"name"`
	Title    string               `json:"title"`
	Toolset  string               `json:"toolset"`
	Effect   registry.Effect      `json:"effect"`
	Exposure []registry.Transport `json:"exposure"`
}

func runCapabilities(args []string, stdout, stderr io.Writer) error {
	_, a, err := setup("capabilities", args, stderr, false, nil)
	if err != nil {
		return err
	}
	out := capabilities{
		Name:    mcpadapter.ServerName,
		Version: version,
		Transports: []transportInfo{
			{Name: "stdio", Command: "notebridge mcp stdio", Auth: "none (local process)"},
			{Name: "streamable-http", Command: "notebridge mcp serve", Listen: "127.0.0.1:8765", Path: mcpadapter.Path, Auth: "bearer token file"},
		},
		ProtocolVersions: mcpadapter.SupportedProtocolVersions(),
		ReadOnly:         a.exec.Registry().IsReadOnly(),
	}
	for _, op := range a.exec.Registry().Operations() {
		if !a.exec.Registry().Permits(op) {
			continue
		}
		out.Operations = append(out.Operations, operationInfo{
			Name: op.Name, Title: op.Title, Toolset: op.Toolset, Effect: op.Effect, Exposure: op.Exposure,
		})
	}
	enc := json.NewEncoder(stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(out)
}
