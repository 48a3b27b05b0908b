package mcpx

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"
)

// reporter tells the client how a call advances: progress notifications
// when the request carried a progress token, and log messages at or above
// the level the client set (go-sdk sends none until a level is set, except
// to a stateless HTTP session before 2026-07-28, which no setLevel can
// reach: go-sdk gives it the level info, and the MCP conformance suite
// expects those messages). With neither, it costs nothing. Messages name the operation's path template,
// never argument values, so no secret or personal data goes out.
type reporter struct {
	session *mcp.ServerSession
	token   any
	log     *zap.Logger
}

func newReporter(req *mcp.CallToolRequest, log *zap.Logger) *reporter {
	if req == nil {
		return nil
	}
	return sessionReporter(req.Session, req.Params, log)
}

// newReadReporter is newReporter for a resources/read, which makes the
// same call as the tool and reports it alike.
func newReadReporter(req *mcp.ReadResourceRequest, log *zap.Logger) *reporter {
	if req == nil {
		return nil
	}
	return sessionReporter(req.Session, req.Params, log)
}

// sessionReporter reports to session, under the progress token of params
// (a nil pointer has none).
func sessionReporter[P interface {
	*mcp.CallToolParamsRaw | *mcp.ReadResourceParams
	GetProgressToken() any
}](session *mcp.ServerSession, params P, log *zap.Logger) *reporter {
	if session == nil {
		return nil
	}
	r := &reporter{session: session, log: log}
	if params != nil {
		r.token = params.GetProgressToken()
	}
	return r
}

// Step reports step n of total.
func (r *reporter) Step(ctx context.Context, n, total int, msg string) {
	if r.token != nil {
		if err := r.session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
			ProgressToken: r.token, Progress: float64(n), Total: float64(total), Message: msg,
		}); err != nil {
			r.log.Debug("progress notification not sent", zap.Error(err))
		}
	}
	if err := r.session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "mcpbridge", Data: msg}); err != nil {
		r.log.Debug("log notification not sent", zap.Error(err))
	}
}
