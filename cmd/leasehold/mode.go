package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"text/tabwriter"

	"github.com/spf13/cobra"
	flag "github.com/spf13/pflag"

	"github.com/leasehold/leasehold/server"
)

// Environment defaults of the commands that talk to a running
// `leasehold serve`.
const (
	modeServerEnv = "LEASEHOLD_SERVER" // base URL; default http://127.0.0.1:7460
	modeTokenEnv  = "LEASEHOLD_TOKEN"  // bearer token (an admin token for `mode`)
)

// modeCommand is `leasehold mode get|set`: read or switch the heartbeat
// mode of a running server's in-process workers through its admin API.
//
//	leasehold mode get [--json]
//	leasehold mode set <sync|dark|writebehind> (--worker NAME | --all)
func modeCommand(a *app) *cobra.Command {
	return a.group("mode", "heartbeat mode of a running server's workers: get, set <sync|dark|writebehind> --worker NAME|--all",
		a.command("get", "the mode of every in-process worker of the server", noArgs, runModeGet),
		a.command("set MODE", "switch --worker NAME or --all to MODE: sync, dark or writebehind", oneArg("MODE (sync, dark or writebehind)"), runModeSet))
}

// serverFlags adds --server and --token, the running server a command
// talks to, and returns its client.
func serverFlags(fs *flag.FlagSet) func() *apiClient {
	base := fs.String("server", modeEnvOr(modeServerEnv, "http://"+defaultListen), "the server's base URL (default $"+modeServerEnv+")")
	token := fs.String("token", os.Getenv(modeTokenEnv), "an admin bearer token (default $"+modeTokenEnv+")")
	return func() *apiClient { return &apiClient{base: *base, token: *token} }
}

// runModeGet is `mode get`: GET /v1/admin/mode.
func runModeGet(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	api := serverFlags(fs)
	asJSON := jsonFlag(fs)
	cmd.RunE = a.action(func(ctx context.Context, _ []string, out io.Writer) error {
		var list server.ModeList
		if err := api().call(ctx, http.MethodGet, "/v1/admin/mode", nil, &list); err != nil {
			return err
		}
		return printModes(out, list, *asJSON)
	})
}

// runModeSet is `mode set MODE`: POST /v1/admin/mode for one worker or all.
func runModeSet(a *app, cmd *cobra.Command) {
	fs := cmd.Flags()
	api := serverFlags(fs)
	asJSON := jsonFlag(fs)
	worker := fs.String("worker", "", "the worker to switch")
	all := fs.Bool("all", false, "switch every worker")
	cmd.RunE = a.action(func(ctx context.Context, args []string, out io.Writer) error {
		if *all == (*worker != "") {
			return usagef("mode set needs --worker NAME or --all (not both)")
		}
		var list server.ModeList
		if err := api().call(ctx, http.MethodPost, "/v1/admin/mode",
			server.ModeRequest{Mode: args[0], Worker: *worker, All: *all}, &list); err != nil {
			return err
		}
		return printModes(out, list, *asJSON)
	})
}

// printModes prints the workers' modes as a table, or as JSON.
func printModes(out io.Writer, list server.ModeList, asJSON bool) error {
	if asJSON {
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

func modeEnvOr(name, def string) string {
	if v := os.Getenv(name); v != "" {
		return v
	}
	return def
}
