package checkpoint

import "context"

type recorderKey struct{}

// WithRecorder returns ctx carrying r: the commands a tool call runs with it are
// recorded by r.
func WithRecorder(ctx context.Context, r *Recorder) context.Context {
	return context.WithValue(ctx, recorderKey{}, r)
}

// RecorderFrom returns the Recorder ctx carries, or nil.
func RecorderFrom(ctx context.Context) *Recorder {
	r, _ := ctx.Value(recorderKey{}).(*Recorder)
	return r
}
