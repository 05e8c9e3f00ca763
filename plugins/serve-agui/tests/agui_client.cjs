// One run through the official AG-UI client (@ag-ui/client's HttpAgent) against a served agent:
// node agui_client.cjs URL THREAD RUN TEXT. Prints one JSON line: the event types in order, the
// streamed text, the tool calls (name, args, result) and the thread's messages after the run.
const { HttpAgent } = require("@ag-ui/client");

async function main() {
  const [url, threadId, runId, text] = process.argv.slice(2);
  const agent = new HttpAgent({ url, threadId });
  agent.messages = [{ id: `u-${runId}`, role: "user", content: text }];
  const types = [];
  let said = "";
  const calls = {};
  await agent.runAgent(
    { runId },
    {
      onEvent: ({ event }) => types.push(event.type),
      onTextMessageContentEvent: ({ event }) => {
        said += event.delta;
      },
      onToolCallEndEvent: ({ toolCallName, toolCallArgs }) => {
        calls[toolCallName] = { args: toolCallArgs };
      },
      onToolCallResultEvent: ({ event }) => {
        const named = Object.values(calls).find((c) => c.result === undefined);
        if (named) named.result = event.content;
      },
    },
  );
  console.log(JSON.stringify({ types, said, calls, messages: agent.messages }));
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
