package mcpx

import (
	"context"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"go.uber.org/zap"

	"github.com/mcpbridge/mcpbridge/transport/reqctx"
)

// reporter tells the client how a call advances: progress notifications
// when the request carried a progress token, and log messages at or above
// the level the client set (go-sdk sends none until a level is set). With
// neither, it costs nothing. Messages name the operation's path template,
// never argument values, so no secret or personal data goes out.
type reporter struct {
	session *mcp.ServerSession
	token   any
	logs    bool // the client may have asked for log messages
	log     *zap.Logger
}

func newReporter(ctx context.Context, req *mcp.CallToolRequest, log *zap.Logger) *reporter {
	if req == nil || req.Session == nil {
		return nil
	}
	r := &reporter{session: req.Session, log: log, logs: true}
	if req.Params != nil {
		r.token = req.Params.GetProgressToken()
	}
	if reqctx.Stateless(ctx) {
		// Stateless HTTP: no logging/setLevel can reach this call's
		// session (each request has its own), yet go-sdk gives such a
		// session the level "info" for revisions before 2026-07-28, which
		// would send every call's steps to a client that never asked. Only
		// a level in the request's own _meta counts here.
		r.logs = false
		if req.Params != nil {
			_, r.logs = req.Params.GetMeta()[mcp.MetaKeyLogLevel]
		}
	}
	if r.token == nil && !r.logs {
		return nil
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
	if !r.logs {
		return
	}
	if err := r.session.Log(ctx, &mcp.LoggingMessageParams{Level: "info", Logger: "mcpbridge", Data: msg}); err != nil {
		r.log.Debug("log notification not sent", zap.Error(err))
	}
}
