package session

// ContextWindow returns the input limit of the session's model, in tokens.
func (l *Live) ContextWindow() int { return l.sess.client.ContextWindow() }

// ContextUsed returns how much of the context window the session's conversation fills,
// in tokens: the prompt tokens of its last model request, as the model counted them
// (estimated for a resumed session until its first request). Call it while the session
// answers no prompt, for example after Prompt returns.
func (l *Live) ContextUsed() int { return l.sess.lastPrompt }
