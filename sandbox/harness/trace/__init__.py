"""The kernel trace: `capture` wraps interpret mode's callbacks, `records` describes each call,
`timeline` shapes the records into the protocol's `Trace`, `regions` parses indexed regions."""
