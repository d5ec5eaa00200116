package redact

import (
	"context"
	"fmt"
	"log/slog"
)

// NewHandler returns a slog.Handler that masks, as Text does, the secrets of URLs in
// the message and the attributes of each record before h handles it. It is for loggers
// handed to code that logs URLs and errors quoting them where the caller cannot redact
// each call, such as a third-party SDK.
func NewHandler(h slog.Handler) slog.Handler {
	if _, ok := h.(handler); ok {
		return h
	}
	return handler{h}
}

type handler struct {
	inner slog.Handler
}

func (h handler) Enabled(ctx context.Context, level slog.Level) bool {
	return h.inner.Enabled(ctx, level)
}

func (h handler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, Text(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(attr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

func (h handler) WithAttrs(attrs []slog.Attr) slog.Handler {
	out := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		out[i] = attr(a)
	}
	return handler{h.inner.WithAttrs(out)}
}

func (h handler) WithGroup(name string) slog.Handler {
	return handler{h.inner.WithGroup(name)}
}

// attr returns a with the secrets of its value masked. Values other than strings,
// errors, Stringers and byte slices are kept as they are unless their text holds a
// secret, which would then be printed: they are replaced by their masked text.
func attr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, Text(v.String()))
	case slog.KindGroup:
		group := v.Group()
		out := make([]slog.Attr, len(group))
		for i, g := range group {
			out[i] = attr(g)
		}
		return slog.Attr{Key: a.Key, Value: slog.GroupValue(out...)}
	case slog.KindAny:
		// fmt, not Error or String, so that a nil pointer's method cannot panic here.
		switch x := v.Any().(type) {
		case error, fmt.Stringer:
			return slog.String(a.Key, Text(fmt.Sprint(x)))
		case []byte:
			return slog.String(a.Key, Text(string(x)))
		default:
			s := fmt.Sprintf("%+v", x)
			if masked := Text(s); masked != s {
				return slog.String(a.Key, masked)
			}
		}
	}
	return slog.Attr{Key: a.Key, Value: v}
}
