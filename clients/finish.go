package clients

// Finish reasons of a Chunk. Gemini's reasons pass through as Gemini names them (also
// "RECITATION", "MALFORMED_FUNCTION_CALL" and others); those of OpenAI-compatible
// endpoints are mapped onto these.
const (
	// FinishStop: the model ended its answer (or asked for tool calls).
	FinishStop = "STOP"
	// FinishMaxTokens: the answer hit the output limit.
	FinishMaxTokens = "MAX_TOKENS"
	// FinishSafety: the answer was withheld by a safety filter.
	FinishSafety = "SAFETY"
	// FinishBlocked starts the reason when the prompt itself was refused:
	// "BLOCKED:" and the server's block reason, e.g. "BLOCKED:PROHIBITED_CONTENT".
	FinishBlocked = "BLOCKED"
)
