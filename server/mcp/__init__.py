"""The MCP server (`/mcp`, streamable HTTP, the official `mcp` SDK): the playground's operations as tools
for kernel-writing agents.

Every tool is an existing operation reached the way its HTTP route reaches it: the same wire type as
input schema (`RunRequest`, `SweepRequest`, …), the same request checks (`server.submit`), the same
queue with its fairness and limits (`server.queue.interface`; in-process or Redis + workers), the
same sandbox. An MCP call is counted against the caller's network address like an API call, and
also takes a token from the MCP server's own rate bucket (`PLAYGROUND_MCP_CALLS_*`). A long run
reports MCP progress notifications from its events and is cancelled in the queue when the client
cancels the call. `PLAYGROUND_MCP=false` leaves `/mcp` unserved (404).

- `tools`: the tool table (name, input wire type, handler) and the handlers.
- `follow`: a run or a sweep followed to its end, as progress; cancellation reaches the queue.
- `digest`: a RunResult as an agent reads it (the verdict, the translated error, timings, memory,
  the estimate, the lowering per chip) beside the CLI's text report.
- `endpoint`: the low-level MCP server, the rate limit, refusals as tool errors, the `/mcp` route.
"""
