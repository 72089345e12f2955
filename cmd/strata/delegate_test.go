package main

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
)

func TestFindServerProgram(t *testing.T) {
	// bin/strata and bin/strata-server; link/strata is a link to bin/strata;
	// lone/strata has nothing beside it.
	root := t.TempDir()
	for _, dir := range []string{"bin", "link", "lone", "path"} {
		if err := os.Mkdir(filepath.Join(root, dir), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, f := range []string{"bin/strata", "bin/strata-server", "lone/strata", "path/strata-server"} {
		if err := os.WriteFile(filepath.Join(root, f), nil, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Symlink(filepath.Join(root, "bin/strata"), filepath.Join(root, "link/strata")); err != nil {
		t.Skip(err)
	}
	onPath := func(string) (string, error) { return filepath.Join(root, "path/strata-server"), nil }
	notOnPath := func(name string) (string, error) {
		return "", &exec.Error{Name: name, Err: exec.ErrNotFound}
	}
	brokenPath := func(name string) (string, error) { return "", &exec.Error{Name: name, Err: os.ErrPermission} }
	hint := `; build it beside strata with "go build -o DIR ./cmd/..." in a strata checkout (DIR holding strata), or install both with "go install github.com/stratadev/strata/cmd/...@latest"`
	tests := []struct {
		name     string
		exe      string
		exeErr   error
		lookPath func(string) (string, error)
		want     string
		wantErr  string
	}{
		{name: "beside strata", exe: "bin/strata", lookPath: onPath, want: "bin/strata-server"},
		{name: "beside the file a link leads to", exe: "link/strata", lookPath: notOnPath, want: "bin/strata-server"},
		{name: "on PATH", exe: "lone/strata", lookPath: onPath, want: "path/strata-server"},
		{name: "nowhere", exe: "lone/strata", lookPath: notOnPath,
			wantErr: "strata-server is not installed: no strata-server in " + filepath.Join(root, "lone") + " (beside strata) nor on $PATH" + hint},
		{name: "executable unknown", exeErr: errors.New("no /proc"), lookPath: notOnPath,
			wantErr: "strata-server is not installed: no strata-server on $PATH" + hint},
		{name: "PATH search fails", exe: "lone/strata", lookPath: brokenPath,
			wantErr: `looking for strata-server on $PATH: exec: "strata-server": permission denied`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			exe := ""
			if tt.exe != "" {
				exe = filepath.Join(root, tt.exe)
			}
			got, err := findServerProgram(exe, tt.exeErr, tt.lookPath)
			gotErr := ""
			if err != nil {
				gotErr = err.Error()
			}
			want := ""
			if tt.want != "" {
				want = filepath.Join(root, tt.want)
			}
			if got != want || gotErr != tt.wantErr {
				t.Errorf("got %q, error %q; want %q, error %q", got, gotErr, want, tt.wantErr)
			}
		})
	}
}
