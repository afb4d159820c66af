package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/leasehold/leasehold/server"
)

// Environment defaults of the commands that talk to a running
// `leasehold serve`.
const (
	modeServerEnv = "LEASEHOLD_SERVER" // base URL; default http://127.0.0.1:7460
	modeTokenEnv  = "LEASEHOLD_TOKEN"  // bearer token (an admin token for `mode`)
)

// runMode is `leasehold mode get|set`: read or switch the heartbeat mode
// of a running server's in-process workers through its admin API.
//
//	leasehold mode get [--json]
//	leasehold mode set <sync|dark|writebehind> (--worker NAME | --all)
func runMode(ctx context.Context, args []string, out io.Writer) error {
	const usage = "usage: leasehold mode get [--json] | leasehold mode set <sync|dark|writebehind> (--worker NAME | --all) [--server URL] [--token T]"
	if len(args) > 0 && (args[0] == "-h" || args[0] == "--help" || args[0] == "help") {
		fmt.Fprintln(out, usage) // asked for: the answer, exit 0
		return flag.ErrHelp
	}
	if len(args) == 0 || (args[0] != "get" && args[0] != "set") {
		return errors.New(usage)
	}
	fs := newFlagSet("mode "+args[0], out)
	base := fs.String("server", modeEnvOr(modeServerEnv, "http://"+defaultListen), "the server's base URL (default $"+modeServerEnv+")")
	token := fs.String("token", os.Getenv(modeTokenEnv), "an admin bearer token (default $"+modeTokenEnv+")")
	asJSON := fs.Bool("json", false, "print the answer as JSON")
	worker := fs.String("worker", "", "set: the worker to switch")
	all := fs.Bool("all", false, "set: switch every worker")
	pos, err := parseModeArgs(fs, args[1:])
	if err != nil {
		return err
	}
	var list server.ModeList
	switch args[0] {
	case "get":
		if len(pos) != 0 {
			return fmt.Errorf("mode get takes no arguments, got %q", pos)
		}
		err = modeAPICall(ctx, http.MethodGet, *base, "/v1/admin/mode", *token, nil, &list)
	case "set":
		if len(pos) != 1 {
			return errors.New("mode set needs one mode: sync, dark or writebehind")
		}
		if *all == (*worker != "") {
			return errors.New("mode set needs --worker NAME or --all (not both)")
		}
		err = modeAPICall(ctx, http.MethodPost, *base, "/v1/admin/mode", *token,
			server.ModeRequest{Mode: pos[0], Worker: *worker, All: *all}, &list)
	}
	if err != nil {
		return err
	}
	if *asJSON {
		enc := json.NewEncoder(out)
		enc.SetIndent("", "  ")
		return enc.Encode(list)
	}
	tw := tabwriter.NewWriter(out, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "WORKER\tMODE\tPREVIOUS")
	for _, w := range list.Workers {
		fmt.Fprintf(tw, "%s\t%s\t%s\n", w.Worker, w.Mode, w.Previous)
	}
	return tw.Flush()
}

// parseModeArgs parses fs over args with flags allowed after the
// positional arguments too (`mode set dark --all`), returning those.
func parseModeArgs(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			return nil, err
		}
		if fs.NArg() == 0 {
			return pos, nil
		}
		pos = append(pos, fs.Arg(0))
		args = fs.Args()[1:]
	}
}

func modeEnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}

// modeAPICall sends one JSON request to the server and decodes a 2xx answer
// into out; any other answer is an error quoting its problem document.
func modeAPICall(ctx context.Context, method, base, path, token string, in, out any) error {
	var body io.Reader
	if in != nil {
		b, err := json.Marshal(in)
		if err != nil {
			return err
		}
		body = bytes.NewReader(b)
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, method, strings.TrimRight(base, "/")+path, body)
	if err != nil {
		return err
	}
	if in != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(io.LimitReader(resp.Body, 1<<20))
	if err != nil {
		return err
	}
	if resp.StatusCode/100 != 2 {
		var p struct{ Title, Detail string }
		if json.Unmarshal(b, &p) == nil && p.Title != "" {
			return fmt.Errorf("%s %s: %s: %s", method, path, p.Title, p.Detail)
		}
		return fmt.Errorf("%s %s: %s", method, path, resp.Status)
	}
	return json.Unmarshal(b, out)
}
