package cli

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"github.com/toolgate/toolgate/internal/engine"
)

func serveCmd() *cobra.Command {
	var pf policyFlags
	var addr, token string
	c := &cobra.Command{
		Use:   "serve",
		Short: "Run the permission server (HTTP API) on loopback",
		Long: `serve answers POST /v1/check with the same decisions as toolgate check.
Requests need the agent token as "Authorization: Bearer TOKEN"; a fresh
token is generated and printed unless --token or $TOOLGATE_AGENT_TOKEN is
given.`,
		Args: cobra.NoArgs,
		RunE: func(c *cobra.Command, _ []string) error {
			eng, err := pf.engine(c)
			if err != nil {
				return err
			}
			if token == "" {
				token = os.Getenv("TOOLGATE_AGENT_TOKEN")
			}
			if token == "" {
				b := make([]byte, 24)
				if _, err := rand.Read(b); err != nil {
					return err
				}
				token = hex.EncodeToString(b)
			}
			ln, err := net.Listen("tcp", addr)
			if err != nil {
				return err
			}
			fmt.Fprintf(c.OutOrStdout(), "toolgate listening on http://%s\nagent token: %s\n", ln.Addr(), token)
			srv := &http.Server{Handler: checkHandler(eng, token), ReadHeaderTimeout: 10 * time.Second}
			ctx, stop := signal.NotifyContext(c.Context(), syscall.SIGINT, syscall.SIGTERM)
			defer stop()
			go func() {
				<-ctx.Done()
				sctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
				defer cancel()
				_ = srv.Shutdown(sctx)
			}()
			if err := srv.Serve(ln); !errors.Is(err, http.ErrServerClosed) {
				return err
			}
			return nil
		},
	}
	pf.register(c)
	c.Flags().StringVar(&addr, "addr", "127.0.0.1:8765", "address to listen on")
	c.Flags().StringVar(&token, "token", "", "agent token (default $TOOLGATE_AGENT_TOKEN or a fresh random one)")
	return c
}

// checkHandler serves the check API.
func checkHandler(eng *engine.Engine, token string) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, "ok\n")
	})
	mux.HandleFunc("POST /v1/check", func(w http.ResponseWriter, r *http.Request) {
		got := []byte(r.Header.Get("Authorization"))
		if subtle.ConstantTimeCompare(got, []byte("Bearer "+token)) != 1 {
			httpError(w, http.StatusUnauthorized, "missing or wrong agent token")
			return
		}
		data, err := io.ReadAll(io.LimitReader(r.Body, maxRequest+1))
		if err != nil || len(data) > maxRequest {
			httpError(w, http.StatusRequestEntityTooLarge, "request too large")
			return
		}
		req, err := engine.DecodeRequest(data)
		if err != nil {
			httpError(w, http.StatusBadRequest, err.Error())
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(eng.Check(r.Context(), req))
	})
	return mux
}

func httpError(w http.ResponseWriter, code int, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]string{"error": msg})
}
